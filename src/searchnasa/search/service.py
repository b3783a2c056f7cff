"""The search service: the one entry point (``SearchService.search``) that the web page, the JSON
API, the Atom feed, the export, the CLI and the evaluation all call.

A search reads the query (an identifier typed alone, spelling, the work budget), retrieves
(lexical, and semantic candidates when a provider is plugged in and the mode asks for it), fuses,
counts facets, builds the page's cards and folds copies of one work into one card. Each step has
its own module; this one runs them in order on one consistent snapshot of the index (a Tantivy
searcher), so a rebuild committing meanwhile cannot change its results half-way.

Totals are exact unless the query is over the work budget (:mod:`.budget`): then its commonest
OR alternatives are dropped before running, and the total is flagged as a lower bound.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass, field
from functools import partial

import tantivy

from searchnasa.errors import BadInput, NotFound
from searchnasa.index.acronym_lexicon import LexiconFile
from searchnasa.index.reader import IndexReader
from searchnasa.index.schema import id_key
from searchnasa.records import Record
from searchnasa.settings import Settings, get_settings
from searchnasa.store import Store, open_store
from searchnasa.store.withdrawn import withdrawn_on
from searchnasa.search import facets, spelling
from searchnasa.search.budget import CUT_NOTICE, fit_to_budget
from searchnasa.search.cards import hit_card
from searchnasa.search.collapse import collapse_hits
from searchnasa.search.facets import FacetCounter, Facets, Snapshot, facet_pool, index_snapshot
from searchnasa.search.hybrid import (
    NO_WORD_MATCH,
    Candidates,
    PageSlice,
    Retrieval,
    SemanticSetup,
    fused_page,
    semantic_candidates,
)
from searchnasa.search.id_lookup import identify, resolve_record_id
from searchnasa.search.lexical import (
    compile_node,
    lone_word,
    lone_word_query,
    named_filters,
    partial_query,
    with_filters,
    word_records,
)
from searchnasa.search.protocols import SemanticProvider
from searchnasa.search.query import parse
from searchnasa.search.query_tree import IdSet, Node, asked_parts, describe, part_label, positive_parts
from searchnasa.search.ranked import lexical_page
from searchnasa.search.reading import rare_words_alone
from searchnasa.search.schemas import AcronymNote, SearchHit, SearchRequest, SearchResponse
from searchnasa.search.snippets import highlight_for

Q = tantivy.Query
Occur = tantivy.Occur


@dataclass
class _Reading:
    """How the service read the query text: the tree to run, and what to tell the user."""

    tree: Node
    interpreted: str
    notices: list[str] = field(default_factory=list)
    redirect_id: str | None = None  # an identifier naming exactly one record
    suggestion: str | None = None  # "Did you mean", offered, never applied
    lower_bound: bool = False  # the tree was cut to the work budget
    typed_words: list[str] = field(default_factory=list)  # what the semantic model reads
    acronyms: list[AcronymNote] = field(default_factory=list)  # acronyms also searched as their meanings


@dataclass
class _Lexical:
    """The lexical side of one request on one snapshot: the tree, compiled, and the filters."""

    searcher: tantivy.Searcher
    schema: tantivy.Schema
    tree: Node
    main: tantivy.Query
    filters: dict[str, tantivy.Query]
    # a lone bare word ranked in a form Tantivy skips through, and its document frequency
    ranking: tantivy.Query | None = None
    word_matches: int = 0


class SearchService:
    """Search over the Tantivy index, with an optional semantic provider."""

    def __init__(self, settings: Settings | None = None, semantic: SemanticProvider | None = None,
                 fusion_method: str = "weighted", semantic_wait: float | None = None) -> None:
        self.settings = settings or get_settings()
        self.reader = IndexReader(self.settings.index_dir)
        self.acronyms = LexiconFile(self.settings.index_dir)  # the mined acronyms, reread when rebuilt
        self.semantic = semantic
        # None: wait for the query encoder (CLI, eval). The web passes a few tenths of a second so
        # that under load, or while the model loads, a search answers with keywords instead of queueing.
        self.semantic_wait = semantic_wait
        self.fusion_method = fusion_method
        self.facet_counter = FacetCounter()
        self._store: Store | None = None
        self._lock = threading.Lock()
        self._in_flight = 0  # searches running in this service now (see ``search``)

    def clear_caches(self) -> None:
        """Forget cached facet counts (benchmarks measuring cold searches call it)."""
        self.facet_counter.clear()

    # -- records ----------------------------------------------------------------------------------
    @property
    def store(self) -> Store:
        if self._store is None:
            self._store = open_store(self.settings.home, readonly=True)
        return self._store

    def _existing_store(self) -> Store | None:
        """The store, or None when there is none yet (nothing to look identifiers or copies up in)."""
        return self.store if self.settings.store_path.exists() else None

    def get(self, record_id: str) -> Record:
        """The full record from the store (the source of truth), or :class:`NotFound`."""
        if not self.settings.store_path.exists():
            raise NotFound(f"no record {record_id!r} (the store is empty)")
        return self.store.get(record_id)

    def withdrawn_on(self, record_id: str) -> str | None:
        """The day ``record_id`` was found withdrawn upstream (its page says so), or None."""
        if not self.settings.store_path.exists():
            return None
        return withdrawn_on(self.store, record_id)

    def resolve_id(self, text: str) -> str:
        """The record id ``text`` names (``ntrs:N``, ``osti:N``, or a bare ``N`` one source holds):
        see :func:`searchnasa.search.id_lookup.resolve_record_id`."""
        return resolve_record_id(self._existing_store(), text)

    def lookup_identifier(self, text: str) -> list[str]:
        """Record ids that ``text`` identifies (DOI, NTRS/OSTI id, report number); [] if none."""
        ids, _ = identify(self.reader.searcher(), self.reader.index.schema, text, self._existing_store)
        return ids

    # -- search -----------------------------------------------------------------------------------
    def search(self, req: SearchRequest, *, fold_copies: bool = True) -> SearchResponse:
        """Run one search; never raises on query text (bad text degrades, with a notice).

        ``fold_copies``: show each work once, copies held by both sources folded into the first
        card's ``also_in`` (``total`` still counts records). The pages, the API and the CLI fold;
        the Atom feed and the export list every record (a feed reader and a citation manager
        want each copy), and pass False.

        A search running alone counts its facets on a second thread beside its page; when others
        are running too, the cores are already busy and the extra thread would only add work (its
        own count of the matches), so it counts them after its page."""
        req, swapped = req.years_in_order()
        with self._lock:
            self._in_flight += 1
            alone = self._in_flight == 1
        try:
            resp = self._search(req, facets_beside=alone)
        finally:
            with self._lock:
                self._in_flight -= 1
        if swapped:
            resp.notices.insert(0, swapped)
        store = self._existing_store() if fold_copies and resp.results else None
        if store is not None:
            resp.results, _ = collapse_hits(store, resp.results)
        return resp

    def _search(self, req: SearchRequest, facets_beside: bool) -> SearchResponse:
        started = time.perf_counter()
        snapshot, searcher = self._snapshot_searcher()
        schema = self.reader.index.schema
        reading = self._read(req, searcher, schema)
        lexical = self._lexical(searcher, schema, reading.tree, req)
        setup = SemanticSetup(self.semantic, self.semantic_wait, self.fusion_method)
        cands = semantic_candidates(setup, req.mode, reading.tree, searcher, schema, reading.notices,
                                    reading.typed_words)
        base = _base_query(schema, lexical.main, cands)
        # The facets need only the query and the filters: counted on another thread meanwhile.
        # They learn the number of matches from their own exact source pass rather than from the
        # page's count (which they would otherwise wait for); the counts come out the same.
        facet_job: Future[Facets] | None = (
            facet_pool().submit(self.facet_counter.cached, snapshot, searcher, schema, base, lexical.filters, None)
            if facets_beside else None)
        page = _page(req, lexical, cands, base, setup)
        facet_counts, estimated = (facet_job.result() if facet_job is not None else
                                   self.facet_counter.cached(snapshot, searcher, schema, base, lexical.filters,
                                                             page.total))
        # a total of None means "not counted by the page": the facets' exact source pass has it
        total = page.total if page.total is not None else sum(b.count for b in facet_counts["source"])
        mode = cands.mode
        if mode == "hybrid" and page.lexical_matches == 0 and page.extras_total:
            reading.notices.append(NO_WORD_MATCH)
        if mode == "hybrid" and not cands.admitted:
            mode = "lexical"
        highlight = highlight_for(reading.tree)
        results = [hit_card(searcher, r, highlight) for r in page.ranked]
        if page.extra_keys:
            _label_extras(lexical, reading.tree, results, page.extra_keys)
        redirect_id = reading.redirect_id
        if redirect_id is not None and not any(h.id == redirect_id for h in results):
            redirect_id = None  # filtered out: do not send the user to a record the filters hide
        return SearchResponse(
            query=req.q, interpreted=f"Read as: {reading.interpreted}", notices=reading.notices,
            acronyms=reading.acronyms, total=total,
            total_is_lower_bound=reading.lower_bound, page=req.page, per_page=req.per_page, mode=mode,
            suggestion=reading.suggestion, results=results, facets=facet_counts, redirect_id=redirect_id,
            extras_total=page.extras_total,
            facets_estimated=estimated, took_ms=round((time.perf_counter() - started) * 1000, 3),
        )

    def _snapshot_searcher(self) -> tuple[Snapshot | None, tantivy.Searcher]:
        """The facet cache's key for the snapshot, and a searcher on it. The key is read before
        the searcher is taken: a commit in between makes the key older than the snapshot, so a
        cached entry can only ever be newer than the key says, never stale."""
        snapshot = index_snapshot(self.reader)
        if snapshot is None:  # the reader opens the index on its first searcher
            self.reader.searcher()
            snapshot = index_snapshot(self.reader)
        return snapshot, self.reader.searcher()

    def _read(self, req: SearchRequest, searcher: tantivy.Searcher, schema: tantivy.Schema) -> _Reading:
        """Parse the text; an identifier typed alone becomes the records it names; words the index
        does not hold get a suggestion; a query over the work budget is narrowed (:mod:`.budget`)."""
        parsed = parse(req.q, self.acronyms.get())
        reading = _Reading(parsed.tree, parsed.interpreted, list(parsed.notices), typed_words=parsed.typed_words,
                           acronyms=parsed.acronyms)
        ids, guess = identify(searcher, schema, req.q, self._existing_store) if req.q.strip() else ([], None)
        if ids:
            reading = _Reading(IdSet(tuple(ids)), f"identifier {req.q.strip()}",
                               redirect_id=ids[0] if len(ids) == 1 else None)
        elif guess is not None and guess.confident:
            reading.notices.append(f"No record has the identifier “{guess.text.strip()}”; searched it as words.")
        if isinstance(reading.tree, IdSet):
            return reading
        # before the budget narrows the tree: every word the user typed is checked
        reading.suggestion = spelling.suggest(searcher, schema, req.q, positive_parts(reading.tree))
        tree = rare_words_alone(reading.tree, partial(word_records, searcher), searcher.num_docs)
        if tree is not reading.tree:  # a long question's rare words may match alone: say so
            reading.tree, reading.interpreted = tree, describe(tree)
        # a query whose exact count would walk too many postings is narrowed to its rarer
        # alternatives (see .budget): the count of what remains is a true lower bound
        try:
            reading.tree, reading.lower_bound = fit_to_budget(searcher, reading.tree)
        except BadInput:
            reading.lower_bound = False
        if reading.lower_bound:
            reading.notices.append(CUT_NOTICE)
        return reading

    @staticmethod
    def _lexical(searcher: tantivy.Searcher, schema: tantivy.Schema, tree: Node, req: SearchRequest) -> _Lexical:
        """The compiled tree and filters. A lone bare word with no filter and more matches than the
        facets count exactly is ranked without counting (block-max WAND skips what cannot reach
        the page): the facets count its matches by source in an exact pass of their own anyway.
        The required form stays for counting and facets, where every match is visited and a
        required clause is cheaper than a union."""
        filters = named_filters(schema, req)
        word = lone_word(tree) if not filters else None
        word_matches = searcher.doc_freq("all", word) if word is not None else 0
        uncounted = word is not None and word_matches > facets.FACET_EXACT_MAX
        main = compile_node(schema, tree, searcher)
        ranking = lone_word_query(schema, word) if uncounted else None  # type: ignore[arg-type]
        return _Lexical(searcher, schema, tree, main, filters, ranking, word_matches)


def _page(req: SearchRequest, lexical: _Lexical, cands: Candidates, base: tantivy.Query,
          setup: SemanticSetup) -> PageSlice:
    """The ranked page: in lexical or date order, or fused when semantic candidates take part."""
    searcher, schema = lexical.searcher, lexical.schema
    offset = (req.page - 1) * req.per_page
    all_filters = list(lexical.filters.values())
    if req.sort != "relevance" or cands.mode == "lexical" or not cands.admitted:
        page_query = lexical.ranking if lexical.ranking is not None and base is lexical.main else base
        total, ranked = lexical_page(searcher, with_filters(page_query, all_filters), req.sort,
                                     offset, req.per_page, count=page_query is base)
        return PageSlice(total, ranked)
    view = Retrieval(searcher, schema, lexical.main, all_filters, lexical.ranking,
                     lexical.word_matches if lexical.ranking is not None else None,
                     partial_query(schema, lexical.tree, searcher))
    return fused_page(view, cands, setup, offset, req.per_page, may_skip_count="source" not in lexical.filters,
                      extras=req.extras)


def _label_extras(lexical: _Lexical, tree: Node, hits: list[SearchHit], extra_keys: frozenset[int]) -> None:
    """Mark the extras on a page ("close in meaning") with the typed words and phrases each lacks."""
    extras = [h for h in hits if id_key(h.id) in extra_keys]
    if not extras:
        return
    searcher, schema = lexical.searcher, lexical.schema
    ids = Q.const_score_query(Q.term_set_query(schema, "id", [h.id for h in extras]), 0.0)
    holding: dict[str, set[int]] = {}  # by the key fast field, as hybrid.py reads hits: no stored reads
    for part in dict.fromkeys(asked_parts(tree)):
        query = Q.boolean_query([(Occur.Must, ids), (Occur.Must, compile_node(schema, part, searcher))])
        found = searcher.search(query, limit=len(extras), count=False).hits
        holding[part_label(part)] = set(searcher.fast_field_values("key", [a for _, a in found]))
    for hit in extras:
        hit.close_in_meaning = True
        hit.missing_words = [word for word, have in holding.items() if id_key(hit.id) not in have]


def _base_query(schema: tantivy.Schema, main: tantivy.Query, cands: Candidates) -> tantivy.Query:
    """What the page's count and the facets count: the admitted candidates in semantic mode, else
    the records that match the query (in hybrid mode too: records only close in meaning are
    extras, counted apart, see :mod:`.hybrid`)."""
    if cands.mode == "semantic":
        return Q.term_set_query(schema, "id", cands.admitted) if cands.admitted else Q.empty_query()
    return main
