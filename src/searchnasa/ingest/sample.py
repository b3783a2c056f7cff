"""Where the bundled sample corpus (real records, built by ``scripts/build_sample.py``) lives."""

from __future__ import annotations

import gzip
from importlib.resources import files
from pathlib import Path

from searchnasa.ingest.importer import ImportReport, import_paths
from searchnasa.store import RECORDS_FORMAT, Store


def sample_path() -> Path:
    return Path(str(files("searchnasa") / "data" / "sample.jsonl.gz"))


def load_bundled_sample(store: Store, force: bool = False) -> ImportReport | None:
    """``searchnasa load-sample``: import the sample; ``None`` (nothing done) when the store
    already holds records, unless ``force``."""
    if store.count() and not force:
        return None
    return import_paths(store, [sample_path()], RECORDS_FORMAT)


def sample_lines_with_abstract(n: int) -> list[bytes]:
    """The first ``n`` bundled records that have an abstract, as JSON lines (real text for tests
    and benchmarks that need something to embed)."""
    import orjson

    lines: list[bytes] = []
    with gzip.open(sample_path(), "rb") as fh:
        for line in fh:
            if len(lines) == n:
                break
            if orjson.loads(line).get("abstract"):
                lines.append(line)
    return lines
