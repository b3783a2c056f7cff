"""Where the bundled sample corpus (real records, built by ``scripts/build_sample.py``) lives."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path


def sample_path() -> Path:
    return Path(str(files("searchnasa") / "data" / "sample.jsonl.gz"))
