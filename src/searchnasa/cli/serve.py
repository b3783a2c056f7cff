"""``searchnasa serve``: the web pages and JSON API under uvicorn."""

from __future__ import annotations

import logging.config
from pathlib import Path
from typing import Optional

import typer

from searchnasa.cli.app import HomeOption, app, settings_for
from searchnasa.errors import BadInput
from searchnasa.settings import Settings, export_variable, quiet_model_loading

MAX_REQUEST_HEAD_BYTES = 1_048_576
log = logging.getLogger("searchnasa.serve")  # set up by serve() before the first line


def _nodelay_shared_socket() -> None:
    """Give ``--workers N`` servers TCP_NODELAY, as a single-worker server has.

    With several workers uvicorn binds the shared socket as ``socket.socket(family)`` (proto 0),
    and asyncio sets TCP_NODELAY only on sockets whose proto is IPPROTO_TCP, so Nagle's algorithm
    met the client's delayed ACK and held every small response back by the delayed-ACK timeout.
    Accepted sockets inherit TCP_NODELAY from the listener on Linux, so it is set there.
    """
    import socket

    from uvicorn.config import Config

    original = Config.bind_socket
    if getattr(original, "_searchnasa_nodelay", False):
        return

    def bind_socket(self: Config) -> socket.socket:
        sock = original(self)
        if sock.family in (socket.AF_INET, socket.AF_INET6):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return sock

    bind_socket._searchnasa_nodelay = True  # type: ignore[attr-defined]
    Config.bind_socket = bind_socket  # type: ignore[method-assign]


def _check_home(settings: Settings) -> None:
    """Before any worker starts: say when there is no index yet, rebuild a corrupt one from the
    store, and warn when the disk's read-ahead would slow memory-mapped indexes."""
    if not settings.index_dir.exists():
        log.warning("no index under %s; run `searchnasa index` (pages answer 503 until then)",
                    settings.home)
        return
    from searchnasa.index.health import ensure_healthy_index
    from searchnasa.web.readahead import read_ahead_warning

    ensure_healthy_index(settings.home, settings.index_dir)
    warning = read_ahead_warning(settings.index_dir, settings.vectors_dir)
    if warning:
        log.warning("%s", warning)


@app.command()
def serve(
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on."),
    port: int = typer.Option(8000, "--port", min=1, max=65535, help="Port to listen on."),
    workers: int = typer.Option(1, "--workers", min=1, max=64,
                                help="Worker processes, each reading the same index."),
    log_level: str = typer.Option("info", "--log-level", help="debug, info, warning or error."),
    log_file: Optional[Path] = typer.Option(
        None, "--log-file", dir_okay=False,
        help="Write the log to this file, rotated by size (default: SEARCHNASA_LOG_FILE, else stderr)."),
    home: Optional[Path] = HomeOption,
) -> None:
    """Serve the search pages and the JSON API (stops gracefully on Ctrl-C or SIGTERM)."""
    import uvicorn

    from searchnasa.web.connections import GuardedH11Protocol, connection_limits
    from searchnasa.web.logs import log_config

    if log_level.lower() not in ("debug", "info", "warning", "error"):
        raise BadInput(f"unknown log level {log_level!r}")
    settings = settings_for(home)
    # Worker processes build their app from the environment, so pass the chosen home down.
    export_variable("HOME", str(settings.home))
    if log_file is not None:
        if not log_file.parent.is_dir():
            raise BadInput(f"cannot write the log to {log_file}: {log_file.parent} is not a directory")
        export_variable("LOG_FILE", str(log_file))
    quiet_model_loading()
    logging.config.dictConfig(log_config(log_level))
    limits = connection_limits()
    _check_home(settings)
    log.info("serving %s on http://%s:%d (%d worker(s))", settings.home, host, port, workers)
    _nodelay_shared_socket()
    uvicorn.run(
        "searchnasa.web.app:app_from_env",
        factory=True,
        host=host,
        port=port,
        workers=workers,
        access_log=False,  # our middleware logs each request once, with its request id
        log_level=log_level.lower(),
        log_config=log_config(log_level),
        # Read timeouts and a connection cap per worker (web/connections.py): idle, half-sent and
        # surplus connections are closed instead of holding the worker's file descriptors.
        http=GuardedH11Protocol,
        timeout_graceful_shutdown=30,
        # Longer than the idle timeout of common load balancers (60 s): the server never closes
        # a kept-alive connection just as the balancer (or a busy client) sends on it.
        timeout_keep_alive=max(1, round(limits.keep_alive)),
        proxy_headers=False,
        server_header=False,
        # A request line past h11's 16 KiB default gets a bare text 400 from the protocol layer;
        # up to 1 MiB the app answers instead, with its JSON 422 saying the query limit.
        h11_max_incomplete_event_size=MAX_REQUEST_HEAD_BYTES,
    )
