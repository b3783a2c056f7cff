"""What every request handler reaches the library through: the opened services, the record-id
check, and the two searches that both the pages and the JSON API run.

Both faces call the same functions here, so a page and its API twin cannot answer differently.
"""

from __future__ import annotations

import logging
import threading

from fastapi import Request

from searchnasa.errors import IndexMissing
from searchnasa.search.protocols import SemanticProvider
from searchnasa.search.schemas import RelatedItem
from searchnasa.search.service import SearchService
from searchnasa.semantic import open_semantic
from searchnasa.semantic.provider import QUERY_WAIT_SECONDS
from searchnasa.settings import Settings
from searchnasa.store import Store, open_store

log = logging.getLogger("searchnasa.web")


class Services:
    """Opens the search service on first use and keeps it.

    Opening is lazy and retried, so a server started before ``searchnasa index`` ran begins serving
    as soon as the index appears (``/readyz`` says 503 until then) instead of needing a restart.
    """

    def __init__(self, settings: Settings, service: SearchService | None = None) -> None:
        self.settings = settings
        self._service = service
        self._store: Store | None = None
        self._lock = threading.Lock()
        self.status_cache: object | None = None  # web/status.py's StatusCache, made on first use

    def search(self) -> SearchService:
        if self._service is None:
            with self._lock:
                if self._service is None:
                    self._service = self._open_service()
        return self._service

    def _open_service(self) -> SearchService:
        if not self.settings.index_dir.exists():
            raise IndexMissing(
                f"no search index under {self.settings.home}: run `searchnasa index` first")
        # a web search never queues behind the query encoder (see SearchService.semantic_wait)
        return SearchService(self.settings, semantic=self._open_semantic(), semantic_wait=QUERY_WAIT_SECONDS)

    def _open_semantic(self) -> SemanticProvider | None:
        """The semantic engine when its vectors exist; lexical search works without it."""
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
    """The app's services (``create_app`` puts them on the app's state)."""
    return request.app.state.services


def record_id_of(service: SearchService, text: str) -> str:
    """The record id a path or body names: ``ntrs:N``/``osti:N`` as given, a bare number resolved
    as the search box resolves it (404 when no source holds it, 409 when both do); anything else
    (paths, markup) is refused before any lookup."""
    return service.resolve_id(text)


def related_items(service: SearchService, seed_ids: list[str], negative_ids: list[str], limit: int) -> list[RelatedItem]:
    """Related papers with their reasons (the related-papers module does the ranking)."""
    from searchnasa.search.related import find_related

    return find_related(service, seed_ids, negative_ids, limit)
