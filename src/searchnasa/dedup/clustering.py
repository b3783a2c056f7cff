"""The ``searchnasa dedup`` batch job: key the changed records, verify candidate pairs, and rebuild
clusters with union-find.

Incremental by store ``seq``: only records changed since the last run are re-keyed and compared,
but each is compared with *everything* through the key tables, so a new OSTI record finds the
NTRS copy loaded years ago. Edges are few (only real duplicates), so the clusters themselves are
rebuilt from all edges every run; that is also what makes a new split rule take effect at once.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from searchnasa.store import identifiers
from searchnasa.store import Store
from searchnasa.dedup.config import DedupConfig
from searchnasa.dedup.keys import RecordKeys, compute_keys, keys_for_range
from searchnasa.dedup.rules import RULE_ORDER, Edge, candidate_edges
from searchnasa.store.clusters import ensure_schema
from searchnasa.dedup.vectors_rule import embedding_edges, vectors_available

log = logging.getLogger(__name__)

SEQ_META_KEY = "dedup_seq"


@dataclass
class DedupReport:
    """What a run did; the CLI prints it."""

    scanned: int = 0
    identifiers_indexed: int = 0
    edges_found: int = 0
    clusters: int = 0
    records_in_clusters: int = 0
    blocked_by_split: int = 0
    embeddings_used: bool = False

    def summary(self) -> str:
        emb = "with" if self.embeddings_used else "without"
        return (f"{self.scanned:,} changed records compared; {self.clusters:,} clusters hold "
                f"{self.records_in_clusters:,} records; {self.edges_found:,} new pairs; "
                f"{self.blocked_by_split:,} links blocked by split rules; {emb} the embedding rule")


class _UnionFind:
    """Union-find with cannot-link constraints: a union that would put two split ids together is refused."""

    def __init__(self, config: DedupConfig) -> None:
        self.parent: dict[str, str] = {}
        self.config = config
        split_ids = {i for rule in config.splits for i in rule.ids}
        self.guarded: dict[str, set[str]] = {}  # root -> split-listed ids in its component
        self._split_ids = split_ids

    def find(self, x: str) -> str:
        parent = self.parent
        parent.setdefault(x, x)
        root = x
        while parent[root] != root:
            root = parent[root]
        while parent[x] != root:  # path compression
            parent[x], x = root, parent[x]
        return root

    def union(self, a: str, b: str) -> bool:
        """Join the components of ``a`` and ``b``; ``False`` when a split rule forbids it."""
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return True
        ga = self.guarded.get(ra, {a} & self._split_ids)
        gb = self.guarded.get(rb, {b} & self._split_ids)
        if any(self.config.separated(x, y) for x in ga for y in gb):
            return False
        if ra > rb:
            ra, rb, ga, gb = rb, ra, gb, ga
        self.parent[rb] = ra
        merged = ga | gb
        if merged:
            self.guarded[ra] = merged
        self.guarded.pop(rb, None)
        return True


def _reset(store: Store) -> None:
    with store.transaction() as conn:
        conn.execute("DELETE FROM dedup_keys")
        conn.execute("DELETE FROM dedup_edges")
        store.delete_meta(SEQ_META_KEY, conn)


def _rekey(store: Store, batch: list[RecordKeys]) -> list[Edge]:
    """Replace the identifiers, keys and edges of these records and find their pairs; one
    transaction, which also moves both checkpoints (identifiers and dedup) to the batch's last seq."""
    found: list[Edge] = []
    with store.transaction() as conn:
        identifiers.write_rows(conn, [(k.id, k.idents) for k in batch])
        ids = [(k.id,) for k in batch]
        conn.executemany("DELETE FROM dedup_keys WHERE record_id = ?", ids)
        conn.executemany("DELETE FROM dedup_edges WHERE a = ? AND rule != 'embedding'", ids)
        conn.executemany("DELETE FROM dedup_edges WHERE b = ? AND rule != 'embedding'", ids)
        conn.executemany(
            "INSERT OR IGNORE INTO dedup_keys (kind, value, record_id, extra) VALUES (?,?,?,?)",
            [(kind, value, k.id, extra) for k in batch for kind, value, extra in k.title_keys],
        )
        for keys in batch:
            found.extend(candidate_edges(conn, keys))
        found = list(dict.fromkeys(found))  # a pair inside one batch is found from both sides
        conn.executemany("INSERT OR IGNORE INTO dedup_edges (a, b, rule, reason) VALUES (?,?,?,?)",
                         [(e.a, e.b, e.rule, e.reason) for e in found])
        last_seq = str(batch[-1].seq)
        for key in (SEQ_META_KEY, identifiers.SEQ_META_KEY):
            store.set_meta(key, last_seq, conn)
    return found


def _local_batches(store: Store, since: int, batch_size: int) -> Iterator[list[RecordKeys]]:
    batch: list[RecordKeys] = []
    for seq, record in store.iter_records(since, batch_size=batch_size):
        batch.append(compute_keys(seq, record))
        if len(batch) >= batch_size:
            yield batch
            batch = []
    if batch:
        yield batch


def _dask_batches(client: Any, store: Store, since: int, batch_size: int) -> Iterator[list[RecordKeys]]:
    """Keys computed by Dask workers, one seq range per task, applied in seq order.

    A bounded number of tasks is in flight (two per worker thread), so a run over millions of
    records never queues them all; results come back in submission order so the checkpoint only
    ever moves past fully written ranges.
    """
    top = store.max_seq()
    bounds = [(lo, min(lo + batch_size, top)) for lo in range(since, top, batch_size)]
    if not bounds:
        return
    in_flight = max(2, 2 * sum(client.nthreads().values()))
    path = str(store.path)
    pending: deque[Any] = deque()
    queue = deque(bounds)
    while queue or pending:
        while queue and len(pending) < in_flight:
            lo, hi = queue.popleft()
            pending.append(client.submit(keys_for_range, path, lo, hi, pure=False))
        batch = pending.popleft().result()
        if batch:
            yield batch


