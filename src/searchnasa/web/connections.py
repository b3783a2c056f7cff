"""Connection hygiene for the server as shipped: read timeouts and a connection cap per worker.

uvicorn's HTTP/1.1 protocol closes a kept-alive connection after its idle timeout, but it never
times out a connection that sends nothing, half a request head, or half a body, and it accepts
connections until the process runs out of file descriptors. A few thousand such sockets (a
slowloris, or a broken client in a loop) then starve every real request, ``/healthz`` included.
:class:`GuardedH11Protocol` adds what a front proxy such as nginx gives
(``client_header_timeout``, ``client_body_timeout``, ``limit_conn``):

- **header timeout**: a request head must arrive whole within ``HEADER_TIMEOUT`` seconds of the
  connection opening (or of its first byte, on a kept-alive connection). Trickling one byte at a
  time does not extend it. Past it the server answers 408 and closes.
- **body timeout**: a body must arrive whole within ``BODY_TIMEOUT`` seconds of its head; past it
  the connection is closed and the application sees the client as disconnected.
- **keep-alive timeout**: uvicorn's own, which holds once a response is sent.
- **connection cap**: beyond ``MAX_CONNECTIONS`` open connections in one worker, a new
  connection gets a 503 JSON answer at once and is closed, so the worker keeps file descriptors
  and memory for the connections it serves.

The limits are ``SEARCHNASA_*`` settings read once per worker; docs/operations.md gives the same
values for running behind a reverse proxy.
"""

from __future__ import annotations

import asyncio
import resource
from dataclasses import dataclass
from functools import lru_cache

import h11
import orjson
from uvicorn.protocols.http.h11_impl import H11Protocol

from searchnasa.settings import env_number

# File descriptors a worker keeps for itself beyond its connections: index segments, the store,
# vectors, logs, the facet threads' files.
RESERVED_DESCRIPTORS = 256


@dataclass(frozen=True)
class ConnectionLimits:
    """The four numbers of connection hygiene, in seconds and connections."""

    header_timeout: float
    body_timeout: float
    keep_alive: float
    max_connections: int


def descriptor_cap() -> int:
    """The most connections this process can hold without running out of file descriptors."""
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return 100_000
    return max(16, soft - RESERVED_DESCRIPTORS)


@lru_cache(maxsize=1)
def connection_limits() -> ConnectionLimits:
    """The limits from the settings. A cap of 0 (the default) means 1,024 or as many as the
    open-files limit leaves room for; a cap an operator sets is taken as given (docs/operations.md)."""
    configured = int(env_number("MAX_CONNECTIONS", int))
    return ConnectionLimits(
        header_timeout=float(env_number("HEADER_TIMEOUT", float)),
        body_timeout=float(env_number("BODY_TIMEOUT", float)),
        keep_alive=float(env_number("KEEP_ALIVE", float)),
        max_connections=configured if configured > 0 else min(1024, descriptor_cap()),
    )


def _plain_response(status: int, reason: str, code: str, message: str, extra: str = "") -> bytes:
    """A whole HTTP/1.1 response that closes the connection, with the API's JSON error body."""
    body = orjson.dumps({"error": {"code": code, "message": message}})
    head = (f"HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\n"
            f"content-length: {len(body)}\r\nconnection: close\r\n{extra}\r\n")
    return head.encode("ascii") + body


BUSY_RESPONSE = _plain_response(503, "Service Unavailable", "busy",
                                "the server holds as many connections as it can; try again shortly",
                                "retry-after: 1\r\n")
SLOW_HEAD_RESPONSE = _plain_response(408, "Request Timeout", "request_timeout",
                                     "the request head did not arrive in time")


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with read timeouts and a per-worker connection cap (module docs)."""

    limits: ConnectionLimits
    _read_timer: asyncio.TimerHandle | None = None
    _refused: bool = False

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self.limits = connection_limits()
        if len(self.connections) > self.limits.max_connections:
            self._refused = True
            transport.write(BUSY_RESPONSE)
            transport.close()
            return
        self._arm(self.limits.header_timeout, self._head_timed_out)

    def data_received(self, data: bytes) -> None:
        if self._refused:
            return
        super().data_received(data)
        self._follow_state()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._follow_state()

    def _follow_state(self) -> None:
        """Set the read timer from where the client is in its request.

        Waiting for a head with some of it received: the head deadline runs (it is not restarted by
        more bytes). Reading a body: the body deadline runs from the head. Otherwise (the request
        is whole and being answered, or the connection is idle between requests, which uvicorn's
        keep-alive timer covers) no read timer runs.
        """
        if self.transport.is_closing():
            self._disarm()
            return
        state = self.conn.their_state
        if state is h11.IDLE and self.conn.trailing_data[0]:
            if self._read_timer is None:
                self._arm(self.limits.header_timeout, self._head_timed_out)
        elif state is h11.SEND_BODY:
            if self._read_timer is None or getattr(self, "_timer_kind", "") != "body":
                self._arm(self.limits.body_timeout, self._body_timed_out, kind="body")
        elif state is not h11.IDLE or self.cycle is not None:
            self._disarm()

    def _arm(self, seconds: float, callback: object, kind: str = "head") -> None:
        self._disarm()
        self._timer_kind = kind
        self._read_timer = self.loop.call_later(seconds, callback)  # type: ignore[arg-type]

    def _disarm(self) -> None:
        if self._read_timer is not None:
            self._read_timer.cancel()
            self._read_timer = None

    def _head_timed_out(self) -> None:
        self._read_timer = None
        if self.transport.is_closing() or self.conn.their_state is not h11.IDLE:
            return
        if self.conn.trailing_data[0] and self.conn.our_state is h11.IDLE:
            # Half a head arrived: a 408 says why the connection closes (one that sent nothing
            # is closed silently, as nginx does).
            self.transport.write(SLOW_HEAD_RESPONSE)
        self.transport.close()

    def _body_timed_out(self) -> None:
        self._read_timer = None
        if not self.transport.is_closing() and self.conn.their_state is h11.SEND_BODY:
            # The application is waiting on the body: closing makes its receive() say disconnect.
            self.transport.close()
