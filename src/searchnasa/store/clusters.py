"""Where clusters live (tables in the store) and the read API search and web use.

Tables (created by :func:`ensure_schema`, written only by :mod:`.clustering`):

- ``dedup_keys(kind, value, record_id, extra)``: blocking keys other than DOI and report number
  (those come from the shared ``identifiers`` table): ``title`` keys are ``<title>|<year>`` with
  the author surnames in ``extra``.
- ``dedup_edges(a, b, rule, reason)``: every verified pair, ``a < b``; the input of union-find.
- ``clusters(record_id, cluster_id, source, url, title, reasons)``: one row per record that has at
  least one copy; ``reasons`` is a JSON list of the accepted merges touching that record. Records
  without a copy have no row, so the table stays small.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import orjson

from searchnasa.records import SOURCE_LABELS
from searchnasa.store.sqlite_util import select_in
from searchnasa.store.database import Store

SCHEMA = """
CREATE TABLE IF NOT EXISTS dedup_keys (
    kind TEXT NOT NULL,
    value TEXT NOT NULL,
    record_id TEXT NOT NULL,
    extra TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (kind, value, record_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS dedup_keys_record ON dedup_keys(record_id);
CREATE TABLE IF NOT EXISTS dedup_edges (
    a TEXT NOT NULL,
    b TEXT NOT NULL,
    rule TEXT NOT NULL,
    reason TEXT NOT NULL,
    PRIMARY KEY (a, b, rule)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS dedup_edges_b ON dedup_edges(b);
CREATE TABLE IF NOT EXISTS clusters (
    record_id TEXT PRIMARY KEY,
    cluster_id TEXT NOT NULL,
    source TEXT NOT NULL,
    url TEXT,
    title TEXT NOT NULL,
    reasons TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS clusters_cluster ON clusters(cluster_id);
"""


def ensure_schema(store: Store) -> None:
    store.ensure_tables(SCHEMA)


def has_clusters(store: Store) -> bool:
    """False before the first ``searchnasa dedup`` run (and on a read-only store without it)."""
    return store.has_table("clusters")


@dataclass(frozen=True)
class ClusterMember:
    """One copy of the work: enough to link to it without loading the record."""

    id: str
    source: str
    url: str | None
    title: str

    @property
    def source_label(self) -> str:
        return SOURCE_LABELS.get(self.source, self.source)


@dataclass(frozen=True)
class MergeReason:
    """Why two copies were merged, in words a user can check ("same DOI 10.1103/…")."""

    a: str
    b: str
    rule: str
    text: str


@dataclass
class Cluster:
    """Copies of one work across NTRS and OSTI (two or more members), and why they were merged."""

    id: str
    members: list[ClusterMember] = field(default_factory=list)
    reasons: list[MergeReason] = field(default_factory=list)

    @property
    def member_ids(self) -> list[str]:
        return [m.id for m in self.members]

    def others(self, record_id: str) -> list[ClusterMember]:
        return [m for m in self.members if m.id != record_id]

    def also_in(self, record_id: str) -> list[dict[str, str]]:
        """The ``SearchHit.also_in`` entries for a card showing ``record_id``."""
        return [{"id": m.id, "source": m.source, "source_label": m.source_label, "url": m.url or ""}
                for m in self.others(record_id)]

    def reasons_for(self, record_id: str) -> list[MergeReason]:
        """The merges that tie ``record_id`` to the other copies directly."""
        return [r for r in self.reasons if record_id in (r.a, r.b)]


def clusters_for(store: Store, ids: list[str]) -> dict[str, Cluster]:
    """``id -> Cluster`` for the ids that have copies; two indexed queries for a page of up to 500 ids."""
    if not ids or not has_clusters(store):
        return {}
    ids = list(dict.fromkeys(ids))
    owner: dict[str, str] = {}
    rows: list[tuple] = []
    with store.reading() as conn:
        owner.update(select_in(conn, "SELECT record_id, cluster_id FROM clusters WHERE record_id IN ({marks})",
                               ids))
        if not owner:
            return {}
        cids = sorted(set(owner.values()))
        rows.extend(select_in(conn, "SELECT cluster_id, record_id, source, url, title, reasons FROM clusters "
                                    "WHERE cluster_id IN ({marks}) ORDER BY cluster_id, record_id", cids))
    built: dict[str, Cluster] = {}
    seen_reasons: dict[str, set[tuple[str, str, str]]] = {}
    for cid, rid, source, url, title, reasons in rows:
        cluster = built.setdefault(cid, Cluster(cid))
        cluster.members.append(ClusterMember(rid, source, url, title))
        seen = seen_reasons.setdefault(cid, set())
        for r in orjson.loads(reasons):
            key = (r["a"], r["b"], r["rule"])
            if key not in seen:
                seen.add(key)
                cluster.reasons.append(MergeReason(r["a"], r["b"], r["rule"], r["text"]))
    return {rid: built[cid] for rid, cid in owner.items() if cid in built}


def cluster_of(store: Store, record_id: str) -> Cluster | None:
    """The cluster holding ``record_id``, or ``None`` when the record has no other copy."""
    return clusters_for(store, [record_id]).get(record_id)
