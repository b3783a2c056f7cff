"""Where the semantic stage keeps the files that every home on a machine shares: the ONNX exports
and the embedding cache. Each is a setting when given, else a file under the user's cache folder,
so two homes (and every evaluation's temporary home) reuse one copy."""

from __future__ import annotations

from pathlib import Path

from searchnasa.settings import env_value, user_cache_dir


def _configured_or_cached(variable: str, name: str) -> Path:
    value = env_value(variable)
    if value:
        return Path(value).expanduser().resolve()
    return user_cache_dir() / name


def models_dir() -> Path:
    """Where ONNX exports are cached: ``$SEARCHNASA_MODELS_DIR`` or the user's cache folder."""
    return _configured_or_cached("MODELS_DIR", "models")


def default_cache_path() -> Path:
    """The shared embedding cache: ``$SEARCHNASA_EMBED_CACHE`` or the user's cache folder."""
    return _configured_or_cached("EMBED_CACHE", "embeddings.sqlite3")