def _store_embedding_edges(store: Store, changed: list[str], edges: list[Edge]) -> None:
    with store.transaction() as conn:
        rows = [(i,) for i in changed]
        conn.executemany("DELETE FROM dedup_edges WHERE a = ? AND rule = 'embedding'", rows)
        conn.executemany("DELETE FROM dedup_edges WHERE b = ? AND rule = 'embedding'", rows)
        conn.executemany("INSERT OR IGNORE INTO dedup_edges (a, b, rule, reason) VALUES (?,?,?,?)",
                         [(e.a, e.b, e.rule, e.reason) for e in edges])


def rebuild_clusters(store: Store, config: DedupConfig) -> tuple[int, int, int]:
    """Union-find over all stored edges, honouring split rules; rewrites ``clusters``.

    Returns ``(clusters, records in clusters, merges blocked by split rules)``.
    """
    with store.reading() as conn:
        edges = [Edge(*row) for row in conn.execute("SELECT a, b, rule, reason FROM dedup_edges")]
    rank = {rule: i for i, rule in enumerate(RULE_ORDER)}
    edges.sort(key=lambda e: (rank.get(e.rule, len(rank)), e.a, e.b))
    uf = _UnionFind(config)
    accepted: list[Edge] = []
    blocked = 0
    for edge in edges:
        if uf.union(edge.a, edge.b):
            accepted.append(edge)
        else:
            blocked += 1
    components: dict[str, list[str]] = {}
    for rid in list(uf.parent):
        components.setdefault(uf.find(rid), []).append(rid)
    members = {rid: root for root, ids in components.items() if len(ids) > 1 for rid in ids}
    reasons: dict[str, list[dict[str, str]]] = {}
    for e in accepted:
        for rid in (e.a, e.b):
            reasons.setdefault(rid, []).append({"a": e.a, "b": e.b, "rule": e.rule, "text": e.reason})
    rows = []
    ids = sorted(members)
    for start in range(0, len(ids), 1000):
        recs = store.get_many(ids[start:start + 1000])
        for rid in ids[start:start + 1000]:
            rec = recs.get(rid)
            if rec is None:
                continue
            rows.append((rid, members[rid], rec.source, rec.url, rec.title, orjson.dumps(reasons.get(rid, [])).decode()))
    with store.transaction() as conn:
        conn.execute("DELETE FROM clusters")
        conn.executemany(
            "INSERT INTO clusters (record_id, cluster_id, source, url, title, reasons) VALUES (?,?,?,?,?,?)", rows)
    n_clusters = len({r[1] for r in rows})
    return n_clusters, len(rows), blocked


def records_to_compare(store: Store, full: bool = False) -> int:
    """How many records a run will compare (the progress total): all of them with ``full``, else
    those changed since the last run."""
    return store.count() if full else max(store.max_seq() - int(store.get_meta(SEQ_META_KEY) or 0), 0)


def run_dedup(store: Store, config: DedupConfig | None = None, vectors_dir: Path | None = None,
              full: bool = False, batch_size: int = 2000,
              on_progress: Callable[[int], None] | None = None, client: Any | None = None) -> DedupReport:
    """Bring identifiers, keys, pairs and clusters up to date with the store (see module docstring).

    ``full`` forgets what earlier runs did and compares every record again (after a rule change).
    ``client`` is a ``distributed.Client``: keys are then computed on its workers (a LocalCluster
    or a scheduler address); without one everything runs in this process. Results are identical.
    """
    config = config or DedupConfig()
    report = DedupReport()
    ensure_schema(store)
    identifiers.ensure_schema(store)
    if full:
        _reset(store)
        with store.transaction() as conn:
            conn.execute("DELETE FROM identifiers")
            store.delete_meta(identifiers.SEQ_META_KEY, conn)
    since = int(store.get_meta(SEQ_META_KEY) or 0)
    ident_since = int(store.get_meta(identifiers.SEQ_META_KEY) or 0)
    if ident_since < since:  # the identifier table lags (e.g. restored from an old copy): catch it up
        report.identifiers_indexed = identifiers.build_identifier_table(store)
    # From here one pass keeps both tables: pairs are looked up in identifiers the batch just wrote.
    use_vectors = config.embeddings_enabled and vectors_available(vectors_dir)
    report.embeddings_used = use_vectors
    changed: list[str] = []
    batches = (_dask_batches(client, store, since, batch_size) if client is not None
               else _local_batches(store, since, batch_size))
    for batch in batches:
        report.edges_found += len(_rekey(store, batch))
        report.scanned += len(batch)
        report.identifiers_indexed += len(batch)
        if use_vectors:
            changed.extend(k.id for k in batch)
        if on_progress:
            on_progress(len(batch))
    if use_vectors and changed:
        for start in range(0, len(changed), 5000):
            part = changed[start:start + 5000]
            emb = embedding_edges(store, vectors_dir, part, config.embedding_threshold)  # type: ignore[arg-type]
            _store_embedding_edges(store, part, emb)
            report.edges_found += len(emb)
    report.clusters, report.records_in_clusters, report.blocked_by_split = rebuild_clusters(store, config)
    log.info("dedup: %s", report.summary())
    return report
