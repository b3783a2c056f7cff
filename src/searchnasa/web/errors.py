"""Every error a request can meet, answered in one shape.

The API (and anything that is not a browser page) gets ``{"error": {"code", "message"}}`` with a
4xx/5xx status; a browser page gets the same message in the site's layout. No answer ever carries a
stack trace: unexpected exceptions are caught by :class:`~searchnasa.web.middleware.EdgeMiddleware`.
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from pydantic import ValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException

from searchnasa.errors import SearchNasaError

log = logging.getLogger("searchnasa.web")

_HTTP_CODES = {400: "bad_request", 404: "not_found", 405: "method_not_allowed", 413: "too_large",
               422: "invalid_request", 429: "rate_limited", 503: "unavailable"}


def wants_html(request: Request) -> bool:
    """Pages answer in HTML; the API, health checks and the spec always answer in JSON."""
    path = request.url.path
    if path.startswith("/api/") or path in ("/api", "/openapi.json", "/healthz", "/readyz"):
        return False
    return "text/html" in request.headers.get("accept", "")


def error_response(request: Request, status: int, code: str, message: str,
                   headers: dict[str, str] | None = None) -> Response:
    if wants_html(request):
        from searchnasa.web.pages import render_error  # late import: pages imports this module

        return render_error(request, status, message, headers=headers)
    return JSONResponse({"error": {"code": code, "message": message}}, status_code=status,
                        headers=headers)


def describe_validation(errors: list[dict[str, Any]]) -> str:
    """One readable sentence from pydantic's error list: which parameter, and what is wrong."""
    parts = []
    for err in errors[:5]:
        loc = [str(p) for p in err.get("loc", ()) if p not in ("query", "body", "path")]
        where = ".".join(loc) or "request"
        parts.append(f"{where}: {err.get('msg', 'invalid value')}")
    if len(errors) > 5:
        parts.append(f"and {len(errors) - 5} more")
    return "; ".join(parts)


async def _on_product_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, SearchNasaError)
    if exc.status >= 500:
        log.warning("%s: %s", exc.code, exc.message)
    return error_response(request, exc.status, exc.code, exc.message)


async def _on_validation(request: Request, exc: Exception) -> Response:
    errors = exc.errors() if isinstance(exc, (RequestValidationError, ValidationError)) else []
    return error_response(request, 422, "invalid_request", describe_validation(list(errors)))


async def _on_http(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, StarletteHTTPException)
    code = _HTTP_CODES.get(exc.status_code, "error")
    message = exc.detail if isinstance(exc.detail, str) else code.replace("_", " ")
    if exc.status_code == 404 and message == "Not Found":
        message = f"no such page: {request.url.path}"
    return error_response(request, exc.status_code, code, message,
                          headers=getattr(exc, "headers", None))


def install_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(SearchNasaError, _on_product_error)
    app.add_exception_handler(RequestValidationError, _on_validation)
    app.add_exception_handler(ValidationError, _on_validation)
    app.add_exception_handler(StarletteHTTPException, _on_http)
