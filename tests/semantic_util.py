"""Helpers the semantic, related and eval tests share: a sample home with the bundled real vectors."""

from __future__ import annotations

import shutil
from pathlib import Path

from searchnasa.records import Record
from searchnasa.search.service import SearchService
from searchnasa.semantic import seed_from_bundle
from searchnasa.semantic.provider import VectorProvider
from searchnasa.settings import Settings
from searchnasa.store import open_store


def semantic_home_from(indexed_home: Path, target: Path, sentences: bool = False) -> Path:
    """Copy the indexed sample home and give it the bundled sample vectors (no model needed);
    with ``sentences``, the bundled sentence vectors too (as a served home gets them), else none,
    so a test sees the ranking without sentences unless it asks."""
    shutil.copy2(indexed_home / "store.sqlite3", target / "store.sqlite3")
    shutil.copytree(indexed_home / "index", target / "index")
    seeded = seed_from_bundle(Settings().with_home(target), sentences=sentences)
    assert seeded > 6000, "the bundled sample vectors should cover the sample"
    return target


def semantic_service(home: Path) -> SearchService:
    """A search service over ``home`` with its vectors served (no model: the vectors are stored)."""
    settings = Settings().with_home(home)
    return SearchService(settings, semantic=VectorProvider(settings.vectors_dir))


def records_in(home: Path) -> dict[str, Record]:
    """Every record of ``home``'s store by id."""
    store = open_store(home, readonly=True)
    try:
        return {rec.id: rec for _, rec in store.iter_records()}
    finally:
        store.close()
