"""One ASGI middleware at the edge of the app: request ids, security headers, the access log, the
optional per-client rate limit, the request body limit, and the last line of defence against unexpected exceptions.

It is a plain ASGI middleware (not Starlette's ``BaseHTTPMiddleware``) so that it wraps every
response, including the 500 it produces itself, and costs almost nothing per request.
"""

from __future__ import annotations

import html
import logging
import re
import threading
import time
import uuid
from typing import Any, Awaitable, Callable

import orjson

from searchnasa.web.cost import request_cost
from searchnasa.web.errors import error_body, wants_html

log = logging.getLogger("searchnasa.web")

CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
)
SECURITY_HEADERS: list[tuple[bytes, bytes]] = [
    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"strict-origin-when-cross-origin"),
    (b"x-frame-options", b"DENY"),
]
DEFAULT_MAX_BODY_BYTES = 1 << 20  # SEARCHNASA_MAX_BODY_BYTES's default
_CLIENT_REQUEST_ID = re.compile(r"^[A-Za-z0-9._-]{1,64}$")

Scope = dict[str, Any]
Message = dict[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def request_id_for(headers: list[tuple[bytes, bytes]]) -> str:
    """Keep a caller's ``X-Request-ID`` when it is tame (so logs join across services), else mint one."""
    for name, value in headers:
        if name == b"x-request-id":
            text = value.decode("latin-1")
            if _CLIENT_REQUEST_ID.match(text):
                return text
            break
    return uuid.uuid4().hex


class RateLimiter:
    """A token bucket per client address: ``per_minute`` requests a minute, bursts up to that many.

    Off (``per_minute <= 0``) by default, because a local single-user install must never throttle
    itself; a public deployment turns it on with ``SEARCHNASA_RATE_LIMIT_PER_MINUTE``.
    """

    def __init__(self, per_minute: int, max_clients: int = 100_000) -> None:
        self.per_minute = per_minute
        self.rate = per_minute / 60.0
        self.max_clients = max_clients
        self._buckets: dict[str, tuple[float, float]] = {}
        self._lock = threading.Lock()

    @property
    def enabled(self) -> bool:
        return self.per_minute > 0

    def take(self, client: str, cost: float = 1.0) -> float:
        """Spend ``cost`` tokens (web/cost.py: an export or many truncated words cost more than
        one); return 0 when allowed, else the seconds until enough tokens are available. A cost
        above the bucket's size is held to it, so any request is possible with a full bucket."""
        cost = min(max(cost, 1.0), float(self.per_minute))
        now = time.monotonic()
        with self._lock:
            tokens, last = self._buckets.get(client, (float(self.per_minute), now))
            tokens = min(float(self.per_minute), tokens + (now - last) * self.rate)
            if tokens >= cost:
                if len(self._buckets) >= self.max_clients and client not in self._buckets:
                    self._buckets.clear()  # bounded memory under a flood of distinct addresses
                self._buckets[client] = (tokens - cost, now)
                return 0.0
            self._buckets[client] = (tokens, now)
            return (cost - tokens) / self.rate


def json_error_body(code: str, message: str) -> bytes:
    return orjson.dumps(error_body(code, message))


class EdgeMiddleware:
    """Adds request ids and security headers, logs one structured line per request, rate-limits,
    and turns any uncaught exception into a logged 500 JSON answer without a stack trace."""

    def __init__(self, app: ASGIApp, rate_limit_per_minute: int = 0,
                 max_body_bytes: int = DEFAULT_MAX_BODY_BYTES) -> None:
        self.app = app
        self.limiter = RateLimiter(rate_limit_per_minute)
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        request_id = request_id_for(scope.get("headers", []))
        scope.setdefault("state", {})["request_id"] = request_id
        client = (scope.get("client") or ("-", 0))[0]
        status_holder = {"status": 0, "started": False}
        extra_headers = SECURITY_HEADERS + [(b"x-request-id", request_id.encode())]

        head = scope.get("method") == "HEAD"
        if head:  # HEAD on any GET route answers as GET does (status, headers), without the body
            scope = {**scope, "method": "GET"}

        async def send_wrapper(message: Message) -> None:
            if head and message["type"] == "http.response.body":
                message = {**message, "body": b""}
            if message["type"] == "http.response.start":
                status_holder["status"] = message["status"]
                status_holder["started"] = True
                names = {name.lower() for name, _ in message.get("headers", [])}
                headers = list(message.get("headers", []))
                headers.extend(h for h in extra_headers if h[0] not in names)
                message = {**message, "headers": headers}
            await send(message)

        try:
            if self.limiter.enabled and not _unthrottled(scope.get("path", "")):
                wait = self.limiter.take(client, request_cost(scope.get("path", ""),
                                                              scope.get("query_string", b"")))
                if wait > 0:
                    retry_after = str(max(1, int(wait + 0.999)))
                    message = f"too many requests; retry after {retry_after} s"
                    headers = [(b"retry-after", retry_after.encode())]
                    if wants_html(scope.get("path", ""), _accept(scope)):  # a page: a page to read
                        await _send(send_wrapper, 429, _error_page(message, 429, "Too many requests"),
                                    b"text/html; charset=utf-8", headers)
                    else:
                        await _send_json(send_wrapper, 429, json_error_body("rate_limited", message), headers)
                    return
            if _has_body(scope):
                declared = _content_length(scope)
                body = None if declared is not None and declared > self.max_body_bytes \
                    else await _read_body(receive, self.max_body_bytes)
                if body is None:
                    await _send_json(send_wrapper, 413, json_error_body(
                        "too_large", f"request body over {self.max_body_bytes:,} bytes"),
                        [(b"connection", b"close")])
                    return
                receive = _replay(body, receive)
            await self.app(scope, receive, send_wrapper)
        except Exception:  # the last line of defence: log it, never show it
            log.exception("unhandled error request_id=%s path=%s", request_id, scope.get("path"))
            if not status_holder["started"]:
                message = f"internal error (request id {request_id})"
                if wants_html(scope.get("path", ""), _accept(scope)):
                    await _send(send_wrapper, 500, _error_page(message), b"text/html; charset=utf-8")
                else:
                    await _send_json(send_wrapper, 500, json_error_body("internal_error", message))
        finally:
            log.info(orjson.dumps({
                "event": "request",
                "request_id": request_id,
                "method": scope.get("method"),
                "path": scope.get("path"),
                "status": status_holder["status"],
                "ms": round((time.perf_counter() - started) * 1000, 2),
                "client": client,
            }).decode())


def _header(scope: Scope, wanted: bytes) -> bytes | None:
    for name, value in scope.get("headers", []):
        if name == wanted:
            return value
    return None


def _has_body(scope: Scope) -> bool:
    """A request announces a body by a non-zero ``Content-Length`` or any ``Transfer-Encoding``."""
    return _header(scope, b"transfer-encoding") is not None or (_content_length(scope) or 0) > 0


def _content_length(scope: Scope) -> int | None:
    value = _header(scope, b"content-length")
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None  # the HTTP layer refuses a malformed length before the app sees it


async def _read_body(receive: Receive, limit: int) -> bytes | None:
    """The whole body, counted as it arrives (chunked bodies have no length up front); ``None`` as
    soon as it passes ``limit`` bytes, without reading the rest. A disconnect ends it early: the
    app then sees an empty or partial body and the disconnect, as it would have."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


def _replay(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that hands the app the body already read, then the server's own ``receive``
    (which answers only when the client goes away: streamed responses listen for that)."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


def _accept(scope: Scope) -> str:
    for name, value in scope.get("headers", []):
        if name == b"accept":
            return value.decode("latin-1")
    return ""


# Never throttled: health checks (a balancer polls them), the style sheet and icon a throttled
# page itself needs, and the API reference's static Swagger UI files.
UNTHROTTLED_PATHS = ("/healthz", "/readyz")
UNTHROTTLED_PREFIXES = ("/static/", "/docs/assets/")


def _unthrottled(path: str) -> bool:
    return path in UNTHROTTLED_PATHS or path.startswith(UNTHROTTLED_PREFIXES)


def _error_page(message: str, status: int = 500, heading: str = "Something went wrong") -> bytes:
    """A self-contained error page: rendering templates is exactly what may have failed."""
    return (
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Error · Search NASA</title>"
        "<link rel=\"stylesheet\" href=\"/static/style.css\"></head><body><main>"
        f"<p class=\"kicker\">ERROR {status}</p><h1>{html.escape(heading)}</h1>"
        f"<p class=\"error-message\">{html.escape(message)}</p><p><a href=\"/\">Back to search</a></p>"
        "</main></body></html>"
    ).encode()


async def _send(send: Send, status: int, body: bytes, content_type: bytes,
                headers: list[tuple[bytes, bytes]] | None = None) -> None:
    await send({
        "type": "http.response.start",
        "status": status,
        "headers": [(b"content-type", content_type),
                    (b"content-length", str(len(body)).encode())] + (headers or []),
    })
    await send({"type": "http.response.body", "body": body})


async def _send_json(send: Send, status: int, body: bytes,
                     headers: list[tuple[bytes, bytes]] | None = None) -> None:
    await _send(send, status, body, b"application/json", headers)
