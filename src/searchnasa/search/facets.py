"""Facet counts of a search: each facet counted under every filter except its own, exact up to
``FACET_EXACT_MAX`` matches and estimated on the index's uniform sample above it.

Facets are most of a search's cost at scale, so :class:`FacetCounter` remembers them per index
snapshot, query and filters: turning a page, changing the sort or coming back to a query reuses
them. A search running alone counts them on a thread of :func:`facet_pool` beside its ranked page
(Tantivy releases the GIL while it searches and aggregates, so the two use two cores).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import tantivy

from searchnasa.index.reader import IndexReader
from searchnasa.index.schema import SAMPLE_RATES
from searchnasa.limits import NO_DATE_LABEL
from searchnasa.search.lexical import with_filters
from searchnasa.search.schemas import FacetBucket
from searchnasa.settings import env_number
from searchnasa.topics import topic_label

Q = tantivy.Query
Occur = tantivy.Occur

FACET_SIZE = 15
# The author facet is counted for result sets up to this many matches. Its field holds tens of
# thousands of distinct names, and counting it over a large result set was most of a search's
# facet time at 1M records (p95 14.8 -> 21.4 ms); a broad result set's top authors say little,
# and the author filter (name keys) works at any size (bench/README.md, "Hardening, round two").
AUTHOR_FACET_MAX = 5_000
# Above this many matches, facets other than source are estimated on a uniform sample holding
# at least FACET_SAMPLE_TARGET of the matches (see ``FacetCounter.count``). Read through the
# module (``facets.FACET_EXACT_MAX``) by the service and the fused page, which skip counting
# what the facets' exact source pass counts anyway.
FACET_EXACT_MAX = 40_000
FACET_SAMPLE_TARGET = 5_000
# Threads per process that count facets while the request's own thread ranks the page.
FACET_THREADS = 4

# facet name -> the request filter it ignores (so a facet shows what choosing it would give)
FACET_OWN_FILTER = {"source": "source", "decade": "year", "year": "year", "no_date": "year",
                    "document_type": "document_type", "topic": "topic", "subject": "subject",
                    "organization": "organization", "author": "author"}
_AGGS = {
    "source": {"terms": {"field": "source", "size": 10}},
    # every year (limits.YEAR_MIN..YEAR_MAX is 1,101 years), not a top-N: the year histogram. The
    # records without a year are the matches less the years' sum (``no_date``): counting them as a
    # ``missing`` bucket cost a visit of every match's year column once more.
    "year": {"terms": {"field": "year", "size": 1200}},
    "document_type": {"terms": {"field": "document_type", "size": FACET_SIZE}},
    "topic": {"terms": {"field": "topic", "size": 64}},  # every topic (topics.toml holds 10-16)
    "subject": {"terms": {"field": "subject_value", "size": FACET_SIZE}},
    "organization": {"terms": {"field": "organization_value", "size": FACET_SIZE}},
    "author": {"terms": {"field": "author_value", "size": FACET_SIZE}},
}
# facets computed from another facet's aggregation
_DERIVED = {"decade": "year", "no_date": "year"}

Facets = tuple[dict[str, list[FacetBucket]], list[str]]  # (counts per facet, names of estimated facets)
Snapshot = tuple[Any, ...]

_facet_pool: ThreadPoolExecutor | None = None
_facet_pool_lock = threading.Lock()


def facet_pool() -> ThreadPoolExecutor:
    """The process's facet threads, started on first use (after a server forks its workers)."""
    global _facet_pool
    with _facet_pool_lock:
        if _facet_pool is None:
            _facet_pool = ThreadPoolExecutor(max_workers=FACET_THREADS, thread_name_prefix="facets")
        return _facet_pool


def facet_cache_size() -> int:
    """Entries the facet cache keeps (``SEARCHNASA_FACET_CACHE``; 0 turns the cache off, as
    benchmarks that time cold searches over HTTP do). Read per search: tests and operators set it."""
    return max(0, int(env_number("FACET_CACHE", int)))


