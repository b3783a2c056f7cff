"""Hybrid retrieval: semantic candidates admitted through the query's strict part, and the
relevance page: the records that match the query, ranked by the fused score (the fused head, then
the lexical tail), then the records only close in meaning.

The contract: the result set is the records that match the query as read. They alone are
counted in ``total`` and the facets, and only they are sorted by date. Semantic candidates that
match are ranked among them by the fused score; candidates that do not match are *extras*: listed
after every match (on the last pages, or filling a page when fewer records match), labelled, and
counted apart (``extras_total``). Semantic candidates are admitted only if they satisfy the
query's strict part (phrases, field clauses, exclusions) and every filter, so a hybrid page never
shows what the query excludes. Fusion (:mod:`.fusion`) is a min-max weighted sum of BM25 and
the cosine of every fused candidate (lexical hits included) when the provider can score given
records, reciprocal rank fusion otherwise or on request (``fusion_method="rrf"``). Where the home
stores sentence vectors, the head of the matches is re-ranked by sentence (:func:`sentence_head`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import tantivy

from searchnasa.errors import EmbedderBusy, SearchNasaError
from searchnasa.index.schema import id_key
from searchnasa.search import facets, fusion
from searchnasa.search.lexical import compile_node, with_filters
from searchnasa.search.protocols import SemanticProvider
from searchnasa.search.query_tree import IdSet, Node, has_loose, positive_texts, strict_part
from searchnasa.search.ranked import Ranked
from searchnasa.search.schemas import Mode
from searchnasa.search.sentence_match import HEAD, adds_nothing, fuse_head, match_all
from searchnasa.sentences import record_sentences

log = logging.getLogger(__name__)

Q = tantivy.Query
Occur = tantivy.Occur

FUSION_DEPTH = 200  # lexical hits fused with semantic candidates; deeper ranks follow lexical order
SEMANTIC_K = 200  # semantic candidates asked for
NO_WORD_MATCH = "No record contains these words; showing records close in meaning."


@dataclass(frozen=True)
class SemanticSetup:
    """How a search service uses its semantic provider."""

    provider: SemanticProvider | None
    # None: wait for the query encoder (CLI, eval). The web passes a few tenths of a second so
    # that under load, or while the model loads, a search answers with keywords instead of queueing.
    wait: float | None = None
    fusion_method: str = "weighted"  # or "rrf"


@dataclass(frozen=True)
class Candidates:
    """The semantic side of one search: the effective mode, the admitted candidate ids in
    similarity order, their similarities, and the text that was embedded."""

    mode: str
    admitted: list[str] = field(default_factory=list)
    sims: dict[str, float] = field(default_factory=dict)
    text: str = ""


@dataclass(frozen=True)
class Retrieval:
    """One request's lexical side on one index snapshot, as the fused page reads it."""

    searcher: tantivy.Searcher
    schema: tantivy.Schema
    main: tantivy.Query  # the query tree, compiled
    filters: list[tantivy.Query]  # every filter of the request
    # an equivalent form of ``main`` for the lexical top list that Tantivy can skip through when
    # not counting (a lone word), with the match count the caller knows for it
    ranking: tantivy.Query | None = None
    lexical_estimate: int | None = None
    # scores the semantic candidates that lack some of the words by those they hold
    # (:func:`~.lexical.partial_query`)
    partial: tantivy.Query | None = None


@dataclass(frozen=True)
class PageSlice:
    """A ranked page and the total it belongs to (None: not counted here, the facets' exact
    source pass counts it); ``lexical_matches`` is 0 when no record contains the words."""

    total: int | None
    ranked: list[Ranked]
    lexical_matches: int = -1
    extras_total: int = 0  # records close in meaning that do not match (listed after the matches)
    extra_keys: frozenset[int] = frozenset()  # which of ``ranked`` are such extras, by key


