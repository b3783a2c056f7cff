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
from searchnasa.search.schemas import MAX_QUERY_CHARS
from searchnasa.web.render import render

log = logging.getLogger("searchnasa.web")

_HTTP_CODES = {400: "bad_request", 404: "not_found", 405: "method_not_allowed", 413: "too_large",
               422: "invalid_request", 429: "rate_limited", 503: "unavailable"}
JSON_PATHS = ("/api", "/openapi.json", "/healthz", "/readyz")  # answer JSON whatever the client accepts


def wants_html(path: str, accept: str) -> bool:
    """Pages answer in HTML; the API, health checks and the spec always answer in JSON.

    The one rule for both the error handlers and the edge middleware's last-resort 500.
    """
    if path.startswith("/api/") or path in JSON_PATHS:
        return False
    return "text/html" in accept


def error_body(code: str, message: str) -> dict[str, dict[str, str]]:
    """The one JSON error shape."""
    return {"error": {"code": code, "message": message}}


def error_page(request: Request, status: int, message: str,
               headers: dict[str, str] | None = None) -> Response:
    """The message in the site's layout, the search box keeping the query that led here."""
    return render("error.html", status=status, headers=headers, request=request, status_code=status, message=message,
                  query=request.query_params.get("q", "")[:MAX_QUERY_CHARS])


def error_response(request: Request, status: int, code: str, message: str,
                   headers: dict[str, str] | None = None) -> Response:
    if wants_html(request.url.path, request.headers.get("accept", "")):
        return error_page(request, status, message, headers=headers)
    return JSONResponse(error_body(code, message), status_code=status, headers=headers)


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