def index_snapshot(reader: IndexReader) -> Snapshot | None:
    """What identifies the index snapshot the reader's next searcher serves: the live generation
    and the reader's stamp of its commit (``IndexReader`` reloads when either changes); None
    before the reader has opened an index."""
    stamp = reader.stamp
    if reader.generation is None or stamp is None:
        return None
    return (str(reader.generation), stamp)


class FacetCounter:
    """Facet counts with a bounded cache per index snapshot, query and filters."""

    def __init__(self) -> None:
        self._cache: OrderedDict[tuple[Any, ...], Facets] = OrderedDict()
        self._lock = threading.Lock()

    def clear(self) -> None:
        with self._lock:
            self._cache.clear()

    def cached(self, snapshot: Snapshot | None, searcher: tantivy.Searcher, schema: tantivy.Schema,
               base: tantivy.Query, filters: dict[str, tantivy.Query], total: int | None) -> Facets:
        """:meth:`count`, remembered per snapshot, query and filters (the page and the sort do
        not change facet counts). The thresholds are part of the key: they decide exact vs
        estimated counts. ``total`` (known, or None when counted beside the page) is not: it only
        spares the facet pass a count, the counts are the same."""
        size = facet_cache_size()
        if size <= 0 or snapshot is None:
            return self.count(searcher, schema, base, filters, known_total=total)
        key = (snapshot, searcher.num_docs, repr(base), tuple(sorted((n, repr(q)) for n, q in filters.items())),
               FACET_EXACT_MAX, FACET_SAMPLE_TARGET)
        with self._lock:
            hit = self._cache.get(key)
            if hit is not None:
                self._cache.move_to_end(key)
        if hit is None:
            hit = self.count(searcher, schema, base, filters, known_total=total)
            with self._lock:
                self._cache[key] = hit
                while len(self._cache) > size:
                    self._cache.popitem(last=False)
        facets, estimated = hit
        return {name: list(buckets) for name, buckets in facets.items()}, list(estimated)

    def count(self, searcher: tantivy.Searcher, schema: tantivy.Schema, base: tantivy.Query,
              filters: dict[str, tantivy.Query], known_total: int | None = None) -> Facets:
        """Facet counts for the query under every filter except the facet's own.

        Up to ``FACET_EXACT_MAX`` matches, every facet is exact (one aggregation pass). Above it,
        source counts stay exact (one cheap pass) and the other facets are counted on the index's
        uniform id-hash sample (the ``sample`` posting list intersected with the query, so the
        cost no longer grows with the number of matches) and scaled up; their names are returned
        as estimated.
        """
        groups: dict[str | None, list[str]] = {}
        for facet, own in FACET_OWN_FILTER.items():
            groups.setdefault(own if own in filters else None, []).append(facet)
        raw: dict[str, list[dict[str, Any]]] = {}
        estimated: list[str] = []
        for excluded, facets in groups.items():
            query = with_filters(base, [q for name, q in filters.items() if name != excluded])
            matches = known_total if excluded is None else None
            raw.update(_group_buckets(searcher, schema, query, facets, matches, estimated))
        return _buckets(raw), sorted(set(estimated), key=list(FACET_OWN_FILTER).index)


