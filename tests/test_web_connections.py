"""Connection hygiene and a log that cannot flood, on a real ``searchnasa serve`` (issue 18).

Idle, half-sent and surplus connections must not starve real requests: the server closes them
on time (header and body read timeouts, the keep-alive timeout) and answers connections beyond
its per-worker cap with a fast 503. When file descriptors do run out, the accept error is
written once with a count, every line stamped.
"""

from __future__ import annotations

import logging
import re
import resource
import select
import socket
import time
from pathlib import Path

import httpx
import pytest

from server_util import running_server

STAMP = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} [A-Z]+ \S+ ")
SHORT_TIMEOUTS = {"SEARCHNASA_HEADER_TIMEOUT": "2", "SEARCHNASA_BODY_TIMEOUT": "3",
                  "SEARCHNASA_KEEP_ALIVE": "2"}
HALF_HEAD = b"GET /healthz HTTP/1.1\r\nHost: x\r\n"
HALF_BODY = (b"POST /api/related HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
             b"Content-Length: 100\r\n\r\n{\"ids\": [")


def open_sockets(base_url: str, count: int, payload: bytes = b"") -> list[socket.socket]:
    port = int(base_url.rsplit(":", 1)[1])
    socks = []
    for _ in range(count):
        sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        if payload:
            sock.sendall(payload)
        socks.append(sock)
    return socks


def is_open(*socks: socket.socket) -> bool:
    """True when the server has neither closed nor sent anything on any of ``socks`` yet
    (one poll over all of them, so checking hundreds takes no time)."""
    poller = select.poll()
    for sock in socks:
        poller.register(sock, select.POLLIN | select.POLLHUP | select.POLLERR)
    return not poller.poll(0)


def read_health(sock: socket.socket) -> bytes:
    """One whole ``/healthz`` response (head and body may come in separate packets)."""
    sock.settimeout(5)
    data = b""
    while not data.endswith(b'{"status":"ok"}'):
        chunk = sock.recv(4096)
        assert chunk, data
        data += chunk
    return data


def read_to_close(sock: socket.socket, timeout: float) -> bytes | None:
    """Everything the server sends before it closes; None when it has not closed by ``timeout``."""
    sock.settimeout(timeout)
    data = b""
    try:
        while chunk := sock.recv(4096):
            data += chunk
    except TimeoutError:
        return None
    except ConnectionResetError:
        pass
    return data


def test_idle_and_half_sent_connections_neither_starve_health_nor_outlive_their_timeouts(
        indexed_home: Path, tmp_path: Path) -> None:
    with running_server(indexed_home, tmp_path / "server.log", extra_env=SHORT_TIMEOUTS) as server:
        idle = open_sockets(server.base_url, 100)
        half_head = open_sockets(server.base_url, 100, HALF_HEAD)
        half_body = open_sockets(server.base_url, 100, HALF_BODY)
        # 300 connections held open by clients that never finish: a real request still answers,
        # within a second (the client gives up after one).
        health = httpx.get(server.base_url + "/healthz", timeout=1.0)
        assert health.status_code == 200
        # Not before their time: a second in, every one of them is still open.
        time.sleep(0.5)
        assert is_open(*idle, *half_head, *half_body)
        # On time: the header timeout (2 s) closes the idle and half-head ones, the body timeout
        # (3 s after the head) the half bodies. A second of slack for a loaded machine.
        idle_out = [read_to_close(s, 3.5) for s in idle]
        head_out = [read_to_close(s, 3.5) for s in half_head]
        body_out = [read_to_close(s, 3.5) for s in half_body]
        assert idle_out == [b""] * 100, "a connection that sent nothing is closed silently"
        assert all(out is not None and out.startswith(b"HTTP/1.1 408 ") for out in head_out), head_out[:3]
        assert all(out is not None for out in body_out), "half-sent bodies are closed"
        assert httpx.get(server.base_url + "/healthz", timeout=1.0).status_code == 200
        for sock in idle + half_head + half_body:
            sock.close()
        log = server.log()
    assert "Traceback" not in log


def test_trickling_a_head_byte_by_byte_does_not_extend_its_deadline(indexed_home: Path, tmp_path: Path) -> None:
    with running_server(indexed_home, tmp_path / "server.log", extra_env=SHORT_TIMEOUTS) as server:
        (sock,) = open_sockets(server.base_url, 1)
        started = time.monotonic()
        closed_after = None
        for byte in HALF_HEAD * 4:
            try:
                sock.sendall(bytes([byte]))
            except OSError:
                closed_after = time.monotonic() - started
                break
            if not is_open(sock):
                closed_after = time.monotonic() - started
                break
            time.sleep(0.05)
        assert closed_after is not None and closed_after < 4, "the 2 s head deadline held"
        sock.close()


