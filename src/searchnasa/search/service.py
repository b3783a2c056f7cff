"""The search service: one entry point (``search``) shared by the web page, the JSON API and the CLI.

A search takes one consistent snapshot of the index (a Tantivy searcher), so a rebuild committing
meanwhile cannot change its results half-way; the next search sees the new commit.

Lexical search is complete on its own. When a :class:`SemanticProvider` is plugged in and the
request's mode asks for it, semantic candidates are admitted only if they satisfy the query's
strict part (phrases, field clauses, exclusions) and every filter, and are fused with the lexical
ranking; the total counts the union exactly. Fusion is a min-max weighted sum of BM25 and the
cosine of every fused candidate (lexical hits included) when the provider can score given
records, reciprocal rank fusion otherwise or on request (``fusion_method="rrf"``).

Totals are exact unless the query is over the work budget (:mod:`.budget`): then its commonest
OR alternatives are dropped before running, and the total is flagged as a lower bound.

Facet counts are computed on a thread of :func:`facet_pool` while the request's thread ranks the
page (Tantivy releases the GIL in both), so a search uses two cores when it is the only one
running; under concurrent load they are counted after the page, on the request's thread.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import tantivy

from searchnasa.errors import BadInput, NotFound, SearchNasaError
from searchnasa.index.documents import card_from_bytes
from searchnasa.index.reader import IndexReader
from searchnasa.index.schema import SAMPLE_RATES, id_key
from searchnasa.records import SOURCE_LABELS, Record
from searchnasa.settings import Settings, default_of, env_number, get_settings
from searchnasa.store import Store, open_store
from searchnasa.search import fusion, spelling
from searchnasa.search.budget import CUT_NOTICE, fit_to_budget
from searchnasa.search.identifiers import IdentifierGuess, recognize
from searchnasa.search.lexical import (
    compile_node,
    filter_queries,
    lone_word,
    lone_word_query,
    partial_query,
    with_filters,
)
from searchnasa.search.schemas import FacetBucket, SearchHit, SearchRequest, SearchResponse
from searchnasa.search.query import IdSet, Node, has_loose, parse, positive_parts, positive_texts, strict_part
from searchnasa.search.protocols import SemanticProvider
from searchnasa.search.snippets import Highlight, highlight_for, highlight_html, snippet_html

log = logging.getLogger(__name__)

Q = tantivy.Query
Occur = tantivy.Occur

FUSION_DEPTH = 200  # lexical hits fused with semantic candidates; deeper ranks follow lexical order
SEMANTIC_K = 200  # semantic candidates asked for
# Weight of the cosine in the weighted-sum fusion; chosen on SciFact, confirmed on NPL (bench/README.md).
SEMANTIC_WEIGHT = 0.7
NO_WORD_MATCH = "No record contains these words; showing records close in meaning."
FACET_SIZE = 15
# Above this many matches, facets other than source are estimated on a uniform sample holding
# at least FACET_SAMPLE_TARGET of the matches (see ``_facets``).
FACET_EXACT_MAX = 40_000
FACET_SAMPLE_TARGET = 5_000
NO_DATE = "Date not supplied"
# Facet counts kept per index snapshot, query and filters: turning a page, changing the sort or
# coming back to a query reuses them (they are most of a search's cost at scale). 0 turns it off,
# as does SEARCHNASA_FACET_CACHE=0 (benchmarks that time cold searches over HTTP).
FACET_CACHE_SIZE = int(default_of("FACET_CACHE"))


# Threads per process that count facets while the request's own thread ranks the page.
FACET_THREADS = 4
_facet_pool: ThreadPoolExecutor | None = None
_facet_pool_lock = threading.Lock()


def facet_pool() -> ThreadPoolExecutor:
    """The process's facet threads, started on first use (after a server forks its workers).

    Tantivy releases the GIL while it searches and aggregates, so a search's facet aggregations run
    on a second core beside its ranked page instead of after it: at 4M records the two cost about
    the same, and running them side by side took the search function's p95 from 37 to 24 ms
    (bench/README.md, "Facets beside the page")."""
    global _facet_pool
    with _facet_pool_lock:
        if _facet_pool is None:
            _facet_pool = ThreadPoolExecutor(max_workers=FACET_THREADS, thread_name_prefix="facets")
        return _facet_pool


def facet_cache_size() -> int:
    """Entries the facet cache keeps: ``SEARCHNASA_FACET_CACHE`` if set, else FACET_CACHE_SIZE."""
    return max(0, int(env_number("FACET_CACHE", int)))

# facet name -> the request filter it ignores (so a facet shows what choosing it would give)
FACET_OWN_FILTER = {"source": "source", "decade": "year", "year": "year",
                    "document_type": "document_type", "subject": "subject", "organization": "organization"}
_AGGS = {
    "source": {"terms": {"field": "source", "size": 10}},
    "year": {"terms": {"field": "year", "size": 1000}},
    "document_type": {"terms": {"field": "document_type", "size": FACET_SIZE}},
    "subject": {"terms": {"field": "subject_value", "size": FACET_SIZE}},
    "organization": {"terms": {"field": "organization_value", "size": FACET_SIZE}},
}


@dataclass
class _Ranked:
    """One hit on the page: where its stored card is, and its score."""

    address: Any
    score: float


def date_label(year: int | None) -> str:
    return str(year) if year is not None else NO_DATE


def link_label(card: dict[str, Any]) -> str:
    """What the card's link to the original says: first subject, keyword, author, or a fallback."""
    for key in ("subjects", "keywords", "authors"):
        values = card.get(key) or []
        if values:
            return values[0]
    return "Original record"


