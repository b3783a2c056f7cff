"""The web application: HTML pages, the JSON API and health checks over one read-only index.

``create_app(settings)`` assembles the app; ``app_from_env()`` is the factory uvicorn workers call,
so ``searchnasa serve --workers N`` runs N processes, each with its own reader of the same index.
"""

from __future__ import annotations

import logging
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, AsyncIterator

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles
from starlette.middleware.gzip import GZipMiddleware

from searchnasa import __version__
from searchnasa.errors import SearchNasaError
from searchnasa.search.service import SearchService
from searchnasa.settings import (
    Settings,
    env_number,
    get_settings,
    single_thread_blas_environment,
)
from searchnasa.web.api import router as api_router
from searchnasa.web.deps import Services
from searchnasa.web.docs import ASSETS_URL, docs_assets
from searchnasa.web.docs import router as docs_router
from searchnasa.web.errors import install_error_handlers
from searchnasa.web.health import router as health_router
from searchnasa.web.middleware import EdgeMiddleware
from searchnasa.web.openapi_docs import describe_spec
from searchnasa.web.pages import router as pages_router
from searchnasa.web.status import router as status_router

log = logging.getLogger("searchnasa.web")
STATIC_DIR = Path(__file__).parent / "static"


def one_blas_thread() -> None:
    """Run this process's vector arithmetic (NumPy's BLAS) on one thread.

    A server answers many requests at once on a few cores, so each product of a query vector with
    the stored vectors gains nothing from more threads; with OpenBLAS's default of one thread per
    core, its idle threads spin while they wait for work, and under load that spinning cost 18 times
    the CPU of the product itself (7.9 ms against 0.43 ms per exact search of the sample's 6,514
    vectors) and halved the hybrid load test's throughput (bench/README.md, "Load test").
    Batch jobs (``embed``, ``dedup``) keep every thread: they run one large product at a time.
    """
    from threadpoolctl import threadpool_limits

    single_thread_blas_environment()  # OpenBLAS libraries loaded later (SciPy's, with the model)
    threadpool_limits(limits=1, user_api="blas")  # the ones loaded already (NumPy's)


def limit_request_threads(threads: int) -> None:
    """Compute at most ``threads`` requests at once in this worker; the others wait their turn.

    Pages and searches are synchronous Python run on the event loop's thread pool (AnyIO's, 40
    threads by default). Forty CPU-bound threads on a few cores take turns holding the interpreter
    lock, and the loop's own thread, which reads requests and writes answers on every connection,
    waits behind all of them: under 64 clients the slowest answers passed the load test's 10 s
    deadline although no request took more than 3.4 s to compute. With 8 the work queues in order
    instead and the loop stays responsive (bench/README.md, "Load test").
    """
    import anyio.to_thread

    anyio.to_thread.current_default_thread_limiter().total_tokens = max(1, threads)


def warm_up(holder: Services) -> None:
    """Open the index and start loading the query encoder (in the background) before the first
    request, so no user pays for either; a server without an index yet starts anyway."""
    try:
        service = holder.search()
    except SearchNasaError as exc:
        log.warning("starting without a search index: %s", exc.message)
        return
    if service.semantic is None:
        return
    try:
        service.semantic.warm_up()
    except SearchNasaError as exc:  # e.g. vectors on a read-only mount: lexical search still serves
        log.warning("starting without semantic search: %s", exc.message)


def create_app(settings: Settings | None = None, service: SearchService | None = None) -> FastAPI:
    """Build the app for one data home. ``service`` replaces the search service (tests inject faults)."""
    settings = settings or get_settings()
    holder = Services(settings, service)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        one_blas_thread()
        limit_request_threads(int(env_number("REQUEST_THREADS", int)))
        warm_up(holder)
        yield

    app = FastAPI(
        title="Search NASA",
        version=__version__,
        description="One search over NASA NTRS and DOE OSTI technical reports.",
        docs_url=None,  # FastAPI's /docs loads a CDN and an inline script: ours is web/docs.py
        redoc_url=None,
        lifespan=lifespan,
        redirect_slashes=False,  # a stray slash is a 404 JSON, not a redirect a client must follow
    )
    app.state.services = holder
    generate = app.openapi

    def openapi() -> dict[str, Any]:  # generated once, then every field described (web/openapi_docs.py)
        if app.openapi_schema is None:
            app.openapi_schema = describe_spec(generate())
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
    install_error_handlers(app)
    app.include_router(api_router)
    app.include_router(status_router)
    app.include_router(pages_router)
    app.include_router(docs_router)
    app.mount(ASSETS_URL, docs_assets(), name="docs-assets")
    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
    app.include_router(health_router)
    app.add_middleware(GZipMiddleware, minimum_size=1024)  # result pages shrink about 5x
    app.add_middleware(EdgeMiddleware, rate_limit_per_minute=settings.rate_limit_per_minute,
                       max_body_bytes=settings.max_body_bytes)  # outermost
    return app


def app_from_env() -> FastAPI:
    """Factory for uvicorn (``--factory``): each worker reads ``SEARCHNASA_*`` from the environment."""
    return create_app(get_settings())
