"""The merge rules: which pairs of records are the same work, found by blocking keys, never by
comparing all pairs.

Rules, strongest first (the order union-find applies them in, so a split rule blocks the weakest
link first):

1. ``doi``: the same DOI (from the shared ``identifiers`` table).
2. ``report``: the same report number after normalization (case, spaces, punctuation).
3. ``title``: the same normalized title, the same year and at least one author surname in common.
   Generic series titles ("Quarterly progress report") never form a key.
4. ``embedding``: near-identical title+abstract embeddings (optional, see :mod:`.vectors_rule`).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from searchnasa.dedup.keys import RecordKeys

RULE_ORDER = ("doi", "report", "title", "embedding")


@dataclass(frozen=True)
class Edge:
    """A verified pair, stored with ``a < b`` so each pair is kept once per rule."""

    a: str
    b: str
    rule: str
    reason: str

    @classmethod
    def of(cls, x: str, y: str, rule: str, reason: str) -> "Edge":
        return cls(min(x, y), max(x, y), rule, reason)


def candidate_edges(conn: sqlite3.Connection, keys: RecordKeys) -> list[Edge]:
    """Every pair a record forms with records already keyed (the tables must hold its own keys)."""
    rid = keys.id
    edges: list[Edge] = []
    if keys.doi:
        for (other,) in conn.execute(
                "SELECT record_id FROM identifiers WHERE kind='doi' AND value_norm=? AND record_id != ?",
                (keys.doi, rid)):
            edges.append(Edge.of(rid, other, "doi", f"same DOI {keys.doi}"))
    for kind, norm, value in keys.idents:
        if kind != "report":
            continue
        for (other,) in conn.execute(
                "SELECT record_id FROM identifiers WHERE kind='report' AND value_norm=? AND record_id != ?",
                (norm, rid)):
            edges.append(Edge.of(rid, other, "report", f"same report number {value}"))
    display = dict(keys.names)
    for _, value, extra in keys.title_keys:
        mine = extra.split()
        year = value.rsplit("|", 1)[1]
        for other, other_extra in conn.execute(
                "SELECT record_id, extra FROM dedup_keys WHERE kind='title' AND value=? AND record_id != ?",
                (value, rid)):
            theirs = set(other_extra.split())
            common = [s for s in mine if s in theirs]
            if common:
                who = display.get(common[0], common[0].title())
                edges.append(Edge.of(rid, other, "title", f"same title, year {year}, author {who}"))
    return edges
