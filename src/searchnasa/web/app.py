"""The web application: HTML pages, the JSON API and health checks over one read-only index.

``create_app(settings)`` builds the app; ``app_from_env()`` is the factory uvicorn workers call, so
``searchnasa serve --workers N`` runs N processes, each with its own reader of the same index.
"""

from __future__ import annotations

import logging
import threading
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, AsyncIterator

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from fastapi.staticfiles import StaticFiles
from starlette.middleware.gzip import GZipMiddleware

from searchnasa import __version__
from searchnasa.errors import IndexMissing, SearchNasaError
from searchnasa.settings import Settings, get_settings
from searchnasa.store import Store, open_store
from searchnasa.web.errors import install_error_handlers
from searchnasa.web.middleware import EdgeMiddleware

log = logging.getLogger("searchnasa.web")
STATIC_DIR = Path(__file__).parent / "static"


class Services:
    """Opens the search service on first use and keeps it.

    Opening is lazy and retried, so a server started before ``searchnasa index`` ran begins serving
    as soon as the index appears (``/readyz`` says 503 until then) instead of needing a restart.
    """

    def __init__(self, settings: Settings, service: Any | None = None) -> None:
        self.settings = settings
        self._service = service
        self._store: Store | None = None
        self._lock = threading.Lock()

    def search(self) -> Any:
        if self._service is None:
            with self._lock:
                if self._service is None:
                    self._service = self._open_service()
        return self._service

    def _open_service(self) -> Any:
        from searchnasa.search.service import SearchService

        if not self.settings.index_dir.exists():
            raise IndexMissing(
                f"no search index under {self.settings.home}: run `searchnasa index` first")
        from searchnasa.semantic.provider import QUERY_WAIT_SECONDS

        # a web search never queues behind the query encoder (see SearchService.semantic_wait)
        return SearchService(self.settings, semantic=self._open_semantic(), semantic_wait=QUERY_WAIT_SECONDS)

    def _open_semantic(self) -> Any | None:
        """The semantic engine when its vectors exist; lexical search works without it."""
        try:
            from searchnasa.semantic import open_semantic  # type: ignore[attr-defined]
        except ImportError:
            return None
        try:
            return open_semantic(self.settings)
        except Exception as exc:  # a broken vector index must not take lexical search down
            log.warning("semantic search unavailable: %s", exc)
            return None

    def store(self) -> Store:
        if self._store is None:
            with self._lock:
                if self._store is None:
                    self._store = open_store(self.settings.home, readonly=True)
        return self._store

    def record_count(self) -> int:
        return self.store().count()


def services(request: Request) -> Services:
    return request.app.state.services


def create_app(settings: Settings | None = None, service: Any | None = None) -> FastAPI:
    """Build the app for one data home. ``service`` replaces the search service (benchmarks)."""
    settings = settings or get_settings()
    holder = Services(settings, service)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        try:  # warm up: the first user request should not pay for opening the index
            service = holder.search()
        except SearchNasaError as exc:
            log.warning("starting without a search index: %s", exc.message)
        else:  # nor find the query encoder still loading (it loads in the background)
            warm_up = getattr(getattr(service, "semantic", None), "warm_up", None)
            if callable(warm_up):
                warm_up()
        yield

    app = FastAPI(
        title="Search NASA",
        version=__version__,
        description="One search over NASA NTRS and DOE OSTI technical reports.",
        docs_url=None,  # the Swagger UI loads scripts from a CDN, which our CSP forbids
        redoc_url=None,
        lifespan=lifespan,
        redirect_slashes=False,  # a stray slash is a 404 JSON, not a redirect a client must follow
    )
    app.state.services = holder
    app.state.settings = settings
    install_error_handlers(app)

    from searchnasa.web.api import router as api_router
    from searchnasa.web.pages import router as pages_router

    app.include_router(api_router)
    app.include_router(pages_router)
    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")

    @app.get("/healthz", tags=["operations"], summary="Liveness: the process answers.")
    def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/readyz", tags=["operations"], summary="Readiness: the index is open; record count.",
             responses={503: {"description": "Index not loaded"}})
    def readyz(request: Request) -> JSONResponse:
        holder = services(request)
        try:
            service = holder.search()
            reader = getattr(service, "reader", None)
            if reader is not None:
                reader.searcher()  # raises IndexMissing until a generation is published
            count = holder.record_count()
        except SearchNasaError as exc:
            return JSONResponse({"status": "unavailable", "error": {"code": exc.code, "message": exc.message}},
                                status_code=503)
        return JSONResponse({"status": "ready", "records": count})

    app.add_middleware(GZipMiddleware, minimum_size=1024)  # result pages shrink about 5x
    app.add_middleware(EdgeMiddleware, rate_limit_per_minute=settings.rate_limit_per_minute)  # outermost
    return app


def app_from_env() -> FastAPI:
    """Factory for uvicorn (``--factory``): each worker reads ``SEARCHNASA_*`` from the environment."""
    return create_app(get_settings())
