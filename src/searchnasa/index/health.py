"""Is the live index usable? And if it is corrupt or outdated, rebuild it from the store.

The store is the source of truth; the index is derived data. A generation damaged on disk (a
truncated or overwritten segment, a garbled ``meta.json``, a ``CURRENT`` that names nothing), or
one built by a version with another index schema (whose queries would name fields it lacks) or
another topic crosswalk (whose ``topic`` values would be stale), is
therefore not a reason to stop serving forever: :func:`check_index` finds the damage by opening the
index and exercising every structure a search touches (term dictionary, postings, stored cards,
fast fields), and :func:`repair_index` builds a fresh generation from the store and swaps it in
atomically, exactly as ``searchnasa index --rebuild`` does. ``searchnasa serve`` runs both at start.

Tantivy reports damage as ``ValueError`` on open, and a Rust panic inside a read surfaces as
``pyo3_runtime.PanicException``, which derives from ``BaseException``: both count as corrupt here.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

import orjson
import tantivy

from searchnasa.index import layout
from searchnasa.index.schema import STEM_ANALYZER

log = logging.getLogger(__name__)

PROBE_DOCS = 5
# Tantivy takes a lock file even to read; on a read-only mount that fails. Not damage: no rebuild.
UNOPENABLE = ("Read-only file system", "Permission denied")
PROBE_WORDS = 8


@dataclass
class IndexHealth:
    """What :func:`check_index` found. ``state`` is ``ok``, ``missing`` (never built), ``corrupt``
    or ``outdated`` (built for another schema version or topic crosswalk: rebuild it), or ``unavailable`` (cannot be
    opened here, e.g. a read-only mount)."""

    state: str
    generation: str | None = None
    documents: int | None = None
    problem: str | None = None

    @property
    def ok(self) -> bool:
        return self.state == "ok"


def _describe(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text[:300]}"


def _probe(generation: Path) -> int:
    """Open ``generation`` and read it the ways a search does; returns its document count."""
    state = layout.read_state(generation)
    if state is None:
        raise ValueError(f"{layout.STATE} is missing or unreadable")
    index = tantivy.Index.open(str(generation))
    searcher = index.searcher()
    documents = searcher.num_docs
    if documents != state.documents:
        raise ValueError(f"{documents} documents, but the last build recorded {state.documents}")
    if documents == 0:
        return 0
    everything = tantivy.Query.all_query()
    result = searcher.search(everything, limit=PROBE_DOCS, count=True)
    if result.count != documents:
        raise ValueError(f"a full scan counts {result.count} of {documents} documents")
    schema = index.schema
    for _, address in result.hits:
        doc = searcher.doc(address)
        record_id = doc.get_first("id")
        card = orjson.loads(doc.get_first("card"))  # stored cards decode
        found = searcher.search(tantivy.Query.term_query(schema, "id", record_id), limit=1, count=True)
        if found.count != 1:  # the term dictionary and postings agree with the stored documents
            raise ValueError(f"record {record_id!r} is stored but its id term finds {found.count}")
        for token in STEM_ANALYZER.analyze(card.get("title") or "")[:PROBE_WORDS]:
            for name in ("title", "abstract"):  # walk whole posting lists of real words, as a search does
                hits = searcher.search(tantivy.Query.term_query(schema, name, token), limit=10, count=True)
                if name == "title" and not hits.count:
                    raise ValueError(f"the title word {token!r} of {record_id!r} finds nothing")
    searcher.aggregate(everything, {"source": {"terms": {"field": "source", "size": 10}}})  # fast fields
    return documents


def check_index(index_dir: Path) -> IndexHealth:
    """Check the live generation under ``index_dir`` without changing anything."""
    index_dir = Path(index_dir)
    pointer = index_dir / layout.CURRENT
    generation = layout.current_generation(index_dir)
    if generation is None:
        if pointer.exists():
            name = pointer.read_bytes()[:60].decode("utf-8", "replace").strip()
            return IndexHealth("corrupt", problem=f"{layout.CURRENT} names {name!r}, which is not a generation")
        return IndexHealth("missing")
    state = layout.read_state(generation)
    stale = layout.stale_reason(state) if state is not None else None
    if state is not None and stale is not None:  # another schema or crosswalk: rebuild
        return IndexHealth("outdated", generation=generation.name, documents=state.documents, problem=stale)
    try:
        documents = _probe(generation)
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:  # ValueError from Tantivy, or a Rust panic (PanicException)
        problem = _describe(exc)
        if any(sign in problem for sign in UNOPENABLE):  # the files may be fine; we cannot lock them
            return IndexHealth("unavailable", generation=generation.name, problem=problem)
        return IndexHealth("corrupt", generation=generation.name, problem=problem)
    return IndexHealth("ok", generation=generation.name, documents=documents)


def repair_index(store, index_dir: Path) -> IndexHealth:
    """Rebuild the index from ``store`` into a fresh generation, publish it, and check it again.

    Readers holding the damaged generation keep their open files until they reload; new readers
    open the new ``CURRENT``. The damaged folder is left as the previous generation (for a look)
    and removed by the next full build.
    """
    from searchnasa.index.build import build_index

    report = build_index(store, index_dir, rebuild=True)
    log.warning("index rebuilt from the store: %d records into %s", report.indexed, report.generation)
    return check_index(index_dir)


def ensure_healthy_index(home: Path, index_dir: Path) -> IndexHealth:
    """At start: leave a healthy or never-built index alone; rebuild a corrupt one from the store.

    A failure to rebuild (a read-only replica, a full disk) is logged and reported, not raised:
    the server then starts anyway and ``/readyz`` says why it cannot serve.
    """
    health = check_index(index_dir)
    if health.state == "unavailable":
        log.error("search index %s cannot be opened here (%s); searches answer 503 until it can "
                  "(the index folder must be writable: Tantivy takes a lock file even to read)",
                  health.generation, health.problem)
    if health.state not in ("corrupt", "outdated"):
        return health
    log.error("search index %s is %s (%s); rebuilding it from the store",
              health.generation or index_dir, health.state, health.problem)
    from searchnasa.store import open_store

    if not (Path(home) / "store.sqlite3").exists():
        log.error("no store under %s to rebuild the index from", home)
        return IndexHealth(health.state, generation=health.generation,
                           problem=f"{health.problem}; no store to rebuild from")
    try:
        store = open_store(home)
        try:
            if store.count() == 0:
                log.error("the store under %s is empty: nothing to rebuild the index from; "
                          "serving it as it is", home)
                return IndexHealth(health.state, generation=health.generation,
                                   problem=f"{health.problem}; the store is empty, nothing to rebuild from")
            repaired = repair_index(store, index_dir)
        finally:
            store.close()
    except (KeyboardInterrupt, SystemExit):
        raise
    except Exception as exc:
        log.error("could not rebuild the index: %s", _describe(exc))
        return IndexHealth(health.state, generation=health.generation,
                           problem=f"rebuild failed: {_describe(exc)}")
    if not repaired.ok:
        log.error("the rebuilt index is not usable either: %s", repaired.problem)
    return repaired
