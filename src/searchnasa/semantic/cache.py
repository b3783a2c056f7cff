"""The shared embedding cache of this machine (see :mod:`.locations` for where it lives)."""

from __future__ import annotations

from searchnasa.semantic.locations import default_cache_path
from searchnasa.semantic.vectors import EmbeddingCache


def open_default_cache() -> EmbeddingCache:
    return EmbeddingCache(default_cache_path())
