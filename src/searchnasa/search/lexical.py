"""Compile a parsed query tree and the request's filters into Tantivy queries.

Built with ``tantivy.Query`` constructors (term, phrase, boolean, boost, range, term set), never
by pasting strings into Tantivy's parser, so no user input can change the query's structure.
Words are analyzed with the same analyzers the index used (:mod:`searchnasa.index.schema`).

Ranking adds a term-proximity score in the style of the sequential dependence model (Metzler &
Croft, 2005): where a query holds bare words side by side, documents holding them side by side in
the same order score higher (``PAIR_WEIGHT`` x the BM25 of those word pairs on ``all_pairs``). The
clause is optional: it never changes which records match, only their order.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence

import tantivy

from searchnasa.index.schema import (
    BOOSTS,
    PLAIN_ANALYZER,
    STEM_ANALYZER,
    TITLE_BOOST,
    word_pairs,
)
from searchnasa.authors import query_keys
from searchnasa.organizations import canonical_organization
from searchnasa.search.query_tree import (And, Expanded, IdSet, MatchAll, Nearby, Node, Not, Or, Phrase, Prefix,
                                         SourceIs, Term, TopicIs, YearRange, is_at_least_group)
from searchnasa.search.schemas import SearchRequest

Occur = tantivy.Occur
Q = tantivy.Query

# Fielded words: (index field, analyzer, boost key). Unfielded words use the catch-all ``all``.
_WORD_FIELDS: dict[str | None, list[tuple[str, tantivy.TextAnalyzer, str]]] = {
    "title": [("title", STEM_ANALYZER, "title")],
    "abstract": [("abstract", STEM_ANALYZER, "abstract")],
    "subject": [("subjects", STEM_ANALYZER, "subjects"), ("keywords", STEM_ANALYZER, "keywords")],
    "keyword": [("keywords", STEM_ANALYZER, "keywords")],
    "author": [("authors", PLAIN_ANALYZER, "authors")],
}
# Fielded phrases: the unstemmed copies only. Unfielded phrases use ``all_exact``.
_PHRASE_FIELDS: dict[str | None, list[tuple[str, str]]] = {
    "title": [("title_exact", "title")],
    "abstract": [("abstract", "abstract")],  # no unstemmed abstract copy: a stemmed phrase
    "subject": [("subjects_exact", "subjects"), ("keywords_exact", "keywords")],
    "keyword": [("keywords_exact", "keywords")],
    "author": [("authors", "authors")],
}
_STEMMED = {"abstract"}  # phrase targets indexed only stemmed: the phrase is stemmed to match

# Weight of the adjacent-pair (proximity) score next to the words' own BM25; 0 turns it off.
# A pair is a rare term, so its BM25 is large: a small weight is enough. Chosen on SciFact
# (hybrid nDCG@10 0.731 -> 0.733 at 0.06-0.1, lower from 0.15 up), confirmed on NPL (0.507 ->
# 0.508 at 0.1, lower at 0.15-0.3); bench/proximity_study.py, bench/README.md "Ranking quality".
PAIR_WEIGHT = 0.1
# Weight of a match on the unstemmed form of a bare word (``all_exact``); 0 turns it off (the
# default: 0.1-0.4 did not help on SciFact and doubled the postings a word reads).
EXACT_WEIGHT = 0.0


def _tokens_query(schema: tantivy.Schema, field: str, tokens: Sequence[str]) -> tantivy.Query:
    if len(tokens) == 1:
        return Q.term_query(schema, field, tokens[0])
    return Q.phrase_query(schema, field, list(tokens))


def _any(queries: list[tantivy.Query]) -> tantivy.Query:
    if not queries:
        return Q.empty_query()
    if len(queries) == 1:
        return queries[0]
    return Q.boolean_query([(Occur.Should, q) for q in queries])


def _boosted(q: tantivy.Query, key: str) -> tantivy.Query:
    boost = BOOSTS.get(key, 1.0)
    return q if boost == 1.0 else Q.boost_query(q, boost)


def _all_fields(schema: tantivy.Schema, field: str, title_field: str, tokens: list[str],
                catch_all: Occur = Occur.Must) -> tantivy.Query:
    """Match on the catch-all field; a match in the title adds a boosted title score.
    ``catch_all`` Should gives the equivalent form Tantivy can skip through (``lone_word_query``)."""
    return Q.boolean_query([
        (catch_all, _tokens_query(schema, field, tokens)),
        (Occur.Should, Q.boost_query(_tokens_query(schema, title_field, tokens), TITLE_BOOST)),
    ])


def lone_word(node: Node) -> str | None:
    """The one analyzed token of a search that is a single bare word; None for anything else."""
    if not isinstance(node, Term) or node.field is not None or EXACT_WEIGHT > 0:
        return None
    tokens = STEM_ANALYZER.analyze(node.text)
    return tokens[0] if len(tokens) == 1 else None


def lone_word_query(schema: tantivy.Schema, token: str) -> tantivy.Query:
    """A search that is one bare word (``lone_word``), in the form Tantivy can rank without
    visiting every match.

    ``term_query`` requires the word on ``all`` and adds the title score as an optional clause.
    Since ``all`` holds the title (same analyzer), ``Should(all) + Should(title)`` matches the same
    records with the same scores, and a query made only of optional term clauses lets Tantivy's
    top-k collector skip blocks that cannot reach the page (block-max WAND) when it is not also
    counting, which for a common word is a large share of the page's cost.
    Only the top level of a search gains from it, so the caller decides when to use it.
    """
    return _all_fields(schema, "all", "title", [token], catch_all=Occur.Should)


def weighted_words_query(schema: tantivy.Schema, words: Sequence[str],
                         common: Callable[[str, str], bool] | None = None) -> tuple[tantivy.Query, tantivy.Query | None]:
    """Any of ``words`` (a whole paper's, say), each stemmed token's BM25 on ``all`` plus its
    boosted title score, times the number of times the text holds it, plus the proximity score
    of the words that stand side by side: what the same words OR-joined score, built only of
    optional term clauses so Tantivy's top-k collector can skip blocks that cannot reach the
    page (block-max WAND, as in :func:`lone_word_query`).

    One difference from OR-joining them: a word the analyzer splits (``heat-transfer``) counts
    as its parts, not as a phrase of them (a phrase is not a term clause); its parts' adjacency
    still scores through the proximity clause. Related papers use it for their 150-word seed:
    at 1M records it is 4x faster than the nested form, and it ranks as well (bench/README.md,
    "Related papers at 1M").

    ``common(field, term)``: which clauses to split off into the second query returned (None when
    none is): the terms so frequent that their blocks can rarely be skipped. The first query then
    finds the candidates fast, and the second adds the common terms' exact share of the score to
    them (:func:`~searchnasa.search.related._lexical_candidates`): the sum of both is the whole
    query's score, term by term.
    """
    counts = Counter(token for word in words for token in STEM_ANALYZER.analyze(word))
    clauses: list[tuple[tantivy.Occur, tantivy.Query]] = []
    later: list[tuple[tantivy.Occur, tantivy.Query]] = []

    def target(field: str, term: str) -> list[tuple[tantivy.Occur, tantivy.Query]]:
        return later if common is not None and common(field, term) else clauses

    def clause(field: str, term: str, boost: float) -> tuple[tantivy.Occur, tantivy.Query]:
        return Occur.Should, Q.boost_query(Q.term_query(schema, field, term), boost)

    for token, n in counts.items():  # a token's title clause goes where its ``all`` clause goes
        target("all", token).extend((clause("all", token, float(n)), clause("title", token, n * TITLE_BOOST)))
    if EXACT_WEIGHT > 0:  # off by default; scored as term_query scores a bare word's unstemmed form
        exact = Counter(token for word in words for token in PLAIN_ANALYZER.analyze(word))
        for token, n in exact.items():
            target("all_exact", token).append(clause("all_exact", token, n * EXACT_WEIGHT))
    if PAIR_WEIGHT > 0:
        for pair in adjacent_pairs(tuple(Term(word) for word in words)):
            target("all_pairs", pair).append(clause("all_pairs", pair, PAIR_WEIGHT))
    if not clauses:  # nothing but common terms: one query (there is nothing rarer to find candidates by)
        clauses, later = later, []
    return (Q.boolean_query(clauses) if clauses else Q.empty_query()), (Q.boolean_query(later) if later else None)


def term_query(schema: tantivy.Schema, node: Term) -> tantivy.Query:
    """A word (stemmed) anywhere, title matches boosted; fielded words on their fields only.
    A word the analyzer splits (``X-15``) is matched as a phrase of its parts."""
    if node.field is None:
        tokens = STEM_ANALYZER.analyze(node.text)
        if not tokens:
            return Q.empty_query()
        query = _all_fields(schema, "all", "title", tokens)
        if EXACT_WEIGHT > 0:
            exact = PLAIN_ANALYZER.analyze(node.text)
            if exact:
                query = Q.boolean_query([(Occur.Must, query), (Occur.Should, Q.boost_query(
                    _tokens_query(schema, "all_exact", exact), EXACT_WEIGHT))])
        return query
    parts = []
    for field, analyzer, key in _WORD_FIELDS[node.field]:
        tokens = analyzer.analyze(node.text)
        if tokens:
            parts.append(_boosted(_tokens_query(schema, field, tokens), key))
    if node.field == "author":
        parts.append(author_name_query(schema, node.text))
    return _any(parts)


def word_records(searcher: tantivy.Searcher, node: Term) -> int:
    """How many records hold a bare word (stemmed, anywhere); for a word the analyzer splits, the
    fewest holding any of its parts: an upper bound on the records holding them all."""
    tokens = STEM_ANALYZER.analyze(node.text)
    return min((int(searcher.doc_freq("all", t)) for t in tokens), default=0)


def author_name_query(schema: tantivy.Schema, typed: str) -> tantivy.Query:
    """An author name as typed ("Rasmus Christensen", "Christensen, R"), matched on the name keys
    of :mod:`searchnasa.authors`; BM25 on the keys, so a rare name outranks a common one."""
    return _any([Q.term_query(schema, "author_key", key) for key in query_keys(typed)])


def _unfielded_phrase(schema: tantivy.Schema, tokens: list[str]) -> tantivy.Query:
    """A phrase anywhere: one word is a term; two words are one ``all_pairs`` term; longer
    phrases need all their pairs and then the positional check (only where the pairs occur)."""
    if len(tokens) == 1:
        return _all_fields(schema, "all_exact", "title_exact", tokens)
    pairs = word_pairs(tokens)
    clauses = [(Occur.Must, Q.term_query(schema, "all_pairs", pair)) for pair in dict.fromkeys(pairs)]
    if len(tokens) > 2:
        clauses.append((Occur.Must, Q.const_score_query(Q.phrase_query(schema, "all_exact", tokens), 0.0)))
    clauses.append((Occur.Should, Q.boost_query(_tokens_query(schema, "title_exact", tokens), TITLE_BOOST)))
    return Q.boolean_query(clauses)


def phrase_query(schema: tantivy.Schema, node: Phrase) -> tantivy.Query:
    """Exact words in order on the unstemmed copies ("wind tunnels" does not match "wind tunnel").
    A stemmed phrase (an acronym's meaning) is its stemmed words in order on ``all``, title
    matches boosted, as a word is: "thermal barrier coated" finds "thermal barrier coatings"."""
    if node.stemmed:
        stems = STEM_ANALYZER.analyze(node.text)
        return _all_fields(schema, "all", "title", stems) if stems else Q.empty_query()
    tokens = PLAIN_ANALYZER.analyze(node.text)
    if not tokens:
        return Q.empty_query()
    if node.field is None:
        return _unfielded_phrase(schema, tokens)
    parts = []
    for field, key in _PHRASE_FIELDS[node.field]:
        field_tokens = STEM_ANALYZER.analyze(node.text) if field in _STEMMED else tokens
        parts.append(_boosted(_tokens_query(schema, field, field_tokens), key))
    if node.field == "author":
        parts.append(author_name_query(schema, node.text))
    return _any(parts)


# A truncated word is scored by at most this many of the words it expands to (the most common);
# it matches them all.
MAX_EXPANSIONS = 64


def prefix_fields(node: Prefix) -> list[tuple[str, str]]:
    """(index field, boost key) pairs a truncated word is matched on: the unstemmed copies, as
    for phrases (``abstract:`` has only its stemmed copy, whose terms start like the words)."""
    if node.field is None:
        return [("all_exact", "all")]
    return _PHRASE_FIELDS[node.field]


def expansions(searcher: tantivy.Searcher, field: str, prefix: str) -> tuple[list[str], int]:
    """The most common words of ``field`` that start with ``prefix`` (at most
    ``MAX_EXPANSIONS``), and how many words start with it in all."""
    terms = searcher.terms_with_prefix(field, prefix)
    return [term for term, _ in terms[:MAX_EXPANSIONS]], len(terms)


def _prefix_on(schema: tantivy.Schema, field: str, prefix: str, searcher: tantivy.Searcher | None) -> tantivy.Query:
    """Every record with a word of ``field`` starting with ``prefix``. With a searcher, the words
    it expands to are term queries, so BM25 scores them; when there are more than
    ``MAX_EXPANSIONS``, a regular expression matches them all and the commonest score."""
    if searcher is None:
        return _prefix_pattern(schema, field, prefix)
    words, total = expansions(searcher, field, prefix)
    if not words:
        return Q.empty_query()
    scored = _any([Q.term_query(schema, field, w) for w in words])
    if total <= len(words):
        return scored
    return Q.boolean_query([(Occur.Must, _prefix_pattern(schema, field, prefix)), (Occur.Should, scored)])


def _prefix_pattern(schema: tantivy.Schema, field: str, prefix: str) -> tantivy.Query:
    """Every term of ``field`` starting with ``prefix``, as one regular expression (constant score)."""
    return Q.regex_query(schema, field, re.escape(prefix) + ".*")


def prefix_query(schema: tantivy.Schema, node: Prefix, searcher: tantivy.Searcher | None = None) -> tantivy.Query:
    """A truncated word: every word starting with it, unstemmed ("turbo*" finds "turbojet",
    "turbofans", "turbomachinery"); unfielded, a title match adds the title boost."""
    if node.field is None:
        return Q.boolean_query([
            (Occur.Must, _prefix_on(schema, "all_exact", node.text, searcher)),
            (Occur.Should, Q.boost_query(_prefix_on(schema, "title_exact", node.text, searcher), TITLE_BOOST)),
        ])
    return _any([_boosted(_prefix_on(schema, field, node.text, searcher), key)
                 for field, key in prefix_fields(node)])


def year_query(schema: tantivy.Schema, lo: int | None, hi: int | None) -> tantivy.Query:
    return Q.range_query(schema, "year", tantivy.FieldType.Integer, lo, hi)


def adjacent_pairs(children: Sequence[Node]) -> list[str]:
    """The ``all_pairs`` terms of the bare words a query holds side by side, in order.

    Runs of consecutive unfielded :class:`Term` children give pairs (``thermal runaway`` ->
    ``thermal_runaway``); anything else (a phrase, a field clause, an exclusion) breaks the run,
    since its words are not bare words next to each other.
    """
    pairs: list[str] = []
    run: list[str] = []
    typed = [c for c in children if isinstance(c, Nearby)]
    if typed:  # the words as typed (stop words too) say what stood side by side
        return list(dict.fromkeys(word_pairs(PLAIN_ANALYZER.analyze(" ".join(typed[0].words)))))
    flat: list[Node | None] = []
    for child in children:  # the words of an "at least m of" group were typed side by side
        flat.extend(child.children if is_at_least_group(child) else (child,))
    for child in flat + [None]:
        if isinstance(child, Term) and child.field is None:
            run.extend(PLAIN_ANALYZER.analyze(child.text))
            continue
        if isinstance(child, Expanded):  # an acronym stands where it was typed
            run.extend(PLAIN_ANALYZER.analyze(child.acronym))
            continue
        pairs.extend(word_pairs(run))
        run = []
    return list(dict.fromkeys(pairs))


def proximity_query(schema: tantivy.Schema, children: Sequence[Node]) -> tantivy.Query | None:
    """An optional clause scoring documents that hold the query's adjacent words side by side."""
    if PAIR_WEIGHT <= 0:
        return None
    pairs = adjacent_pairs(children)
    if not pairs:
        return None
    return Q.boost_query(_any([Q.term_query(schema, "all_pairs", p) for p in pairs]), PAIR_WEIGHT)


def partial_query(schema: tantivy.Schema, node: Node,
                  searcher: tantivy.Searcher | None = None) -> tantivy.Query | None:
    """Any part of a conjunction, each scored as the conjunction scores it: a record holding some
    of the words gets the BM25 of those it holds (plus their proximity score), on the scale of a
    record holding them all.

    Hybrid search uses it to score semantic candidates that lack some of the words: without it
    such a candidate had the lexical score of a record holding none of them. Exclusions are left
    out (candidates already satisfy them). None when the query is not a conjunction of two or more
    parts: a candidate then either matches the query itself or holds none of it.
    """
    if is_at_least_group(node):
        node = And((node,))  # "at least m of": a record holding fewer words still gets their score
    if not isinstance(node, And):
        return None
    parts: list[Node] = []
    for child in node.children:
        if is_at_least_group(child):
            parts.extend(child.children)  # each word scores on its own, as inside the group
        elif not isinstance(child, (Not, Nearby)):  # Nearby scores below, with the proximity clause
            parts.append(child)
    if len(parts) < 2:
        return None
    clauses = [(Occur.Should, compile_node(schema, child, searcher)) for child in parts]
    proximity = proximity_query(schema, node.children)
    if proximity is not None:
        clauses.append((Occur.Should, proximity))
    return Q.boolean_query(clauses)


def compile_node(schema: tantivy.Schema, node: Node, searcher: tantivy.Searcher | None = None) -> tantivy.Query:
    """The Tantivy query for a tree node. ``searcher`` lets a truncated word (``turbo*``) be
    scored by the words it expands to (:func:`prefix_query`); without one it still matches
    the same records."""
    if isinstance(node, Term):
        return term_query(schema, node)
    if isinstance(node, Prefix):
        return prefix_query(schema, node, searcher)
    if isinstance(node, Phrase):
        return phrase_query(schema, node)
    if isinstance(node, YearRange):
        return Q.const_score_query(year_query(schema, node.lo, node.hi), 0.0)
    if isinstance(node, SourceIs):
        return Q.const_score_query(Q.term_query(schema, "source", node.source), 0.0)
    if isinstance(node, TopicIs):
        return Q.const_score_query(Q.term_query(schema, "topic", node.slug), 0.0)
    if isinstance(node, IdSet):
        return Q.term_set_query(schema, "id", list(node.ids))
    if isinstance(node, MatchAll):
        return Q.all_query()
    if isinstance(node, Nearby):  # alone it would match nothing: it only adds to a match's score
        return proximity_query(schema, (node,)) or Q.empty_query()
    if isinstance(node, Not):
        return Q.boolean_query([(Occur.Must, Q.all_query()),
                                (Occur.MustNot, compile_node(schema, node.child, searcher))])
    if isinstance(node, And):
        clauses = []
        for child in node.children:
            if isinstance(child, Not):
                clauses.append((Occur.MustNot, compile_node(schema, child.child, searcher)))
            elif isinstance(child, Nearby):
                continue  # scored by the proximity clause below
            else:
                clauses.append((Occur.Must, compile_node(schema, child, searcher)))
        if all(occ == Occur.MustNot for occ, _ in clauses):
            clauses.append((Occur.Must, Q.all_query()))
        proximity = proximity_query(schema, node.children)
        if proximity is not None:  # optional next to required clauses: scores, never filters
            clauses.append((Occur.Should, proximity))
        return Q.boolean_query(clauses)
    if isinstance(node, Expanded):
        return expanded_query(schema, node, searcher)
    if isinstance(node, Or):
        compiled = {c: compile_node(schema, c, searcher) for c in node.children}
        clauses = [(Occur.Should, compiled[c]) for c in node.children]
        at_least = node.minimum if is_at_least_group(node) else None
        if at_least:  # a rare word alone is enough: it counts as ``minimum`` alternatives, scored once
            clauses += [(Occur.Should, Q.const_score_query(compiled[c], 0.0))
                        for c in node.alone for _ in range(at_least - 1)]
        alternatives = Q.boolean_query(clauses, minimum_number_should_match=at_least)
        proximity = proximity_query(schema, node.children)
        if proximity is None:
            return alternatives
        return Q.boolean_query([(Occur.Must, alternatives), (Occur.Should, proximity)])
    raise TypeError(f"unknown query node {node!r}")


def expanded_query(schema: tantivy.Schema, node: Expanded, searcher: tantivy.Searcher | None = None) -> tantivy.Query:
    """An acronym or any of its meanings, scored as the one word it was typed as: the best of the
    acronym's own BM25 and each meaning's, a meaning's phrase score divided by its number of words
    (a phrase's BM25 sums its words' weights, so it would otherwise count as several words, and the
    records spelling the acronym out would outrank those holding the query's other words). Chosen
    on SciFact, lexical nDCG@10: summed, unscaled 0.683; best-of, unscaled 0.691; best-of, scaled
    0.693 (unexpanded 0.693); bench/README.md "Acronyms"."""
    subqueries = []
    for i, child in enumerate(node.children):
        query = compile_node(schema, child, searcher)
        if i > 0 and isinstance(child, Phrase):
            words = len(STEM_ANALYZER.analyze(child.text))
            query = Q.boost_query(query, 1.0 / words) if words > 1 else query
        subqueries.append(query)
    return Q.disjunction_max_query(subqueries, 0.0)


def filter_queries(schema: tantivy.Schema, *, source: str | None = None, year_from: int | None = None,
                   year_to: int | None = None, document_type: Iterable[str] = (),
                   subject: Iterable[str] = (), organization: Iterable[str] = (),
                   author: Iterable[str] = (), topic: Iterable[str] = ()) -> list[tantivy.Query]:
    """One scoring-neutral query per active filter (values within a filter are ORed)."""
    out: list[tantivy.Query] = []
    if source:
        out.append(Q.term_query(schema, "source", source))
    if year_from is not None or year_to is not None:
        out.append(year_query(schema, year_from, year_to))
    # An organization is filtered under its canonical name (a NASA center's, from any of its names).
    organization = [canonical_organization(v) for v in organization if v]
    for field, values in (("document_type", document_type), ("subject_value", subject),
                          ("organization_value", organization), ("topic", topic)):
        values = [v for v in values if v]
        if values:
            out.append(Q.term_set_query(schema, field, values))
    # An author is filtered by the name as typed or as the facet shows it (authors.py's keys).
    author_keys = list(dict.fromkeys(k for name in author if name for k in query_keys(name)))
    if author_keys:
        out.append(Q.term_set_query(schema, "author_key", author_keys))
    elif any(name.strip() for name in author):
        out.append(Q.empty_query())  # a name with no letters matches nobody
    return [Q.const_score_query(q, 0.0) for q in out]


def named_filters(schema: tantivy.Schema, req: SearchRequest) -> dict[str, tantivy.Query]:
    """The request's active filters by name (the names facets use: a facet ignores its own)."""
    named: dict[str, tantivy.Query] = {}
    for name, kwargs in (
        ("source", {"source": req.source}),
        ("year", {"year_from": req.year_from, "year_to": req.year_to}),
        ("document_type", {"document_type": req.document_type}),
        ("subject", {"subject": req.subject}),
        ("organization", {"organization": req.organization}),
        ("author", {"author": req.author}),
        ("topic", {"topic": req.topic}),
    ):
        queries = filter_queries(schema, **kwargs)  # type: ignore[arg-type]
        if queries:
            named[name] = queries[0]
    return named


def with_filters(main: tantivy.Query, filters: list[tantivy.Query]) -> tantivy.Query:
    if not filters:
        return main
    return Q.boolean_query([(Occur.Must, main)] + [(Occur.Must, f) for f in filters])
