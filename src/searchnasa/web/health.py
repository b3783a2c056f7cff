"""Liveness and readiness for load balancers and orchestrators (JSON, listed in the OpenAPI spec)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from searchnasa.errors import SearchNasaError
from searchnasa.web.deps import services
from searchnasa.web.errors import error_body

router = APIRouter()


@router.get("/healthz", tags=["operations"], summary="Liveness: the process answers.")
def healthz() -> dict[str, str]:
    return {"status": "ok"}


@router.get("/readyz", tags=["operations"], summary="Readiness: the index is open; record count.",
            responses={503: {"description": "Index not loaded"}})
def readyz(request: Request) -> JSONResponse:
    holder = services(request)
    try:
        holder.search().reader.searcher()  # raises IndexMissing until a generation is published
        count = holder.record_count()
    except SearchNasaError as exc:
        return JSONResponse({"status": "unavailable", **error_body(exc.code, exc.message)}, status_code=503)
    return JSONResponse({"status": "ready", "records": count})
