"""Helpers the semantic, related and eval tests share: a sample home with the bundled real vectors."""

from __future__ import annotations

import shutil
from pathlib import Path

from searchnasa.semantic import seed_from_bundle
from searchnasa.settings import Settings


def semantic_home_from(indexed_home: Path, target: Path) -> Path:
    """Copy the indexed sample home and give it the bundled sample vectors (no model needed)."""
    shutil.copy2(indexed_home / "store.sqlite3", target / "store.sqlite3")
    shutil.copytree(indexed_home / "index", target / "index")
    seeded = seed_from_bundle(Settings().with_home(target))
    assert seeded > 6000, "the bundled sample vectors should cover the sample"
    return target
