"""The optional embedding rule: records whose title+abstract embeddings are near-identical
(cosine above the configured threshold) are the same work written up twice.

It runs only when the semantic stage has stored vectors (``<home>/vectors/vectors.sqlite3``, see
:mod:`searchnasa.semantic`); without them dedup uses the other rules and says so.

On the bundled sample's real vectors (see bench/README.md), embeddings alone also pair
the issues of a series, whose abstracts are boilerplate: "2022 Annual Site Environmental Report"
and its 2023 successor (cosine 0.998), "Nimbus 6 data catalog. Volume 10" and "Volume 11". So a
pair also needs:

- real abstracts on both (at least 200 characters: short texts embed close together);
- years at most one apart when both are known (a report and its journal version straddle a year);
- titles that are not a numbered series: not the same words with other numbers, months or volume
  words, and not mostly the same words with different numbers ("Volume 3-Surry Unit 1" /
  "Volume 2-Sequoyah Unit 2");
- no conflicting identifiers: when both have report numbers they share one, and when both have
  DOIs they are the same (``ORNL/TM-12294/V3`` and ``/V2`` are two volumes, not one work).

Candidates: below ``semantic.exact.EXACT_BELOW`` vectors an exact blocked matrix product over the
changed records; above, one query per changed record to the semantic stage's saved index,
re-scored with the vectors it serves.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path

import numpy as np

from searchnasa.dedup.normalize import fold
from searchnasa.dedup.rules import Edge
from searchnasa.records import Record
from searchnasa.semantic.exact import EXACT_BELOW
from searchnasa.semantic.provider import VectorProvider
from searchnasa.semantic.vectors import VectorStore
from searchnasa.store import Store

log = logging.getLogger(__name__)

MIN_ABSTRACT_CHARS = 200
MAX_YEAR_GAP = 1
NEIGHBOURS = 10
QUERY_BLOCK = 1024

_SERIES_WORDS = re.compile(
    r"\b(?:\d+\w*|january|february|march|april|may|june|july|august|september|october|november|"
    r"december|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec|spring|summer|fall|autumn|winter|"
    r"first|second|third|fourth|fifth|quarter|quarterly|semiannual|annual|volume|vol|part|issue|"
    r"no|number|phase|[ivxlc]+)\b"
)


def vectors_available(vectors_dir: Path | None) -> bool:
    """Whether the semantic stage has stored vectors for this home (else the rule is skipped)."""
    if vectors_dir is None:
        return False
    return (Path(vectors_dir) / VectorStore.FILENAME).is_file()


def _split_digits(text: str) -> str:
    return re.sub(r"(?<=[a-z])(?=\d)|(?<=\d)(?=[a-z])", " ", text)


def series_titles(a: str, b: str) -> bool:
    """True when two different titles look like issues of one series, not one work twice: the same
    words apart from numbers, dates or volume words ("FY22 … report" / "FY24 … report"), or mostly
    the same words (Jaccard >= 0.6) with different numbers ("Volume 10 … orbits 7620-8409")."""
    fa, fb = _split_digits(fold(a)), _split_digits(fold(b))
    if fa == fb:
        return False
    strip = lambda t: " ".join(_SERIES_WORDS.sub(" ", t).split())  # noqa: E731
    if strip(fa) == strip(fb):
        return True
    nums_a = {t for t in fa.split() if t.isdigit()}
    nums_b = {t for t in fb.split() if t.isdigit()}
    words_a, words_b = set(strip(fa).split()), set(strip(fb).split())
    if nums_a and nums_b and nums_a != nums_b and words_a and words_b:
        return len(words_a & words_b) / len(words_a | words_b) >= 0.6
    return False


def _conflicting_identifiers(a: Record, b: Record) -> bool:
    from searchnasa.store.identifiers import normalize_number

    da, db = a.identifiers.doi, b.identifiers.doi
    if da and db and da.lower() != db.lower():
        return True
    ra = {normalize_number(x) for x in a.identifiers.report_numbers}
    rb = {normalize_number(x) for x in b.identifiers.report_numbers}
    return bool(ra and rb and not ra & rb)


def plausible_pair(a: Record, b: Record) -> bool:
    """The guards above: real abstracts, close years, not a numbered series."""
    for rec in (a, b):
        if not rec.abstract or len(rec.abstract) < MIN_ABSTRACT_CHARS:
            return False
    if a.year is not None and b.year is not None and abs(a.year - b.year) > MAX_YEAR_GAP:
        return False
    return not series_titles(a.title, b.title) and not _conflicting_identifiers(a, b)


def _exact_pairs(ids: list[str], matrix: np.ndarray, changed: list[str], threshold: float) -> dict[tuple[str, str], float]:
    pos = {rid: i for i, rid in enumerate(ids)}
    rows = [pos[r] for r in changed if r in pos]
    hits: dict[tuple[str, str], float] = {}
    for start in range(0, len(rows), QUERY_BLOCK):
        block = rows[start:start + QUERY_BLOCK]
        sims = matrix[block] @ matrix.T
        for qi, ci in zip(*np.nonzero(sims >= threshold)):
            a, b = ids[block[qi]], ids[ci]
            if a != b:
                hits[(min(a, b), max(a, b))] = float(sims[qi, ci])
    return hits


def _ann_pairs(vectors_dir: Path, changed: list[str], threshold: float) -> dict[tuple[str, str], float]:
    provider = VectorProvider(vectors_dir)
    hits: dict[tuple[str, str], float] = {}
    if not provider.available():
        return hits
    for rid, vec in provider.vectors_for(changed).items():
        others = [o for o, score in provider.nearest(vec, NEIGHBOURS + 1) if o != rid and score >= threshold - 0.02]
        for other, ovec in provider.vectors_for(others).items():
            sim = float(np.dot(vec, ovec))
            if sim >= threshold:
                hits[(min(rid, other), max(rid, other))] = sim
    return hits


def embedding_edges(store: Store, vectors_dir: Path, changed_ids: list[str], threshold: float) -> list[Edge]:
    """Pairs (changed record, any record) with cosine >= ``threshold`` that pass :func:`plausible_pair`."""
    if not changed_ids:
        return []
    vs = VectorStore(Path(vectors_dir))
    try:
        total = vs.count()
        loaded = vs.load_all() if total < EXACT_BELOW else None
    finally:
        vs.close()
    if loaded is not None:
        hits = _exact_pairs(loaded[0], loaded[1], changed_ids, threshold)
    else:
        log.info("embedding rule: %d changed records against %d vectors via the HNSW index", len(changed_ids), total)
        hits = _ann_pairs(Path(vectors_dir), changed_ids, threshold)
    if not hits:
        return []
    records = store.get_many(sorted({x for pair in hits for x in pair}))
    return [Edge.of(a, b, "embedding", f"near-identical abstracts (cosine {sim:.3f})")
            for (a, b), sim in sorted(hits.items())
            if a in records and b in records and plausible_pair(records[a], records[b])]