def semantic_candidates(setup: SemanticSetup, mode: Mode, tree: Node, searcher: tantivy.Searcher,
                        schema: tantivy.Schema, notices: list[str], typed_words: list[str] | None = None) -> Candidates:
    """Ask the provider for candidates and admit those the query's strict part and filters allow;
    explains in ``notices`` why a search stayed lexical. The model reads ``typed_words`` (the
    query as typed, stop words included) when given, else the words the tree holds."""
    if mode == "lexical" or isinstance(tree, IdSet):
        return Candidates("lexical")
    provider = setup.provider
    if provider is None or not provider.available():
        if mode == "semantic":
            notices.append("Semantic search is not available; showing keyword matches.")
        return Candidates("lexical")
    if not has_loose(tree):
        if mode == "semantic":
            notices.append("The query holds only exact parts (phrases, fields, exclusions); "
                           "showing keyword matches.")
        return Candidates("lexical")
    text = " ".join(typed_words or positive_texts(tree))
    try:
        wait = {"wait": setup.wait} if setup.wait is not None else {}
        found = provider.query_candidates(text, SEMANTIC_K, **wait)
    except Exception as exc:  # a failing provider must not break search
        if isinstance(exc, SearchNasaError) and exc.code == "semantic_busy":  # loading, or shedding load
            notices.append("Semantic search is busy; showing keyword matches.")
            return Candidates("lexical")
        log.exception("semantic provider failed")
        notices.append("Semantic search failed; showing keyword matches.")
        return Candidates("lexical")
    sims: dict[str, float] = {}
    for rid, sim in found:
        sims.setdefault(rid, float(sim))
    if not sims:
        if mode == "semantic":
            notices.append("No record is close in meaning to this query.")
        return Candidates(mode, text=text)
    admitted = _admitted(searcher, schema, tree, list(sims))
    return Candidates(mode, admitted, {rid: sims[rid] for rid in admitted}, text)


def _admitted(searcher: tantivy.Searcher, schema: tantivy.Schema, tree: Node, ids: list[str]) -> list[str]:
    """The candidates ``ids`` that satisfy the query's strict part, in the order given."""
    strict = strict_part(tree)
    check = Q.term_set_query(schema, "id", ids)
    if strict is not None:
        check = Q.boolean_query([(Occur.Must, check), (Occur.Must, compile_node(schema, strict, searcher))])
    result = searcher.search(check, limit=len(ids), count=False)
    # which candidates passed, by the ``key`` fast field (the id's 63-bit hash) rather than
    # each hit's stored document: 200 stored-document reads a query were random block reads
    # and decompressions, the bulk of a hybrid query's disk reads at 4M under a memory limit
    passed = set(searcher.fast_field_values("key", [addr for _, addr in result.hits]))
    return [rid for rid in ids if id_key(rid) in passed]


def fused_page(view: Retrieval, cands: Candidates, setup: SemanticSetup, offset: int, limit: int,
               may_skip_count: bool, extras: bool = True) -> PageSlice:
    """The matches in relevance order (fused head, then the lexical tail), then, when ``extras``,
    the candidates close in meaning that do not match.

    The matches are counted here unless ``may_skip_count`` (no source filter: the facets' exact
    source pass counts the same set) and there are more than the facets count in one pass, and
    the page lies inside the fused head; the total is then None.

    The lexical scores are normalized between the best and 0 when the lexical list holds every
    match (fewer than ``FUSION_DEPTH``): the last of three records holding every word used to
    score like a record holding none. A truncated list keeps its last score as the floor."""
    searcher = view.searcher
    addr_of, sem_rank = _semantic_ranks(view, cands.admitted)
    if cands.mode == "semantic":
        window = sem_rank[offset:offset + limit]
        return PageSlice(len(sem_rank), [Ranked(addr_of[k], 0.0) for k in window], 0)

    lex_query = with_filters(view.main, view.filters)
    lex = searcher.search(with_filters(view.ranking, view.filters) if view.ranking is not None else lex_query,
                          limit=FUSION_DEPTH, count=view.lexical_estimate is None)
    lexical_matches = int(lex.count or 0) if view.lexical_estimate is None else view.lexical_estimate
    lex_keys = searcher.fast_field_values("key", [a for _, a in lex.hits])
    for k, (_, a) in zip(lex_keys, lex.hits):
        addr_of.setdefault(k, a)
    lexical = [(k, float(s)) for k, (s, _) in zip(lex_keys, lex.hits)]
    fused = None
    if setup.fusion_method == "weighted" and setup.provider is not None:
        fused = _weighted_head(view, cands, setup.provider, lexical, sem_rank, addr_of)
    if fused is None:
        fused = fusion.reciprocal_rank_fusion([[str(k) for k in lex_keys], [str(k) for k in sem_rank]])
    outside = _not_matching(view, cands.admitted, sem_rank)
    head = [(int(k), score) for k, score in fused if int(k) not in outside]
    if setup.provider is not None:
        head = sentence_head(view, cands, setup.provider, head, addr_of, setup.wait)
    close = [(int(k), score) for k, score in fused if int(k) in outside] if extras else []
    page = [Ranked(addr_of[k], score) for k, score in head[offset:offset + limit]]
    total: int | None = None
    if not may_skip_count or lexical_matches <= facets.FACET_EXACT_MAX or len(page) < limit:
        total = int(searcher.search(lex_query, limit=1, count=True).count or 0)
    if total is not None and len(page) < limit and offset + len(page) < total:
        page.extend(_lexical_tail(view, lex_query, [k for k, _ in head], cands.admitted, addr_of,
                                  max(0, offset - len(head)), limit - len(page)))
    if total is not None and len(page) < limit and close:  # past the last match: the extras
        skip = max(0, offset - total)
        page.extend(Ranked(addr_of[k], score) for k, score in close[skip:skip + limit - len(page)])
    return PageSlice(total, page, lexical_matches if lex.hits else 0, len(close),
                     frozenset(k for k, _ in close))