def _group_buckets(searcher: tantivy.Searcher, schema: tantivy.Schema, query: tantivy.Query,
                   facets: list[str], matches: int | None, estimated: list[str]) -> dict[str, list[dict[str, Any]]]:
    """Raw buckets of the facets that share one set of filters; appends the estimated ones to
    ``estimated``. ``matches``: the query's match count when known."""
    wanted = {_DERIVED.get(f, f) for f in facets}
    if matches is not None and matches <= FACET_EXACT_MAX:
        if matches > AUTHOR_FACET_MAX:
            wanted.discard("author")
        result = searcher.aggregate(query, {f: _AGGS[f] for f in wanted})
        scaled: dict[str, Any] = {}
    else:
        result = {}
        if "source" in wanted or matches is None:
            # one cheap exact pass: the tab counts, and the number of matches to scale by
            # (skipped when a source filter leaves this group without the source facet
            # and the page already counted the matches)
            result = searcher.aggregate(query, {"source": _AGGS["source"]})
            matches = sum(int(b["doc_count"]) for b in result.get("source", {}).get("buckets", []))
        if matches > AUTHOR_FACET_MAX:
            wanted.discard("author")
        rest = {f: _AGGS[f] for f in wanted if f != "source"}
        scaled = sampled_aggs(searcher, schema, query, rest, matches) if rest else {}
        if scaled.get("_scale", 1.0) != 1.0:
            estimated.extend(f for f in facets if f != "source" and _DERIVED.get(f, f) in wanted)
    raw: dict[str, list[dict[str, Any]]] = {}
    for f in facets:
        key = _DERIVED.get(f, f)
        source = scaled if key in scaled else result
        scale = scaled.get("_scale", 1.0) if key in scaled else 1.0
        raw[f] = [{"key": b["key"], "doc_count": min(matches, round(int(b["doc_count"]) * scale))}
                  for b in source.get(key, {}).get("buckets", [])]
    if "no_date" in raw:  # every match has one year or none: the rest have none
        raw["no_date"] = [{"key": "", "doc_count": max(0, matches - sum(b["doc_count"] for b in raw["no_date"]))}]
    return raw


def _years(buckets: list[dict[str, Any]]) -> dict[int, int]:
    return {int(b["key"]): int(b["doc_count"]) for b in buckets}


def _buckets(raw: dict[str, list[dict[str, Any]]]) -> dict[str, list[FacetBucket]]:
    """Raw aggregation buckets as the response's facets: years in order, decades summed from
    them, the records without a year as one ``no_date`` bucket, the rest by count (topics with
    their labels)."""
    out: dict[str, list[FacetBucket]] = {}
    for facet in FACET_OWN_FILTER:
        buckets = raw.get(facet, [])
        if facet == "decade":
            decades: dict[int, int] = {}
            for year, n in _years(buckets).items():
                decades[year // 10 * 10] = decades.get(year // 10 * 10, 0) + n
            out[facet] = [FacetBucket(value=f"{d}s", count=n) for d, n in sorted(decades.items())]
        elif facet == "year":
            out[facet] = [FacetBucket(value=str(y), count=n) for y, n in sorted(_years(buckets).items())]
        elif facet == "no_date":
            out[facet] = [FacetBucket(value=NO_DATE_LABEL, count=sum(int(b["doc_count"]) for b in buckets))]
        else:
            out[facet] = sorted((FacetBucket(value=str(b["key"]), count=int(b["doc_count"]),
                                             label=topic_label(str(b["key"])) if facet == "topic" else None)
                                 for b in buckets), key=lambda b: (-b.count, b.value))
    return out


def sampled_aggs(searcher: tantivy.Searcher, schema: tantivy.Schema, query: tantivy.Query,
                 aggs: dict[str, Any], matches: int) -> dict[str, Any]:
    """Run ``aggs`` exactly when ``matches`` is small, else on the sparsest sample level that
    still holds about FACET_SAMPLE_TARGET matches; ``_scale`` says how to scale the counts.

    The level's posting list drives the intersection, so a common word's postings are skipped
    through rather than walked. (A level is not narrowed further by a range of the id hash
    ``key``: a range on a fast-only column scans the column, which costs more than the
    aggregation work it saves.)
    """
    if matches <= FACET_EXACT_MAX:
        return {**searcher.aggregate(query, aggs), "_scale": 1.0}
    rate = SAMPLE_RATES[0]
    for candidate in SAMPLE_RATES:
        if matches / candidate >= FACET_SAMPLE_TARGET:
            rate = candidate
    sampled_query = Q.boolean_query([(Occur.Must, Q.term_query(schema, "sample", str(rate))),
                                     (Occur.Must, query)])
    result = searcher.aggregate(sampled_query, {**aggs, "_n": _AGGS["source"]})
    sampled = sum(int(b["doc_count"]) for b in result.get("_n", {}).get("buckets", []))
    return {**result, "_scale": matches / max(sampled, 1)}