def test_a_kept_alive_connection_closes_after_its_idle_timeout(indexed_home: Path, tmp_path: Path) -> None:
    with running_server(indexed_home, tmp_path / "server.log", extra_env=SHORT_TIMEOUTS) as server:
        (sock,) = open_sockets(server.base_url, 1, b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        assert read_health(sock).startswith(b"HTTP/1.1 200 ")
        time.sleep(1.0)
        assert is_open(sock), "kept alive within its timeout"
        # A second request on the same connection works, and then the 2 s idle timeout closes it.
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        assert read_health(sock).startswith(b"HTTP/1.1 200 ")
        assert read_to_close(sock, 4.0) == b""
        sock.close()


def test_connections_beyond_the_cap_get_a_fast_503_and_the_server_recovers(
        indexed_home: Path, tmp_path: Path) -> None:
    env = {**SHORT_TIMEOUTS, "SEARCHNASA_HEADER_TIMEOUT": "30", "SEARCHNASA_MAX_CONNECTIONS": "20"}
    with running_server(indexed_home, tmp_path / "server.log", extra_env=env) as server:
        held = open_sockets(server.base_url, 20)
        time.sleep(0.3)
        beyond = open_sockets(server.base_url, 5)
        answers = [read_to_close(s, 2.0) for s in beyond]
        assert all(a is not None and a.startswith(b"HTTP/1.1 503 ") for a in answers), answers
        assert b'"code":"busy"' in answers[0] and b"retry-after: 1" in answers[0].lower()
        assert is_open(*held), "the connections within the cap are kept"
        for sock in held + beyond:
            sock.close()
        time.sleep(0.3)
        assert httpx.get(server.base_url + "/healthz", timeout=2).status_code == 200


def _few_descriptors() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (200, 200))


def test_running_out_of_descriptors_logs_the_accept_error_once_with_a_count(
        indexed_home: Path, tmp_path: Path) -> None:
    """With the cap set above what the process can open, connections exhaust its descriptors:
    asyncio's accept error must become a few stamped lines with a count, not one per attempt."""
    import subprocess

    import server_util

    env = {**SHORT_TIMEOUTS, "SEARCHNASA_MAX_CONNECTIONS": "5000", "SEARCHNASA_HEADER_TIMEOUT": "6",
           "SEARCHNASA_LOG_REPEAT_SECONDS": "2"}
    original = subprocess.Popen

    def limited_popen(*args, **kwargs):  # the server process gets a low open-files limit
        return original(*args, preexec_fn=_few_descriptors, **kwargs)

    server_util.subprocess.Popen = limited_popen  # type: ignore[misc]
    try:
        server_cm = running_server(indexed_home, tmp_path / "server.log", extra_env=env)
        server = server_cm.__enter__()
    finally:
        server_util.subprocess.Popen = original  # type: ignore[misc]
    try:
        deadline = time.monotonic() + 60  # the encoder loads first (it opens files of its own)
        while "query encoder ready" not in server.log() and time.monotonic() < deadline:
            time.sleep(0.2)
        flood = []
        for _ in range(300):  # far past 200 descriptors: accept fails until these are closed
            try:
                flood += open_sockets(server.base_url, 1)
            except OSError:
                break
        time.sleep(3)
        for sock in flood:
            sock.close()
        time.sleep(2.5)  # one counting interval: the count is written even though the flood stopped
        assert httpx.get(server.base_url + "/healthz", timeout=5).status_code == 200
    finally:
        server_cm.__exit__(None, None, None)
    lines = server.log().splitlines()
    accept_lines = [line for line in lines if "out of system resource" in line]
    assert 1 <= len(accept_lines) <= 10, len(accept_lines)
    assert any(re.search(r"\[repeated \d+ times in the last \d+ s\]", line) for line in accept_lines)
    logged = [line for line in lines if not line.startswith(("serving ", "warning:", "INFO:"))]
    unstamped = [line for line in logged if line.strip() and not STAMP.match(line)]
    assert not unstamped, unstamped[:5]


def test_identical_errors_collapse_and_the_log_file_stays_bounded(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    import logging.config

    from searchnasa.web.logs import log_config

    log_file = tmp_path / "serve.log"
    monkeypatch.setenv("SEARCHNASA_LOG_MAX_BYTES", "20000")
    monkeypatch.setenv("SEARCHNASA_LOG_BACKUPS", "2")
    monkeypatch.setenv("SEARCHNASA_LOG_REPEAT_SECONDS", "0.5")
    names = ["", "searchnasa", "uvicorn", "uvicorn.error", "asyncio"]
    saved = {name: (logging.getLogger(name).handlers[:], logging.getLogger(name).level,
                    logging.getLogger(name).propagate) for name in names}
    logging.config.dictConfig(log_config("info", str(log_file)))
    try:
        flood = logging.getLogger("asyncio")
        for _ in range(5000):
            try:
                raise OSError(24, "Too many open files")
            except OSError:
                flood.error("socket.accept() out of system resource", exc_info=True)
        time.sleep(1.2)  # the counter thread writes the count when the interval ends
        text = log_file.read_text()
        assert text.count("socket.accept() out of system resource") == 2  # the first, then its count
        assert re.search(r"\[repeated 4999 times in the last \d+ s\]", text)
        assert all(STAMP.match(line) for line in text.splitlines()), "traceback lines are stamped too"
        chatty = logging.getLogger("searchnasa.test")
        for n in range(3000):  # distinct lines are all written, and the file rotates by size
            chatty.warning("distinct line %d %s", n, "x" * 40)
        sizes = [p.stat().st_size for p in tmp_path.glob("serve.log*") if not p.name.endswith(".lock")]
        assert len(sizes) <= 3 and max(sizes) <= 20000 + 200, sizes
        assert "distinct line 2999" in log_file.read_text()
    finally:
        for name, (handlers, level, propagate) in saved.items():
            logger = logging.getLogger(name)
            for handler in logger.handlers[:]:
                if handler not in handlers:
                    logger.removeHandler(handler)
                    handler.close()
            logger.handlers[:] = handlers
            logger.setLevel(level)
            logger.propagate = propagate