def sentence_head(view: Retrieval, cands: Candidates, provider: SemanticProvider,
                  head: list[tuple[int, float]], addr_of: dict[int, Any],
                  wait: float | None = None) -> list[tuple[int, float]]:
    """The first ``sentence_match.HEAD`` matches re-ranked by their fused score and the query's
    best match among each one's sentences, when the home stores sentence vectors (as related
    papers re-rank theirs; :mod:`.sentence_match`). A claim often matches one sentence of an
    abstract that the abstract's single vector dilutes. Matches stay matches and keep their place
    above the rest: only the head's order changes.

    A query of one sentence (nearly every typed query) is the vector the candidates were found
    with (no second model call); a longer one (a pasted abstract) has its sentences embedded in one
    call, and each looks for its counterpart. A head of one-sentence records met by a one-sentence
    query is left as it is (``adds_nothing``: the sentence similarity would be the cosine counted
    twice). Records with no stored sentences take their record cosine. Constants chosen with related papers' on SciFact,
    confirmed on NPL and CSFCube-related dev (bench/README.md, "Sentence constants on ONNX vectors").
    """
    top = head[:HEAD]
    # optional in a provider: one without the method (an older plugin) has no sentence vectors
    has_sentences = getattr(provider, "has_sentence_vectors", None)
    if len(top) < 2 or not cands.text or has_sentences is None or not has_sentences():
        return head
    try:
        ids = _ids_of(view.searcher, cands.admitted, [k for k, _ in top], addr_of)
        stored = provider.sentence_vectors_for(list(ids.values()))
        units = record_sentences("", cands.text)
        if not stored or adds_nothing(len(units), [len(m) for m in stored.values()]):
            return head
        if len(units) > 1:
            query = provider.embed_sentences(units, wait=wait)
        else:  # the candidates' own query vector: memoized
            query = provider.embed_text(cands.text, wait=wait)[None, :]
        rows = [stored.get(ids.get(k, ""), _NO_ROWS) for k, _ in top]
        missing = [k for k, row in zip((k for k, _ in top), rows) if not len(row)]
        cosines = (provider.similarities_by_key(cands.text, missing) or {}) if missing else {}
        found = match_all(query, rows)
        sentence = [m.similarity if m else cosines.get(k, 0.0) for (k, _), m in zip(top, found)]
    except EmbedderBusy:  # a pasted abstract's sentences met a busy model: the fused order stands
        return head
    except Exception:  # a failing provider must not break search: the fused order stands
        log.exception("sentence re-rank failed; keeping the fused order")
        return head
    scores = fuse_head([s for _, s in top], sentence)
    order = sorted(range(len(top)), key=lambda i: (-scores[i], i))
    return [(top[i][0], scores[i]) for i in order] + head[HEAD:]


_NO_ROWS = np.zeros((0, 0), dtype=np.float32)


def _ids_of(searcher: tantivy.Searcher, admitted: list[str], keys: list[int],
            addr_of: dict[int, Any]) -> dict[int, str]:
    """Record ids of index keys: the semantic candidates' (``admitted``) are known, the rest are
    read from each one's stored document (a random block read each, so only when needed)."""
    known = {id_key(rid): rid for rid in admitted}
    out = {k: known[k] for k in keys if k in known}
    for k in keys:
        if k not in out and k in addr_of:
            rid = searcher.doc(addr_of[k]).get_first("id")
            if rid:
                out[k] = str(rid)
    return out


def _not_matching(view: Retrieval, admitted: list[str], sem_rank: list[int]) -> set[int]:
    """The keys of the admitted candidates (under the filters: ``sem_rank``) that do not match
    the query itself: the extras."""
    if not sem_rank:
        return set()
    searcher = view.searcher
    ranked = set(sem_rank)
    ids = [rid for rid in admitted if id_key(rid) in ranked]
    check = with_filters(Q.boolean_query([
        (Occur.Must, Q.const_score_query(Q.term_set_query(view.schema, "id", ids), 0.0)),
        (Occur.Must, view.main)]), view.filters)
    hits = searcher.search(check, limit=len(ids), count=False).hits
    matching = set(searcher.fast_field_values("key", [a for _, a in hits]))
    return {k for k in sem_rank if k not in matching}


