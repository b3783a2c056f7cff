"""Semantic retrieval: embeddings of title + abstract, their durable storage, the vector index,
and the provider that feeds semantic candidates into hybrid search."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from searchnasa.settings import Settings
    from searchnasa.semantic.provider import VectorProvider

log = logging.getLogger(__name__)

def seed_from_bundle(settings: "Settings", sentences: bool = True) -> int:
    """Give a home the bundled sample's precomputed vectors (for records whose text matches), and,
    with ``sentences``, their sentence vectors; returns the record vectors taken.

    Cheap (no model), so a fresh ``make run`` serves hybrid search and related papers with their
    sentence pairs at once; ``searchnasa embed [--sentences]`` later embeds whatever the bundle did
    not cover.
    """
    from searchnasa.store import open_store
    from searchnasa.semantic.bundle import load_bundle, load_sentence_bundle
    from searchnasa.semantic.sentence_vectors import embed_sentences_pending
    from searchnasa.semantic.vectors import VectorStore

    bundle = load_bundle()
    if bundle is None or not settings.store_path.exists():
        return 0
    store = open_store(settings.home, readonly=True)
    vstore = VectorStore(settings.vectors_dir)
    try:
        report = vstore.embed_pending(store.iter_records(0), cache=bundle, batch_size=2000, only_cached=True)
    finally:
        vstore.close()
    try:
        sentence_bundle = load_sentence_bundle() if sentences else None
        if sentence_bundle is not None:
            embed_sentences_pending(settings.vectors_dir, store.iter_records(0), cache=sentence_bundle,
                                    batch_size=2000, only_cached=True)
    finally:
        store.close()
    return report.from_cache


def open_semantic(settings: "Settings") -> "VectorProvider":
    """The semantic provider for a home; seeds it from the bundled sample vectors when it has none."""
    from searchnasa.semantic.provider import open_provider
    from searchnasa.semantic.vectors import VectorStore

    if not (settings.vectors_dir / VectorStore.FILENAME).is_file():
        try:
            n = seed_from_bundle(settings)
            if n:
                log.info("semantic: %d vectors taken from the bundled sample", n)
        except Exception as exc:  # seeding is a convenience; search must still start
            log.warning("could not seed vectors from the bundle: %s", exc)
    return open_provider(settings)