class SearchService:
    """Lexical search over the Tantivy index, with an optional semantic provider."""

    def __init__(self, settings: Settings | None = None, semantic: SemanticProvider | None = None,
                 fusion_method: str = "weighted", semantic_wait: float | None = None) -> None:
        self.settings = settings or get_settings()
        self.reader = IndexReader(self.settings.index_dir)
        self.semantic = semantic
        # None: wait for the query encoder (CLI, eval). The web passes a few tenths of a second so
        # that under load, or while the model loads, a search answers with keywords instead of queueing.
        self.semantic_wait = semantic_wait
        self.fusion_method = fusion_method
        self._store: Store | None = None
        self._facet_cache: OrderedDict[tuple[Any, ...], tuple[dict[str, list[FacetBucket]], list[str]]] = OrderedDict()
        self._facet_lock = threading.Lock()
        self._in_flight = 0  # searches running in this service now (see ``search``)

    def clear_caches(self) -> None:
        """Forget cached facet counts (benchmarks measuring cold searches call it)."""
        with self._facet_lock:
            self._facet_cache.clear()

    # -- records ----------------------------------------------------------------------------------
    @property
    def store(self) -> Store:
        if self._store is None:
            self._store = open_store(self.settings.home, readonly=True)
        return self._store

    def get(self, record_id: str) -> Record:
        """The full record from the store (the source of truth), or :class:`NotFound`."""
        if not self.settings.store_path.exists():
            raise NotFound(f"no record {record_id!r} (the store is empty)")
        return self.store.get(record_id)

    def lookup_identifier(self, text: str) -> list[str]:
        """Record ids that ``text`` identifies (DOI, NTRS/OSTI id, report number); [] if none."""
        ids, _ = self._identify(self.reader.searcher(), self.reader.index.schema, text)
        return ids

    def _identify(self, searcher: tantivy.Searcher, schema: tantivy.Schema,
                  text: str) -> tuple[list[str], IdentifierGuess | None]:
        """Ids from the index (exact DOI, record id, whole report number), then from the store's
        identifier table, which also knows report numbers typed with spaces or other punctuation."""
        guess = recognize(text)
        if guess is not None:
            ids = self._lookup(searcher, schema, guess)
            if ids:
                return ids, guess
        table_ids = self._table_lookup(text)
        return (self._in_index(searcher, schema, table_ids) if table_ids else []), guess

    def _table_lookup(self, text: str) -> list[str]:
        if not self.settings.store_path.exists():
            return []
        try:
            from searchnasa.store import identifiers as id_table

            match = id_table.lookup(self.store, text)
        except (ImportError, SearchNasaError):
            return []
        return list(match.record_ids) if match else []

    @staticmethod
    def _in_index(searcher: tantivy.Searcher, schema: tantivy.Schema, ids: list[str]) -> list[str]:
        if not ids:
            return []
        result = searcher.search(Q.term_set_query(schema, "id", ids), limit=len(ids), count=False)
        found = {searcher.doc(addr).get_first("id") for _, addr in result.hits}
        return [rid for rid in ids if rid in found]

    def _lookup(self, searcher: tantivy.Searcher, schema: tantivy.Schema, guess: IdentifierGuess) -> list[str]:
        if guess.ids:
            query = Q.term_set_query(schema, "id", list(guess.ids))
        else:
            query = Q.term_set_query(schema, "ident_raw", list(guess.values))
        result = searcher.search(query, limit=20, count=False)
        found = {searcher.doc(addr).get_first("id") for _, addr in result.hits}
        order = {rid: i for i, rid in enumerate(guess.ids)}
        return sorted(found, key=lambda rid: (order.get(rid, len(order)), rid))

    # -- search -----------------------------------------------------------------------------------
    def search(self, req: SearchRequest) -> SearchResponse:
        """Run one search; never raises on query text (bad text degrades, with a notice).

        A search running alone counts its facets on a second thread beside its page; when others
        are running too, the cores are already busy and the extra thread would only add work (its
        own count of the matches), so it counts them after its page, as before."""
        with self._facet_lock:
            self._in_flight += 1
            alone = self._in_flight == 1
        try:
            return self._search(req, facets_beside=alone)
        finally:
            with self._facet_lock:
                self._in_flight -= 1

    def _search(self, req: SearchRequest, facets_beside: bool) -> SearchResponse:
        started = time.perf_counter()
        # read before taking the searcher: a commit in between makes the key older than the
        # snapshot, so a cached entry can only ever be newer than the key says, never stale
        snapshot = self._snapshot()
        if snapshot is None:  # the reader opens the index on its first searcher
            self.reader.searcher()
            snapshot = self._snapshot()
        searcher = self.reader.searcher()
        schema = self.reader.index.schema
        parsed = parse(req.q)
        notices = list(parsed.notices)
        tree: Node = parsed.tree
        interpreted = parsed.interpreted
        redirect_id: str | None = None

        ids, guess = self._identify(searcher, schema, req.q) if req.q.strip() else ([], None)
        if ids:
            tree = IdSet(tuple(ids))
            interpreted = f"identifier {req.q.strip()}"
            notices = []
            if len(ids) == 1:
                redirect_id = ids[0]
        elif guess is not None and guess.confident:
            notices.append(f"No record has the identifier “{guess.text.strip()}”; searched it as words.")

        # before the budget narrows the tree: every word the user typed is checked
        suggestion = (spelling.suggest(searcher, schema, req.q, positive_parts(tree))
                      if not isinstance(tree, IdSet) else None)
        lower_bound = False
        if not isinstance(tree, IdSet):
            # a query whose exact count would walk too many postings is narrowed to its rarer
            # alternatives (see .budget): the count of what remains is a true lower bound
            try:
                tree, lower_bound = fit_to_budget(searcher, tree)
            except BadInput:
                lower_bound = False
            if lower_bound:
                notices.append(CUT_NOTICE)

        filters = self._filters(schema, req)
        # A lone bare word with no filter and more matches than the facets count exactly is
        # ranked without counting (block-max WAND skips what cannot reach the page): the facets
        # count its matches by source in an exact pass of their own anyway (see ``_facets``).
        word = lone_word(tree) if not filters else None
        word_matches = searcher.doc_freq("all", word) if word is not None else 0
        uncounted = word is not None and word_matches > FACET_EXACT_MAX
        main = compile_node(schema, tree, searcher)
        # the skipping form ranks; the required form stays for counting and facets, where every
        # match is visited and a required clause is cheaper than a union
        ranking = lone_word_query(schema, word) if uncounted else None  # type: ignore[arg-type]
        all_filters = list(filters.values())

        mode, admitted, sims, sem_text = self._semantic_candidates(req, tree, searcher, schema, notices)
        if mode == "semantic":
            base = Q.term_set_query(schema, "id", admitted) if admitted else Q.empty_query()
        elif mode == "hybrid" and admitted:
            base = Q.boolean_query([(Occur.Should, main),
                                    (Occur.Should, Q.const_score_query(
                                        Q.term_set_query(schema, "id", admitted), 0.0))])
        else:
            base = main
        offset = (req.page - 1) * req.per_page
        # The facets need only the query and the filters: counted on another thread meanwhile.
        # They learn the number of matches from their own exact source pass rather than from the
        # page's count (which they would otherwise wait for); the counts come out the same.
        facet_job = (facet_pool().submit(self._cached_facets, snapshot, searcher, schema, base, filters, None)
                     if facets_beside else None)

        # A total of None means "not counted by the page": the facets' exact source pass has it.
        total: int | None
        lexical_matches = -1
        if req.sort != "relevance" or mode == "lexical" or not admitted:
            page_query = ranking if ranking is not None and base is main else base
            total, ranked = self._lexical_page(searcher, with_filters(page_query, all_filters), req.sort,
                                               offset, req.per_page, count=page_query is base)
        else:
            total, ranked, lexical_matches = self._fused_page(
                searcher, schema, main, admitted, all_filters, mode, offset, req.per_page,
                sims=sims, text=sem_text, may_skip_count="source" not in filters,
                ranking=ranking, lexical_estimate=word_matches if ranking is not None else None,
                partial=partial_query(schema, tree, searcher))
        facets, estimated = (facet_job.result() if facet_job is not None
                             else self._cached_facets(snapshot, searcher, schema, base, filters, total))
        if total is None:
            total = sum(b.count for b in facets["source"])
        if mode == "hybrid" and lexical_matches == 0 and total:
            notices.append(NO_WORD_MATCH)
        if mode == "hybrid" and not admitted:
            mode = "lexical"

        highlight = highlight_for(tree)
        results = [self._hit(searcher, r, highlight) for r in ranked]
        if redirect_id is not None and not any(h.id == redirect_id for h in results):
            redirect_id = None  # filtered out: do not send the user to a record the filters hide
        interpreted_text = f"Read as: {interpreted}"
        return SearchResponse(
            query=req.q, interpreted=interpreted_text, notices=notices, total=total,
            total_is_lower_bound=lower_bound, page=req.page, per_page=req.per_page, mode=mode,
            suggestion=suggestion,
            results=results, facets=facets, redirect_id=redirect_id, facets_estimated=estimated,
            took_ms=round((time.perf_counter() - started) * 1000, 3),
        )

    # -- pieces -----------------------------------------------------------------------------------
    @staticmethod
    def _filters(schema: tantivy.Schema, req: SearchRequest) -> dict[str, tantivy.Query]:
        named: dict[str, tantivy.Query] = {}
        for name, kwargs in (
            ("source", {"source": req.source}),
            ("year", {"year_from": req.year_from, "year_to": req.year_to}),
            ("document_type", {"document_type": req.document_type}),
            ("subject", {"subject": req.subject}),
            ("organization", {"organization": req.organization}),
        ):
            queries = filter_queries(schema, **kwargs)  # type: ignore[arg-type]
            if queries:
                named[name] = queries[0]
        return named

    @staticmethod
    def _lexical_page(searcher: tantivy.Searcher, query: tantivy.Query, sort: str, offset: int,
                      limit: int, count: bool = True) -> tuple[int | None, list[_Ranked]]:
        """One page in relevance or date order; ties break by position (relevance) or id hash.
        The total is None when ``count`` is off (the caller counts elsewhere)."""
        if sort == "newest":
            result = searcher.search(query, limit=limit, offset=offset, count=count,
                                     order_by_field="newest_key", order=tantivy.Order.Desc)
        elif sort == "oldest":
            result = searcher.search(query, limit=limit, offset=offset, count=count,
                                     order_by_field="oldest_key", order=tantivy.Order.Asc)
        else:
            result = searcher.search(query, limit=limit, offset=offset, count=count)
        ranked = [_Ranked(addr, float(score) if sort == "relevance" else 0.0) for score, addr in result.hits]
        return (int(result.count or 0) if count else None), ranked

    def _semantic_candidates(self, req: SearchRequest, tree: Node, searcher: tantivy.Searcher,
                             schema: tantivy.Schema, notices: list[str],
                             ) -> tuple[str, list[str], dict[str, float], str]:
        """(effective mode, admitted candidate ids in similarity order, their similarities, the
        text that was embedded)."""
        if req.mode == "lexical" or isinstance(tree, IdSet):
            return "lexical", [], {}, ""
        provider = self.semantic
        if provider is None or not provider.available():
            if req.mode == "semantic":
                notices.append("Semantic search is not available; showing keyword matches.")
            return "lexical", [], {}, ""
        if not has_loose(tree):
            if req.mode == "semantic":
                notices.append("The query holds only exact parts (phrases, fields, exclusions); "
                               "showing keyword matches.")
            return "lexical", [], {}, ""
        text = " ".join(positive_texts(tree))
        try:
            wait = {"wait": self.semantic_wait} if self.semantic_wait is not None else {}
            candidates = provider.query_candidates(text, SEMANTIC_K, **wait)
        except Exception as exc:  # a failing provider must not break search
            if getattr(exc, "code", None) == "semantic_busy":  # loading, or shedding load
                notices.append("Semantic search is busy; showing keyword matches.")
                return "lexical", [], {}, ""
            log.exception("semantic provider failed")
            notices.append("Semantic search failed; showing keyword matches.")
            return "lexical", [], {}, ""
        sims: dict[str, float] = {}
        for rid, sim in candidates:
            sims.setdefault(rid, float(sim))
        ids = list(sims)
        if not ids:
            if req.mode == "semantic":
                notices.append("No record is close in meaning to this query.")
            return req.mode, [], {}, text
        strict = strict_part(tree)
        check = Q.term_set_query(schema, "id", ids)
        if strict is not None:
            check = Q.boolean_query([(Occur.Must, check), (Occur.Must, compile_node(schema, strict, searcher))])
        result = searcher.search(check, limit=len(ids), count=False)
        # which candidates passed, by the ``key`` fast field (the id's 63-bit hash) rather than
        # each hit's stored document: 200 stored-document reads a query were random block reads
        # and decompressions, the bulk of a hybrid query's disk reads at 4M under a memory limit
        passed = set(searcher.fast_field_values("key", [addr for _, addr in result.hits]))
        admitted = [rid for rid in ids if id_key(rid) in passed]
        return req.mode, admitted, {rid: sims[rid] for rid in admitted}, text

    def _fused_page(self, searcher: tantivy.Searcher, schema: tantivy.Schema, main: tantivy.Query,
                    admitted: list[str], filters: list[tantivy.Query], mode: str, offset: int,
                    limit: int, sims: dict[str, float] | None = None, text: str = "",
                    may_skip_count: bool = False, ranking: tantivy.Query | None = None,
                    lexical_estimate: int | None = None, partial: tantivy.Query | None = None,
                    ) -> tuple[int | None, list[_Ranked], int]:
        """Relevance order over lexical ∪ semantic: fused head, then the lexical tail.
        Returns (total, page, lexical matches: 0 when no record contains the words).

        The union is counted here unless ``may_skip_count`` (no source filter: the facets' exact
        source pass counts the same set) and it is larger than the facets count in one pass
        (they then run that source pass anyway), and the page lies inside the fused head (the
        lexical tail needs the total); the total is then None. ``ranking`` is an equivalent
        form of ``main`` for the lexical top list that Tantivy can skip through when not counting,
        given with ``lexical_estimate``, the lexical match count the caller knows (a lone word's
        document frequency). ``partial`` (:func:`~.lexical.partial_query`) scores the semantic
        candidates that lack some of the words by those they hold.

        The lexical scores are normalized between the best and 0 when the lexical list holds every
        match (fewer than ``FUSION_DEPTH``): the last of three records holding every word used to
        score like a record holding none. A truncated list keeps its last score as the floor."""
        sem_query = with_filters(Q.term_set_query(schema, "id", admitted), filters)
        sem_hits = searcher.search(sem_query, limit=len(admitted), count=False).hits
        sem_keys = searcher.fast_field_values("key", [a for _, a in sem_hits])
        addr_of: dict[int, Any] = {k: a for k, (_, a) in zip(sem_keys, sem_hits)}
        wanted = {id_key(rid): i for i, rid in enumerate(admitted)}
        sem_rank = sorted((k for k in addr_of if k in wanted), key=lambda k: wanted[k])
        if mode == "semantic":
            window = sem_rank[offset:offset + limit]
            return len(sem_rank), [_Ranked(addr_of[k], 0.0) for k in window], 0

        lex_query = with_filters(main, filters)
        lex = searcher.search(with_filters(ranking, filters) if ranking is not None else lex_query,
                              limit=FUSION_DEPTH, count=lexical_estimate is None)
        lexical_matches = int(lex.count or 0) if lexical_estimate is None else lexical_estimate
        lex_keys = searcher.fast_field_values("key", [a for _, a in lex.hits])
        for k, (_, a) in zip(lex_keys, lex.hits):
            addr_of.setdefault(k, a)
        scorer = getattr(self.semantic, "similarities", None)  # a wrapper must forward it
        by_key = getattr(self.semantic, "similarities_by_key", None)  # optional: no stored documents read
        fused: list[tuple[str, float]] | None = None
        if self.fusion_method == "weighted" and callable(scorer) and sims is not None:
            lexical = [(k, float(s)) for k, (s, _) in zip(lex_keys, lex.hits)]
            if partial is not None:
                listed = set(lex_keys)
                lexical += self._partial_scores(searcher, schema, partial,
                                                [admitted[wanted[k]] for k in sem_rank if k not in listed])
            floor = 0.0 if len(lex.hits) < FUSION_DEPTH else None
            try:
                fused = self._weighted(searcher, lexical, addr_of, sem_rank, admitted, sims, text, scorer,
                                       by_key if callable(by_key) else None, floor)
            except Exception:  # a failing provider must not break search: rank fusion needs no scores
                log.exception("semantic similarities failed; using rank fusion")
        if fused is None:
            fused = fusion.reciprocal_rank_fusion([[str(k) for k in lex_keys], [str(k) for k in sem_rank]])
        union = Q.boolean_query([
            (Occur.Should, main),
            (Occur.Should, Q.const_score_query(Q.term_set_query(schema, "id", admitted), 0.0))])
        page: list[_Ranked] = [_Ranked(addr_of[int(k)], score) for k, score in fused[offset:offset + limit]]
        total: int | None = None
        if not may_skip_count or lexical_matches <= FACET_EXACT_MAX or len(page) < limit:
            total = int(searcher.search(with_filters(union, filters), limit=1, count=True).count or 0)
        if total is not None and len(page) < limit and offset + len(page) < total:
            # past the fused head: continue in lexical order, skipping what the head already showed
            shown = [int(k) for k, _ in fused]
            skip = max(0, offset - len(fused))
            tail_query = lex_query
            if shown:
                head_ids = [searcher.doc(addr_of[k]).get_first("id") for k in shown]
                tail_query = Q.boolean_query([(Occur.Must, lex_query),
                                              (Occur.MustNot, Q.term_set_query(schema, "id", head_ids))])
            tail = searcher.search(tail_query, limit=limit - len(page), offset=skip, count=False)
            page.extend(_Ranked(a, float(s)) for s, a in tail.hits)
        return total, page, lexical_matches if lex.hits else 0

    @staticmethod
    def _partial_scores(searcher: tantivy.Searcher, schema: tantivy.Schema, partial: tantivy.Query,
                        ids: list[str]) -> list[tuple[int, float]]:
        """(key, score) of the records ``ids`` that hold part of the query, by ``partial``."""
        if not ids:
            return []
        query = Q.boolean_query([(Occur.Must, Q.const_score_query(Q.term_set_query(schema, "id", ids), 0.0)),
                                 (Occur.Must, partial)])
        hits = searcher.search(query, limit=len(ids), count=False).hits
        keys = searcher.fast_field_values("key", [a for _, a in hits])
        return [(k, float(s)) for k, (s, _) in zip(keys, hits)]

    @staticmethod
    def _weighted(searcher: tantivy.Searcher, lexical: list[tuple[int, float]], addr_of: dict[int, Any],
                  sem_rank: list[int], admitted: list[str], sims: dict[str, float], text: str,
                  scorer: Any, by_key: Any = None, lexical_floor: float | None = None,
                  ) -> list[tuple[str, float]]:
        """Min-max weighted sum over lexical ∪ semantic, with the cosine of *every* candidate:
        a lexical hit outside the semantic top-k is scored by its own similarity, not by 0,
        which is what lifts fusion above either ranking (bench/fusion_study.py). ``by_key`` (the
        provider's ``similarities_by_key``) scores lexical hits by the ``key`` fast field already
        read; without it each hit's stored document is fetched for its id: up to 200 random block
        reads a query, which at 4M records under a memory limit were most of its disk reads."""
        key_of = {id_key(rid): rid for rid in admitted}
        cos: dict[int, float] = {k: sims[key_of[k]] for k in sem_rank}
        missing = [k for k, _ in lexical if k not in cos]
        if missing and by_key is not None:
            got_by_key = by_key(text, missing)
            for k in missing:
                cos[k] = float(got_by_key.get(k, 0.0))
        elif missing:
            ids = {k: searcher.doc(addr_of[k]).get_first("id") for k in missing}
            got = scorer(text, list(ids.values()))
            for k, rid in ids.items():
                cos[k] = float(got.get(rid, 0.0))
        return fusion.weighted_sum([(str(k), s) for k, s in lexical], [(str(k), c) for k, c in cos.items()],
                                   SEMANTIC_WEIGHT, lexical_floor)

    def _snapshot(self) -> tuple[Any, ...] | None:
        """What identifies the index snapshot the next searcher serves: the live generation and
        the reader's stamp of its commit (``IndexReader`` reloads when either changes); None
        before the reader has opened an index."""
        stamp = getattr(self.reader, "_stamp", None)
        if self.reader.generation is None or stamp is None:
            return None
        return (str(self.reader.generation), stamp)

    def _cached_facets(self, snapshot: tuple[Any, ...] | None, searcher: tantivy.Searcher,
                       schema: tantivy.Schema, base: tantivy.Query, filters: dict[str, tantivy.Query],
                       total: int | None) -> tuple[dict[str, list[FacetBucket]], list[str]]:
        """:meth:`_facets`, remembered per snapshot, query and filters (the page and the sort do
        not change facet counts). The thresholds are part of the key: they decide exact vs
        estimated counts. ``total`` (known, or None when counted beside the page) is not: it only
        spares the facet pass a count, the counts are the same."""
        size = facet_cache_size()
        if size <= 0 or snapshot is None:
            return self._facets(searcher, schema, base, filters, known_total=total)
        key = (snapshot, searcher.num_docs, repr(base), tuple(sorted((n, repr(q)) for n, q in filters.items())),
               FACET_EXACT_MAX, FACET_SAMPLE_TARGET)
        with self._facet_lock:
            hit = self._facet_cache.get(key)
            if hit is not None:
                self._facet_cache.move_to_end(key)
        if hit is None:
            hit = self._facets(searcher, schema, base, filters, known_total=total)
            with self._facet_lock:
                self._facet_cache[key] = hit
                while len(self._facet_cache) > size:
                    self._facet_cache.popitem(last=False)
        facets, estimated = hit
        return {name: list(buckets) for name, buckets in facets.items()}, list(estimated)

    def _facets(self, searcher: tantivy.Searcher, schema: tantivy.Schema, base: tantivy.Query,
                filters: dict[str, tantivy.Query], known_total: int | None = None,
                ) -> tuple[dict[str, list[FacetBucket]], list[str]]:
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
            wanted = {("year" if f == "decade" else f) for f in facets}
            matches = known_total if excluded is None else None
            if matches is not None and matches <= FACET_EXACT_MAX:
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
                rest = {f: _AGGS[f] for f in wanted if f != "source"}
                scaled = self._sampled_aggs(searcher, schema, query, rest, matches) if rest else {}
                if scaled.get("_scale", 1.0) != 1.0:
                    estimated.extend(f for f in facets if f != "source")
            for f in facets:
                key = "year" if f == "decade" else f
                source = scaled if key in scaled else result
                scale = scaled.get("_scale", 1.0) if key in scaled else 1.0
                raw[f] = [{"key": b["key"], "doc_count": min(matches, round(int(b["doc_count"]) * scale))}
                          for b in source.get(key, {}).get("buckets", [])]
        out: dict[str, list[FacetBucket]] = {}
        for facet in FACET_OWN_FILTER:
            buckets = raw.get(facet, [])
            if facet == "decade":
                decades: dict[int, int] = {}
                for b in buckets:
                    decade = int(b["key"]) // 10 * 10
                    decades[decade] = decades.get(decade, 0) + int(b["doc_count"])
                out[facet] = [FacetBucket(value=f"{d}s", count=n) for d, n in sorted(decades.items())]
            elif facet == "year":
                out[facet] = sorted((FacetBucket(value=str(int(b["key"])), count=int(b["doc_count"]))
                                     for b in buckets), key=lambda b: int(b.value))
            else:
                out[facet] = sorted((FacetBucket(value=str(b["key"]), count=int(b["doc_count"]))
                                     for b in buckets), key=lambda b: (-b.count, b.value))
        return out, sorted(set(estimated), key=list(FACET_OWN_FILTER).index)

    @staticmethod
    def _sampled_aggs(searcher: tantivy.Searcher, schema: tantivy.Schema, query: tantivy.Query,
                      aggs: dict[str, Any], matches: int) -> dict[str, Any]:
        """Run ``aggs`` exactly when ``matches`` is small, else on the sparsest sample level that
        still holds about FACET_SAMPLE_TARGET matches; ``_scale`` says how to scale the counts.

        The level's posting list drives the intersection, so a common word's postings are skipped
        through rather than walked. (Narrowing a level further by a range of the id hash ``key``
        was tried: a range on a fast-only column scans the column, which cost more than the
        aggregation work it saved; bench/README.md, "Cost of our layers at 1M".)
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

    @staticmethod
    def _hit(searcher: tantivy.Searcher, ranked: _Ranked, highlight: Highlight) -> SearchHit:
        card = card_from_bytes(searcher.doc(ranked.address).get_first("card"))
        return SearchHit(
            id=card["id"], source=card["source"], source_label=SOURCE_LABELS[card["source"]],
            title=card["title"], title_html=highlight_html(card["title"], highlight),
            abstract=card.get("abstract"), snippet_html=snippet_html(card.get("abstract"), highlight),
            year=card.get("year"), date_label=date_label(card.get("year")), url=card.get("url"),
            link_label=link_label(card), authors=card.get("authors") or [],
            document_type=card.get("document_type"), subjects=card.get("subjects") or [],
            score=ranked.score,
        )


def search_ids(service: SearchService, q: str, **kwargs: Any) -> list[str]:
    """Convenience for scripts and tests: the ids of one page of results."""
    return [h.id for h in service.search(SearchRequest(q=q, **kwargs)).results]


__all__: Sequence[str] = ("SearchService", "date_label", "link_label", "search_ids")
