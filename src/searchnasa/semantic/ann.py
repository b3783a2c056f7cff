"""The kinds of saved vector index, and the one place that picks between them: which kind to
build from the vector store (:func:`build_from_store`) and which to open (:func:`load_index`).

- ``hnsw`` (:mod:`.hnsw`): a usearch graph of int8 vectors, all of it wanted in RAM: the fastest;
- ``ivfpq`` (:mod:`.ivfpq`): faiss IVF-PQ, compact codes in RAM and int8 rows read from disk per
  query, for machines whose RAM cannot hold the graph next to the lexical index.

Both share the saved layout of :mod:`.saved` (sorted ids, id hashes, ``ann.json``), so the
provider, the delta of newer vectors and hybrid fusion use either the same way. Below
:data:`.exact.EXACT_BELOW` vectors no index is built: the provider searches exactly.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from searchnasa.errors import BadInput
from searchnasa.semantic.hnsw import HnswBuilder, HnswIndex, HnswParams
from searchnasa.semantic.ivfpq import IvfPqBuilder, IvfPqIndex, IvfPqParams
from searchnasa.semantic.saved import BUILD_CHUNK, Builder, SavedIndex, stream_build

KINDS = ("hnsw", "ivfpq")


class UnknownIndexKind(BadInput, ValueError):
    """A vector index kind that does not exist (a typo in a setting or option): the CLI prints it
    as a bad input; library callers may catch it as the ValueError it always was."""


def check_kind(kind: str) -> str:
    """A vector index kind, validated (a clear error rather than a stack trace for a typo)."""
    if kind not in KINDS:
        raise UnknownIndexKind(f"unknown vector index {kind!r}: choose one of {', '.join(KINDS)}")
    return kind


def load_index(folder: Path, kind: str = "hnsw", version: str | None = None) -> SavedIndex | None:
    """The saved index of ``kind`` (see :data:`KINDS`), or None (missing, another kind, stale)."""
    if kind == "ivfpq":
        return IvfPqIndex.load(folder, version)
    return HnswIndex.load(folder, version)


def build_from_store(conn: sqlite3.Connection, folder: Path, uid: str | None = None, kind: str = "hnsw",
                     params: object | None = None, threads: int = 0, chunk: int = BUILD_CHUNK) -> SavedIndex:
    """Build and save the vector index (``kind``: see :data:`KINDS`) of every vector in a vector
    store, streaming (:func:`.saved.stream_build`), and open it."""
    check_kind(kind)

    def start(cursor: sqlite3.Cursor, count: int, target: Path) -> Builder:
        if kind == "ivfpq":
            return IvfPqBuilder(params or IvfPqParams.for_count(count), cursor, count, target, threads)  # type: ignore[arg-type]
        return HnswBuilder(params or HnswParams(), threads)  # type: ignore[arg-type]

    version, target = stream_build(conn, folder, uid, kind, start, chunk)
    loaded = load_index(folder, kind, version)
    if loaded is None:
        raise RuntimeError(f"the vector index just saved in {target} does not load")
    return loaded
