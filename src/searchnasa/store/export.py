"""The whole store as JSON Lines of records (``searchnasa export``): a backup that
``searchnasa import`` reads back as the ``records-jsonl`` format."""

from __future__ import annotations

import gzip
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from searchnasa.store.database import Store


def open_export(path: Path) -> BinaryIO:
    """The file to write, gzip-compressed when its name ends in ``.gz``."""
    return gzip.open(path, "wb") if path.suffix == ".gz" else open(path, "wb")  # type: ignore[return-value]


def write_jsonl(store: Store, out: BinaryIO, on_record: Callable[[], object] | None = None) -> None:
    """Write every stored record's JSON as it is stored (no re-validation), one per line."""
    for blob in store.iter_json():
        out.write(blob + b"\n")
        if on_record is not None:
            on_record()
