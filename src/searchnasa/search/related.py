"""Related papers: "more like this one" (or these, and less like that), with reasons a user can read.

Candidates come from two places and are fused:

- **lexical**: the seed's own words (title, abstract, keywords) as one search on the index, every
  word optional and BM25-scored the way a search scores them (title matches and words side by
  side count more): the same lexical arm a hybrid search of the seed's text would run;
- **semantic neighbours**: the nearest vectors to the seeds' mean embedding (when the records
  have been embedded; without vectors the lexical half works alone).

Each candidate's score fuses the two as hybrid search does (each list min-max normalized, then a
weighted sum, ``W_SEMANTIC`` on the cosine), plus small boosts for a shared subject category,
organization or report series, minus its similarity to the negative seeds. The seed is a whole
paper, so all of it is used: an earlier form kept only its 30 most distinctive terms with
hand-made weights and ranked below a plain hybrid search of the same text on every eval set
(bench/README.md, "Related papers"). The record itself and its exact duplicates (same DOI, or same
title with near-identical text) are never listed, nor is a record withdrawn upstream (its vector
may still be in the vector index). Reasons name what was measured:
"similar in meaning 0.82 · same subject: AERODYNAMICS · shared terms: boundary layer, transition".
The list is ranked by the fused score (``RelatedItem.score``); the cosine shown as "similar in
meaning" is one part of it, so the pages say that its figure need not fall in the list's order.

Where the home stores sentence vectors (``searchnasa embed --sentences``), the first
``sentence_match.HEAD`` candidates are re-ranked with their sentence similarity to the seeds (every
seed sentence's closest sentence in the candidate, averaged; negatives play no part in it), and
each item shows its best pair, seed sentence ~ its sentence ("matching sentences 0.74" and
``RelatedItem.sentence_pair``). A stored seed's sentences come from storage too; a seed or home
without them ranks exactly as before (bench/README.md, "Sentence vectors (issue 17)").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import tantivy

from searchnasa.errors import BadInput, EmbedderBusy, NotFound
from searchnasa.limits import MAX_SEEDS
from searchnasa.organizations import canonical_organization
from searchnasa.records import SOURCE_LABELS, Record
from searchnasa.search.cards import date_label
from searchnasa.search.fusion import weighted_sum
from searchnasa.search.lexical import weighted_words_query
from searchnasa.search.protocols import SemanticProvider
from searchnasa.search.record_match import is_duplicate, organizations_behind, report_series
from searchnasa.search.schemas import RelatedItem, SentencePair
from searchnasa.search.sentence_match import HEAD, SentenceMatch, adds_nothing, fuse_head, match_all
from searchnasa.search.shared_terms import Rarity, clauses, shared_terms
from searchnasa.search.text import cut_at_last_space
from searchnasa.sentences import record_sentences
from searchnasa.store import Store
from searchnasa.store.withdrawn import withdrawn_among

if TYPE_CHECKING:
    from searchnasa.search.service import SearchService

MAX_LIMIT = 100
SIMILARITY_REASON = "similar in meaning"  # the cosine's reason; the pages explain the figure
SENTENCE_REASON = "matching sentences"    # the best sentence pair's cosine; the pair is shown beside it
PAIR_PREVIEW_CHARS = 240
ABSTRACT_PREVIEW_CHARS = 300

# Tuning (chosen on the sample's proxies and the SciFact related-mode run; see bench/README.md).
MAX_SEED_WORDS = 150      # the seed's words searched (a long abstract's first 150 say what it is)
COMMON_SHARE = 0.2        # a long seed's words held by more of the records: scored on the candidates only
TWO_PASS_WORDS = 50       # from this many seed words on (a paper, not a title or a claim)
CANDIDATES = 200          # taken from each of the lexical and the semantic lists
W_SEMANTIC = 0.7          # chosen on SciFact in related mode, confirmed on NPL and CSFCube
BOOST_SUBJECT = 0.04      # per shared subject category, at most two counted
BOOST_ORGANIZATION = 0.02
BOOST_SERIES = 0.03
NEGATIVE_WEIGHT = 0.5

Q = tantivy.Query
Occur = tantivy.Occur
_SEED_WORD = re.compile(r"[^\W_][\w\-]*")


@dataclass
class Seed:
    """A paper to find relatives of: a stored record, or free text (a BEIR query paper)."""

    title: str
    abstract: str
    record: Record | None = None
    vector: np.ndarray | None = None

    @property
    def id(self) -> str | None:
        return self.record.id if self.record else None

    @classmethod
    def of(cls, record: Record) -> Seed:
        return cls(title=record.title, abstract=record.abstract or "", record=record)


@dataclass
class Candidate:
    id: str
    lexical: float = 0.0
    cosine: float | None = None
    negative: float = 0.0
    boost: float = 0.0
    score: float = 0.0
    reasons: list[str] = field(default_factory=list)
    sentence: SentenceMatch | None = None   # with stored sentence vectors (see :func:`_sentence_rerank`)
    seed_sentence: str | None = None        # the seed's side of its best pair
    pair: SentencePair | None = None        # the pair shown (set by :func:`_explain`)


@dataclass
class RelatedParts:
    """The pieces of a search service that related papers use."""

    store: Store
    searcher_fn: Callable[[], tantivy.Searcher]
    schema: tantivy.Schema
    semantic: SemanticProvider | None = None
    # how long embedding a seed that has no stored vector may wait for the model (the web's
    # search wait; None: as long as it takes, as the CLI does). Past it the seed ranks by words.
    embed_wait: float | None = None


# -- reaching into the service -----------------------------------------------------------------
def parts_of(service: SearchService) -> RelatedParts:
    """The store, index and semantic provider of a search service."""
    return RelatedParts(store=service.store, searcher_fn=service.reader.searcher,
                        schema=service.reader.index.schema, semantic=service.semantic,
                        embed_wait=service.semantic_wait)


def _semantic_ready(parts: RelatedParts) -> bool:
    return bool(parts.semantic is not None and parts.semantic.available())


# -- the seed's words -------------------------------------------------------------------------
def seed_words(seeds: Sequence[Seed]) -> list[str]:
    """The seeds' words in order (title, abstract, keywords), at most ``MAX_SEED_WORDS``: repeated
    words stay, so a word the paper keeps using weighs more, as in the text itself."""
    words: list[str] = []
    for seed in seeds:
        extra = " ".join(seed.record.keywords) if seed.record else ""
        words.extend(_SEED_WORD.findall(f"{seed.title} {seed.abstract} {extra}"))
    return words[:MAX_SEED_WORDS]


def seed_query(schema: tantivy.Schema, words: Sequence[str],
               searcher: tantivy.Searcher | None = None) -> tuple[tantivy.Query, tantivy.Query | None]:
    """Any of the seed's words, scored as the same words OR-joined score them (each word's BM25
    times its count, title matches boosted, and the proximity of the seed's adjacent words), in
    the flat form Tantivy ranks without scoring every record that holds one of them
    (:func:`weighted_words_query`). A seed of ``TWO_PASS_WORDS`` words or more (a paper's title
    and abstract) is split in two when a ``searcher`` is given: the query that finds the
    candidates, and the clauses of the words more than ``COMMON_SHARE`` of the records hold
    (None when there are none), scored on those candidates only (:func:`_lexical_candidates`).

    At 1M SYNTHETIC records, 30 seeds, the query alone: p50 / p95 574-790 / 884-1,323 ms with
    each word compiled as often as written, 332-381 / 438-595 with each distinct word compiled
    once (nested per word: Tantivy scored the whole union), 65-89 / 127-140 flat. Flat counts a
    hyphenated word as its parts rather than as a phrase: nDCG@10 related, with sentences,
    SciFact 0.7435 -> 0.7455, NPL 0.5084 both, CSFCube-related dev 0.6175 -> 0.6162 (without
    sentences 0.7329 -> 0.7346, 0.5084, 0.6047 -> 0.6039). Leaving out the most frequent words
    altogether was faster still but lost on every eval set; scoring them in the second pass keeps
    every candidate's score exact (bench/README.md, "Related papers at 1M").
    """
    if searcher is None or len(words) < TWO_PASS_WORDS:  # a short seed is cheap in one pass
        return weighted_words_query(schema, words)
    limit = COMMON_SHARE * searcher.num_docs

    def common(field: str, term: str) -> bool:
        return searcher.doc_freq(field, term) > limit

    return weighted_words_query(schema, words, common)


def _lexical_candidates(parts: RelatedParts, seeds: Sequence[Seed], k: int) -> dict[str, float]:
    """The top ``k`` records for the seeds' words searched with any word optional, and their BM25.

    In two passes (:func:`seed_query`): the words most records hold are what costs (their
    postings' blocks can rarely be skipped) and what ranks least (their IDF is near 0), so the
    candidates are found without them, and their share of the score is then added to each
    candidate exactly. Only the pool can differ from one pass: a record that would enter the top
    ``k`` on common words alone."""
    words = seed_words(seeds)
    if not words:
        return {}
    searcher = parts.searcher_fn()
    query, common = seed_query(parts.schema, words, searcher)
    out: dict[str, float] = {}
    at: dict[tuple[int, int], str] = {}  # the same searcher answers both passes: an address is a record
    for score, addr in searcher.search(query, limit=k, count=False).hits:
        rid = searcher.doc(addr).get_first("id")
        if rid:
            out[rid] = float(score)
            at[(addr.segment_ord, addr.doc)] = rid
    if common is not None and out:
        ids = Q.const_score_query(Q.term_set_query(parts.schema, "id", list(out)), 0.0)
        for score, addr in searcher.search(Q.boolean_query([(Occur.Must, ids), (Occur.Should, common)]),
                                           limit=len(out), count=False).hits:
            rid = at.get((addr.segment_ord, addr.doc))
            if rid is not None:
                out[rid] += float(score)
    return out


# -- boosts ------------------------------------------------------------------------------------
def _apply_boosts(c: Candidate, seeds: Sequence[Seed], rec: Record, common: set[str]) -> None:
    """Shared subject, organization or series; ``common`` holds organizations too frequent to mean much."""
    seed_recs = [s.record for s in seeds if s.record]
    subjects = [s for s in dict.fromkeys(rec.subjects) if any(s in r.subjects for r in seed_recs)]
    if subjects:
        c.boost += BOOST_SUBJECT * min(2, len(subjects))
        c.reasons.append("same subject: " + ", ".join(subjects[:2]))
    orgs = sorted(o for o in organizations_behind(rec)
                  if o not in common and any(o in organizations_behind(r) for r in seed_recs))
    if orgs:
        c.boost += BOOST_ORGANIZATION
        c.reasons.append("same organization: " + orgs[0])
    series = sorted(report_series(rec) & set().union(*(report_series(r) for r in seed_recs))) if seed_recs else []
    if series:
        c.boost += BOOST_SERIES
        c.reasons.append("same report series: " + series[0])


COMMON_ORG_RATIO = 0.05


def _common_organizations(parts: RelatedParts, seeds: Sequence[Seed]) -> set[str]:
    """Seed organizations shared by more than 5% of the collection (e.g. a catalogue's umbrella)."""
    searcher = parts.searcher_fn()
    n_docs = max(1, searcher.num_docs)
    orgs = set().union(*(organizations_behind(s.record) for s in seeds if s.record)) if seeds else set()
    return {o for o in orgs
            if searcher.doc_freq("organization_value", canonical_organization(o)) > COMMON_ORG_RATIO * n_docs}


# -- the algorithm -----------------------------------------------------------------------------
def _unit(v: np.ndarray) -> np.ndarray:
    n = float(np.linalg.norm(v))
    return v / n if n > 0 else v


def _centroids(parts: RelatedParts, seeds: Sequence[Seed],
               negatives: Sequence[Seed]) -> tuple[np.ndarray | None, np.ndarray | None]:
    """The unit mean vectors of the seeds and of the negatives (None without vectors)."""
    if not _semantic_ready(parts):
        return None, None
    sem = parts.semantic
    assert sem is not None
    need = [s.id for s in (*seeds, *negatives) if s.id and s.vector is None]
    have = sem.vectors_for(need) if need else {}
    for s in (*seeds, *negatives):
        if s.vector is None:
            # a record not embedded yet (or free text) is embedded now: one short model call
            s.vector = have.get(s.id) if s.id else None
            if s.vector is None and (s.title or s.abstract):
                try:
                    s.vector = sem.embed_text(f"{s.title}\n{s.abstract}".strip(), wait=parts.embed_wait)
                except EmbedderBusy:  # the model is still loading: this seed ranks by its words
                    s.vector = None
    seed_vecs = [s.vector for s in seeds if s.vector is not None]
    neg_vecs = [s.vector for s in negatives if s.vector is not None]
    return (_unit(np.mean(seed_vecs, axis=0)) if seed_vecs else None,
            _unit(np.mean(neg_vecs, axis=0)) if neg_vecs else None)


def _candidates(parts: RelatedParts, seeds: Sequence[Seed], negatives: Sequence[Seed],
                centroid: np.ndarray | None, neg_centroid: np.ndarray | None) -> dict[str, Candidate]:
    """Lexical and semantic candidates with their lexical score, cosine, negative similarity and
    base score; the seeds and negatives themselves excluded."""
    exclude = {s.id for s in seeds if s.id} | {s.id for s in negatives if s.id}
    cands: dict[str, Candidate] = {}
    lexical = _lexical_candidates(parts, seeds, CANDIDATES)
    top_lex = max(lexical.values(), default=0.0)
    for rid, score in lexical.items():
        cands[rid] = Candidate(rid, lexical=score / top_lex if top_lex else 0.0)
    if negatives:
        for rid, score in _lexical_candidates(parts, negatives, CANDIDATES).items():
            if rid in cands:
                cands[rid].negative = max(cands[rid].negative, score / top_lex if top_lex else 0.0)
    if centroid is not None and parts.semantic is not None:
        query = centroid - NEGATIVE_WEIGHT * 0.5 * neg_centroid if neg_centroid is not None else centroid
        for rid, _sim in parts.semantic.nearest(_unit(query), CANDIDATES + len(exclude)):
            cands.setdefault(rid, Candidate(rid))
        vecs = parts.semantic.vectors_for(list(cands))
        for rid, c in cands.items():
            v = vecs.get(rid)
            if v is not None:
                c.cosine = float(np.dot(v, centroid))
                if neg_centroid is not None:
                    c.negative = max(c.negative, float(np.dot(v, neg_centroid)))
    for rid in exclude:
        cands.pop(rid, None)
    cosines = [(rid, c.cosine) for rid, c in cands.items() if c.cosine is not None]
    # the seeds themselves (a record's best lexical match) are out before normalizing
    lex = [(rid, score) for rid, score in lexical.items() if rid in cands]
    fused = dict(weighted_sum(lex, cosines, W_SEMANTIC if cosines else 0.0))
    for rid, c in cands.items():
        c.score = fused.get(rid, 0.0) - NEGATIVE_WEIGHT * c.negative
    return cands


# -- sentences ---------------------------------------------------------------------------------
def _seed_sentences(parts: RelatedParts, seeds: Sequence[Seed]) -> tuple[list[str], np.ndarray] | None:
    """The seeds' sentences and their vectors: a stored seed's from storage (None when it has none:
    the list is then ranked without sentences), a free-text seed's embedded now (a few short texts)."""
    sem = parts.semantic
    assert sem is not None
    texts: list[str] = []
    mats: list[np.ndarray] = []
    stored = sem.sentence_vectors_for([s.id for s in seeds if s.id])
    for seed in seeds:
        units = record_sentences(seed.title, seed.abstract)
        if seed.id:
            mat = stored.get(seed.id)
            if mat is None or len(mat) != len(units):
                return None
        else:
            try:
                mat = sem.embed_sentences(units, wait=parts.embed_wait)
            except EmbedderBusy:
                return None
        texts.extend(units)
        mats.append(mat)
    return (texts, np.vstack(mats)) if texts else None


def _sentence_rerank(parts: RelatedParts, seeds: Sequence[Seed], ordered: list[Candidate]) -> list[Candidate]:
    """Re-rank the first :data:`HEAD` candidates by the fused score and sentence similarity
    (search/sentence_match.py) when the home stores sentence vectors; otherwise ``ordered`` as is."""
    if not _semantic_ready(parts) or len(ordered) < 2:
        return ordered
    assert parts.semantic is not None
    head = ordered[:HEAD]
    stored = parts.semantic.sentence_vectors_for([c.id for c in head])
    seed = _seed_sentences(parts, seeds) if stored else None
    if seed is None:
        return ordered
    seed_texts, seed_mat = seed
    if adds_nothing(len(seed_texts), [len(m) for m in stored.values()]):
        return ordered
    sentence: list[float] = []
    with_rows = [c for c in head if c.id in stored]
    for c, found in zip(with_rows, match_all(seed_mat, [stored[c.id] for c in with_rows])):
        c.sentence = found
    for c in head:
        sentence.append(c.sentence.similarity if c.sentence else (c.cosine or 0.0))
        if c.sentence:
            c.seed_sentence = seed_texts[c.sentence.seed_index]
    for c, score in zip(head, fuse_head([c.score for c in head], sentence)):
        c.score = score
    return sorted(head, key=lambda c: (-c.score, c.id)) + ordered[HEAD:]


def _pair_for(c: Candidate, rec: Record) -> SentencePair | None:
    """The best pair with this record's sentence filled in; None when its sentences no longer
    split as they were embedded (the stored row would not line up with the text)."""
    if c.sentence is None or c.seed_sentence is None:
        return None
    units = record_sentences(rec.title, rec.abstract)
    if len(units) != c.sentence.other_count:
        return None
    return SentencePair(seed=cut_at_last_space(c.seed_sentence, PAIR_PREVIEW_CHARS),
                        related=cut_at_last_space(units[c.sentence.other_index], PAIR_PREVIEW_CHARS),
                        similarity=round(c.sentence.pair_cosine, 4))


def _explain(parts: RelatedParts, seeds: Sequence[Seed], kept: list[tuple[Candidate, Record]]) -> None:
    """Reasons a reader can check: the similarity of meaning, the boosts' reasons, the shared terms
    (search/shared_terms.py: informative words and phrases, never filler)."""
    rarity = Rarity(parts.searcher_fn())
    seed_texts = [f"{s.title}. {s.abstract}" for s in seeds]
    title_words = {w for s in seeds for clause in clauses(s.title) for w in clause}
    for c, rec in kept:
        head = []
        if c.cosine is not None:
            head.append(f"{SIMILARITY_REASON} {c.cosine:.2f}")
        c.pair = _pair_for(c, rec)
        if c.pair is not None:
            head.append(f"{SENTENCE_REASON} {c.pair.similarity:.2f}")
        terms = shared_terms(seed_texts, f"{rec.title}. {rec.abstract or ''}", rarity, title_words)
        tail = [f"shared terms: {', '.join(terms)}"] if terms else []
        c.reasons = head + c.reasons + tail
        if not c.reasons:
            c.reasons = ["similar wording"]


def rank_related(parts: RelatedParts, seeds: Sequence[Seed], negatives: Sequence[Seed] = (),
                 limit: int = 20, explain: bool = True) -> list[tuple[Candidate, Record]]:
    """Rank candidates for ``seeds`` (records or free text); the core of :func:`find_related`."""
    centroid, neg_centroid = _centroids(parts, seeds, negatives)
    cands = _candidates(parts, seeds, negatives, centroid, neg_centroid)
    ordered = _sentence_rerank(parts, seeds, sorted(cands.values(), key=lambda c: (-c.score, c.id)))
    # Boosts and duplicate checks need whole records: look at a margin beyond the limit.
    pool = ordered[: max(limit * 3, 60)]
    records = parts.store.get_many([c.id for c in pool])
    for rid in withdrawn_among(parts.store, list(records)):  # its vector may outlive it in the index
        del records[rid]
    common = _common_organizations(parts, seeds)
    seed_records = [s.record for s in seeds if s.record]
    negative_records = [s.record for s in negatives if s.record]
    kept: list[tuple[Candidate, Record]] = []
    for c in pool:
        rec = records.get(c.id)
        if rec is None:
            continue
        cosine = c.cosine if len(seeds) == 1 else None  # with one seed the centroid is the seed
        if any(is_duplicate(sr, rec, cosine) for sr in seed_records):
            continue
        if any(is_duplicate(nr, rec) for nr in negative_records):
            continue
        _apply_boosts(c, seeds, rec, common)
        c.score += c.boost
        kept.append((c, rec))
    kept.sort(key=lambda cr: (-cr[0].score, cr[0].id))
    kept = kept[:limit]
    if explain:
        _explain(parts, seeds, kept)
    return kept




def to_item(c: Candidate, rec: Record) -> RelatedItem:
    return RelatedItem(
        id=rec.id, source=rec.source, source_label=SOURCE_LABELS[rec.source], title=rec.title,
        abstract=rec.abstract, abstract_truncated=cut_at_last_space(rec.abstract, ABSTRACT_PREVIEW_CHARS),
        year=rec.year, date_label=date_label(rec.year), url=rec.url, score=round(c.score, 4),
        similarity=round(c.cosine, 4) if c.cosine is not None else None, reasons=c.reasons,
        sentence_pair=c.pair,
    )


def _load(store: Store, ids: Iterable[str]) -> list[Record]:
    ids = [i.strip() for i in ids if i and i.strip()]
    found = store.get_many(ids) if ids else {}
    missing = [i for i in ids if i not in found]
    if missing:
        raise NotFound(f"no record with id {missing[0]!r}" + (f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""))
    return [found[i] for i in dict.fromkeys(ids)]


def find_related(service: SearchService, seed_ids: list[str], negative_ids: list[str] | None = None,
                 limit: int = 20) -> list[RelatedItem]:
    """The most related records to ``seed_ids`` (less like ``negative_ids``), each with reasons.

    Raises :class:`NotFound` for an unknown id and :class:`BadInput` for an empty or oversized
    request, so the web layer answers 404/400 JSON and the CLI one line.
    """
    negative_ids = negative_ids or []
    if not seed_ids:
        raise BadInput("give at least one seed record id")
    if len(seed_ids) + len(negative_ids) > MAX_SEEDS:
        raise BadInput(f"at most {MAX_SEEDS} seed and negative ids together")
    if both := sorted(set(seed_ids) & set(negative_ids)):
        # the API answers this itself in its own words (ids / negative_ids); the CLI meets it here
        raise BadInput(f"a record cannot be both a seed and a negative: {', '.join(both)}")
    if not 1 <= limit <= MAX_LIMIT:
        raise BadInput(f"limit must be between 1 and {MAX_LIMIT}")
    parts = parts_of(service)
    seeds = [Seed.of(r) for r in _load(parts.store, seed_ids)]
    negatives = [Seed.of(r) for r in _load(parts.store, negative_ids)]
    return [to_item(c, rec) for c, rec in rank_related(parts, seeds, negatives, limit)]
