"""The status behind every page's footer is recomputed when the home changes, not on every page.

On the real sample with its real vectors: the search side opens and closes the vector store every
second or so to look for new vectors, which makes SQLite create and delete an empty ``-wal`` file;
that alone must not count as a change (it once made every page recompute the status), while a
write of vectors, held in the log or checkpointed into the file, must.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest

from searchnasa.semantic.vectors import VectorStore
from searchnasa.settings import Settings
from searchnasa.web import status
from searchnasa.web.deps import Services

from semantic_util import semantic_home_from


@pytest.fixture()
def holder(indexed_home: Path, tmp_path: Path) -> Services:
    return Services(Settings().with_home(semantic_home_from(indexed_home, tmp_path)))


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    real = status.home_status

    def counted(*args):  # noqa: ANN002, ANN202
        calls.append(1)
        return real(*args)

    monkeypatch.setattr(status, "home_status", counted)
    return calls


def test_opening_and_closing_the_vector_store_is_no_change(holder: Services, monkeypatch) -> None:
    calls = _counting(monkeypatch)
    cache = status.StatusCache()
    first = cache.get(holder)
    wal = holder.settings.vectors_dir / "vectors.sqlite3-wal"
    for _ in range(3):
        reader = VectorStore(holder.settings.vectors_dir)
        reader.count()
        assert wal.exists() and wal.stat().st_size == 0  # the empty log a reader leaves while open
        assert cache.get(holder) is first
        reader.close()
        assert cache.get(holder) is first
    assert len(calls) == 1


def test_a_write_of_vectors_is_a_change(holder: Services, monkeypatch) -> None:
    calls = _counting(monkeypatch)
    cache = status.StatusCache()
    cache.get(holder)
    reader = VectorStore(holder.settings.vectors_dir)  # held open: the write stays in the log
    reader.count()
    path = holder.settings.vectors_dir / VectorStore.FILENAME
    writer = sqlite3.connect(path)
    writer.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('version', ?)", (str(np.int64(10**12)),))
    writer.commit()
    cache.get(holder)
    assert len(calls) == 2  # seen while the write is still in the log
    writer.close()
    reader.close()  # the last connection checkpoints the log into the file
    cache.get(holder)
    assert len(calls) == 3
