"""A reader that always serves the latest committed index and never a half-built one.

Each call to :meth:`IndexReader.searcher` checks (two ``stat`` calls) whether ``CURRENT`` points to
a new generation or the live generation has a new commit, and reloads if so. A searcher is a
consistent snapshot: a search that holds one is unaffected by commits made while it runs.
"""

from __future__ import annotations

import threading
from pathlib import Path

import tantivy

from searchnasa.errors import IndexMissing
from searchnasa.index import layout


def _mtime(path: Path) -> int:
    try:
        return path.stat().st_mtime_ns
    except FileNotFoundError:
        return -1


def _refuse_stale(generation: Path) -> None:
    """A generation built for another index schema or topic crosswalk is not served: its queries
    would name fields it lacks, or its topics would be stale. Said as a 503 with the way out
    (``searchnasa serve`` rebuilds it at start, ``searchnasa index`` rebuilds it any time)."""
    state = layout.read_state(generation)
    reason = layout.stale_reason(state) if state is not None else None
    if reason is not None:
        raise IndexMissing(f"the search index at {generation} is outdated ({reason}); rebuild it with "
                           "`searchnasa index` (`searchnasa serve` rebuilds it at start)")


class IndexReader:
    """Opens the live generation lazily; reopens on a new generation, reloads on a new commit."""

    def __init__(self, index_dir: Path) -> None:
        self.index_dir = Path(index_dir)
        self._lock = threading.Lock()
        self._index: tantivy.Index | None = None
        self._generation: Path | None = None
        self._stamp: tuple[int, int] = (-2, -2)

    def _current_stamp(self) -> tuple[int, int]:
        gen = self._generation
        meta = _mtime(gen / "meta.json") if gen is not None else -1
        return _mtime(self.index_dir / layout.CURRENT), meta

    def _refresh(self) -> None:
        stamp = self._current_stamp()
        if stamp == self._stamp and self._index is not None:
            return
        with self._lock:
            generation = layout.current_generation(self.index_dir)
            if generation is None:
                raise IndexMissing(
                    f"no search index at {self.index_dir}: run `searchnasa index` first")
            try:
                if generation != self._generation or self._index is None:
                    _refuse_stale(generation)
                    index = tantivy.Index.open(str(generation))
                    index.config_reader(reload_policy="Manual")
                    self._index, self._generation = index, generation
                else:
                    self._index.reload()
            except ValueError as exc:  # damaged, or not lockable (read-only mount): a 503, not a 500
                raise IndexMissing(f"the search index at {generation} cannot be opened ({exc}); "
                                   "rebuild it with `searchnasa index --rebuild`") from exc
            self._stamp = self._current_stamp()

    @property
    def stamp(self) -> tuple[int, int] | None:
        """The commit this reader serves (CURRENT's and the generation's meta.json's mtimes); None
        before it has opened an index. The facet cache keys on it."""
        return self._stamp if self._index is not None else None

    @property
    def index(self) -> tantivy.Index:
        self._refresh()
        assert self._index is not None
        return self._index

    def searcher(self) -> tantivy.Searcher:
        """A consistent snapshot of the latest commit."""
        return self.index.searcher()

    @property
    def generation(self) -> Path | None:
        return self._generation
