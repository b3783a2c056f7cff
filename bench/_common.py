"""Steps several bench scripts share, so each script keeps only what it measures.

Imported by the scripts as ``from _common import ...``: running ``python bench/x.py`` puts
``bench/`` on the import path.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from searchnasa.index import build_index
from searchnasa.ingest.importer import import_paths
from searchnasa.ingest.sample import sample_path
from searchnasa.records import Record
from searchnasa.settings import Settings
from searchnasa.store import open_store


@contextmanager
def sample_home(prefix: str) -> Iterator[tuple[Settings, list[Record]]]:
    """A throwaway home holding the bundled sample, imported and indexed, with its records in store
    order; the home is removed afterwards, whatever the bench did with it."""
    tmp = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        settings = Settings().with_home(tmp)
        store = open_store(tmp)
        import_paths(store, [sample_path()], "records-jsonl")
        build_index(store, settings.index_dir)
        records = [r for _, r in store.iter_records()]
        store.close()
        yield settings, records
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def print_and_save(result: dict[str, Any], path: Path | None) -> None:
    """Print a bench's result as JSON and, when ``--json`` named a file, write the same text there."""
    print(json.dumps(result, indent=2))
    if path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(result, indent=2))
