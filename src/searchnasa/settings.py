"""One settings object, read from ``SEARCHNASA_*`` environment variables; CLI flags override it."""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path


def _env(name: str, default: str) -> str:
    return os.environ.get(f"SEARCHNASA_{name}", default)


@dataclass(frozen=True)
class Settings:
    """Where data lives and which source APIs to talk to.

    Everything a process writes sits under ``home`` so that a copy of that folder is a complete,
    portable installation (store, index, vectors).
    """

    home: Path = field(default_factory=lambda: Path(_env("HOME", "./data")).resolve())
    ntrs_api: str = field(default_factory=lambda: _env("NTRS_API", "https://ntrs.nasa.gov/api"))
    osti_api: str = field(default_factory=lambda: _env("OSTI_API", "https://www.osti.gov/api/v1"))
    contact: str = field(default_factory=lambda: _env("CONTACT", "searchnasa@example.org"))
    rate_limit_per_minute: int = field(
        default_factory=lambda: int(_env("RATE_LIMIT_PER_MINUTE", "0"))
    )
    # Which embedding backend makes vectors (documents and queries): "torch" (fp32, the default)
    # or "onnx" (int8, measured 2.7x faster at equal SciFact quality). Validated where it is used (semantic.embedder.check_backend); see docs/architecture.md.
    embed_backend: str = field(default_factory=lambda: _env("EMBED_BACKEND", "torch"))
    # Which saved vector index serves collections past 50,000 vectors: "hnsw" (usearch graph, the
    # fastest, wants ~0.5 GiB of RAM per million vectors) or "ivfpq" (faiss, ~0.06 GiB per million in
    # RAM, int8 rows read from disk per query) for machines whose RAM cannot hold the graph. Empty:
    # whichever `searchnasa embed --vector-index` last built (HNSW when none). See docs/scaling.md.
    vector_index: str = field(default_factory=lambda: _env("VECTOR_INDEX", ""))

    @property
    def store_path(self) -> Path:
        return self.home / "store.sqlite3"

    @property
    def index_dir(self) -> Path:
        return self.home / "index"

    @property
    def vectors_dir(self) -> Path:
        return self.home / "vectors"

    def with_home(self, home: str | Path) -> "Settings":
        return replace(self, home=Path(home).resolve())


def get_settings() -> Settings:
    """Read the environment now (not at import), so tests can point SEARCHNASA_HOME anywhere."""
    return Settings()
