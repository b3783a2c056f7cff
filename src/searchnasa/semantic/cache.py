"""Where the shared embedding cache lives: ``$SEARCHNASA_EMBED_CACHE`` or the user's cache folder."""

from __future__ import annotations

from pathlib import Path

from searchnasa.semantic.vectors import EmbeddingCache
from searchnasa.settings import env_value, user_cache_dir


def default_cache_path() -> Path:
    env = env_value("EMBED_CACHE")
    if env:
        return Path(env).expanduser().resolve()
    return user_cache_dir() / "embeddings.sqlite3"


def open_default_cache() -> EmbeddingCache:
    return EmbeddingCache(default_cache_path())
