"""Where the shared embedding cache lives: ``$SEARCHNASA_EMBED_CACHE`` or the user's cache folder."""

from __future__ import annotations

import os
from pathlib import Path

from .vectors import EmbeddingCache


def default_cache_path() -> Path:
    env = os.environ.get("SEARCHNASA_EMBED_CACHE")
    if env:
        return Path(env).expanduser().resolve()
    base = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    return base / "searchnasa" / "embeddings.sqlite3"


def open_default_cache() -> EmbeddingCache:
    return EmbeddingCache(default_cache_path())