def _semantic_ranks(view: Retrieval, admitted: list[str]) -> tuple[dict[int, Any], list[int]]:
    """(key -> index address, the keys of the admitted candidates under the filters, in
    similarity order)."""
    searcher = view.searcher
    sem_query = with_filters(Q.term_set_query(view.schema, "id", admitted), view.filters)
    sem_hits = searcher.search(sem_query, limit=len(admitted), count=False).hits
    sem_keys = searcher.fast_field_values("key", [a for _, a in sem_hits])
    addr_of: dict[int, Any] = {k: a for k, (_, a) in zip(sem_keys, sem_hits)}
    wanted = {id_key(rid): i for i, rid in enumerate(admitted)}
    return addr_of, sorted((k for k in addr_of if k in wanted), key=lambda k: wanted[k])


def _weighted_head(view: Retrieval, cands: Candidates, provider: SemanticProvider,
                   lexical: list[tuple[int, float]], sem_rank: list[int],
                   addr_of: dict[int, Any]) -> list[tuple[str, float]] | None:
    """The weighted-sum head, or None when the provider cannot score the lexical hits (or
    failed to: a failing provider must not break search, and rank fusion needs no scores).
    ``lexical``: the lexical top list as (key, BM25)."""
    floor = 0.0 if len(lexical) < FUSION_DEPTH else None  # the list holds every match: see fused_page
    if view.partial is not None:
        listed = {k for k, _ in lexical}
        wanted = {id_key(rid): rid for rid in cands.admitted}
        lexical = lexical + _partial_scores(view, [wanted[k] for k in sem_rank if k not in listed])
    try:
        cosines = _cosines(view.searcher, provider, cands, lexical, sem_rank, addr_of)
        return fusion.fuse_by_key(lexical, cosines, floor) if cosines is not None else None
    except Exception:
        log.exception("semantic similarities failed; using rank fusion")
        return None


def _cosines(searcher: tantivy.Searcher, provider: SemanticProvider, cands: Candidates,
             lexical: list[tuple[int, float]], sem_rank: list[int],
             addr_of: dict[int, Any]) -> dict[int, float] | None:
    """The cosine of *every* fused record by key; None when the provider cannot score records.

    The lexical hits are scored by the ``key`` fast field already read when the provider can look
    keys up; else each hit's stored document is fetched for its id: up to 200 random block reads
    a query, which on a large index under a memory limit are most of its disk reads."""
    key_of = {id_key(rid): rid for rid in cands.admitted}
    cos: dict[int, float] = {k: cands.sims[key_of[k]] for k in sem_rank}
    missing = [k for k, _ in lexical if k not in cos]
    if not missing:
        return cos
    by_key = provider.similarities_by_key(cands.text, missing)
    if by_key is not None:
        for k in missing:
            cos[k] = float(by_key.get(k, 0.0))
        return cos
    ids = _ids_of(searcher, cands.admitted, missing, addr_of)
    got = provider.similarities(cands.text, list(ids.values()))
    if got is None:
        return None
    for k in missing:
        cos[k] = float(got.get(ids.get(k, ""), 0.0))
    return cos


def _partial_scores(view: Retrieval, ids: list[str]) -> list[tuple[int, float]]:
    """(key, score) of the records ``ids`` that hold part of the query, by ``view.partial``."""
    if not ids or view.partial is None:
        return []
    searcher = view.searcher
    query = Q.boolean_query([(Occur.Must, Q.const_score_query(Q.term_set_query(view.schema, "id", ids), 0.0)),
                             (Occur.Must, view.partial)])
    hits = searcher.search(query, limit=len(ids), count=False).hits
    keys = searcher.fast_field_values("key", [a for _, a in hits])
    return [(k, float(s)) for k, (s, _) in zip(keys, hits)]


def _lexical_tail(view: Retrieval, lex_query: tantivy.Query, shown: list[int], admitted: list[str],
                  addr_of: dict[int, Any], skip: int, limit: int) -> list[Ranked]:
    """Past the fused head: the lexical order, skipping what the head already showed."""
    searcher = view.searcher
    tail_query = lex_query
    if shown:
        head_ids = list(_ids_of(searcher, admitted, shown, addr_of).values())
        tail_query = Q.boolean_query([(Occur.Must, lex_query),
                                      (Occur.MustNot, Q.term_set_query(view.schema, "id", head_ids))])
    tail = searcher.search(tail_query, limit=limit, offset=skip, count=False)
    return [Ranked(a, float(s)) for s, a in tail.hits]
