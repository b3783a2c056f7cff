"""How much work an exact count would be, so a query that would run too long is cut off up front.

Tantivy (through its Python binding) cannot stop a search half-way, and the expensive part of a
huge query is not finding the best page (block-max WAND skips most of the postings) but counting
every match exactly and aggregating facets over all of them, which walks every posting of every
term. So the search service asks first: how many postings would that walk? The estimate is the
sum of each word's document frequency on every field it is searched in (exact, from the term
dictionaries; no postings are read), plus a full scan for each ``NOT`` or match-all part. Over the
budget, the service skips the exact count and the facets, returns the best page, and reports the
total as a lower bound (``total_is_lower_bound``), which the page shows as "At least N records".

The budget (``SEARCHNASA_COUNT_BUDGET`` postings, default :data:`DEFAULT_COUNT_BUDGET`) is set so
that the counted queries stay well under a second on the SYNTHETIC 1M-record index on 2 cores.
"""

from __future__ import annotations

import dataclasses

import tantivy

from searchnasa.errors import BadInput
from searchnasa.index.schema import PLAIN_ANALYZER, STEM_ANALYZER
from searchnasa.search import lexical
from searchnasa.search.query_tree import (And, IdSet, MatchAll, Nearby, Node, Not, Or, Phrase, Prefix, SourceIs,
                                         Term, TopicIs, YearRange, tree_depth)
from searchnasa.settings import default_of, env_number

DEFAULT_COUNT_BUDGET = int(default_of("COUNT_BUDGET"))
MAX_DEPTH = 100  # a tree nested deeper than this is over budget whatever its words
OVER = 10**15


def count_budget() -> int:
    """The budget in postings, from the environment (read per call: tests and operators set it)."""
    value = int(env_number("COUNT_BUDGET", int))
    return value if value > 0 else DEFAULT_COUNT_BUDGET


def _word_fields(node: Term) -> list[tuple[str, tantivy.TextAnalyzer]]:
    """The fields :mod:`.lexical` searches a word in (the catch-all plus the title, unfielded)."""
    if node.field is None:
        return [("all", STEM_ANALYZER), ("title", STEM_ANALYZER)]
    return [(field, analyzer) for field, analyzer, _ in lexical._WORD_FIELDS.get(node.field, [])]


def _phrase_fields(node: Phrase) -> list[str]:
    if node.stemmed:  # an acronym's meaning: on the stemmed catch-all and title (lexical.phrase_query)
        return ["all", "title"]
    if node.field is None:
        return ["all_exact", "title_exact"]
    return [field for field, _ in lexical._PHRASE_FIELDS.get(node.field, [])]


def _doc_freq(searcher: tantivy.Searcher, field: str, token: str) -> int:
    try:
        return int(searcher.doc_freq(field, token))
    except ValueError:  # a field this index does not have (an older schema): nothing to walk
        return 0


def _prefix_postings(searcher: tantivy.Searcher, field: str, prefix: str) -> int:
    try:
        return sum(int(df) for _, df in searcher.terms_with_prefix(field, prefix))
    except ValueError:  # a field this index does not have
        return 0


def postings_cost(searcher: tantivy.Searcher, node: Node, _depth: int = 0) -> int:
    """Postings an exact evaluation of ``node`` would walk (a rough upper bound).

    OR walks every alternative; AND is driven by its rarest required part (the others are
    skipped through), so it costs about that part times the number of parts; NOT scans everything.
    """
    total_docs = searcher.num_docs
    if _depth > MAX_DEPTH:
        return OVER  # pathological nesting: over any budget
    if isinstance(node, Term):
        return sum(_doc_freq(searcher, field, token)
                   for field, analyzer in _word_fields(node) for token in analyzer.analyze(node.text))
    if isinstance(node, Prefix):  # the union of every word it expands to
        fields = [field for field, _ in lexical.prefix_fields(node)]
        if node.field is None:
            fields.append("title_exact")
        return sum(_prefix_postings(searcher, field, node.text) for field in fields)
    if isinstance(node, Phrase):
        analyzer = STEM_ANALYZER if node.stemmed else PLAIN_ANALYZER
        tokens = analyzer.analyze(node.text)  # a phrase walks postings and positions
        return sum(2 * _doc_freq(searcher, field, token) for field in _phrase_fields(node) for token in tokens)
    if isinstance(node, TopicIs):  # one posting list
        return _doc_freq(searcher, "topic", node.slug)
    if isinstance(node, (MatchAll, YearRange, SourceIs)):
        return total_docs
    if isinstance(node, Nearby):  # only scores the matches the other parts find
        return 0
    if isinstance(node, IdSet):
        return len(node.ids)
    if isinstance(node, Not):  # "everything except": a full scan, the exclusion skipped through
        return total_docs
    if isinstance(node, Or):
        return sum(postings_cost(searcher, child, _depth + 1) for child in node.children)
    if isinstance(node, And):  # excluded parts are skipped through, like the non-driving ones
        required = [postings_cost(searcher, c, _depth + 1) for c in node.children
                    if not isinstance(c, (Not, Nearby))]
        return min(required) * len(required) if required else total_docs
    return total_docs


CUT_NOTICE = ("This query has too many common alternatives to count in full in time; showing the "
              "matches of its rarer words, so the count is a lower bound.")


def _dedupe(node: Node) -> Node:
    """The same tree with repeated alternatives / parts said once (the same matches, cheaper)."""
    if isinstance(node, (And, Or)):
        children = tuple(dict.fromkeys(_dedupe(c) for c in node.children))
        if len(children) == 1:
            return children[0]
        if isinstance(node, Or):  # replace: an acronym's expansion stays one
            return dataclasses.replace(node, children=children, minimum=min(node.minimum, len(children)),
                                       alone=tuple(dict.fromkeys(c for c in node.alone if c in children)))
        return And(children)
    if isinstance(node, Not):
        return Not(_dedupe(node.child))
    return node


def _prune(searcher: tantivy.Searcher, node: Node, budget: int, depth: int = 0) -> tuple[Node, bool]:
    """Drop the commonest OR alternatives until ``node`` fits ``budget``.

    Only ever narrows the match set (an OR keeps a subset of its alternatives; an AND keeps all
    its parts, each narrowed; a NOT is left whole, since narrowing what it excludes would widen
    the result), so what the pruned tree matches is a subset and its count a true lower bound.
    Common words carry little weight in BM25 (low IDF), so the ranking of the rest barely moves.
    """
    if depth > MAX_DEPTH or postings_cost(searcher, node) <= budget:
        return node, False
    if isinstance(node, Or):
        ranked = sorted(node.children, key=lambda c: postings_cost(searcher, c))
        kept: list[Node] = []
        spent = 0
        for child in ranked:
            cost = postings_cost(searcher, child)
            # "at least m of" keeps m alternatives: at least m of fewer words still narrows
            if len(kept) >= node.minimum and spent + cost > budget:
                break
            child, _ = _prune(searcher, child, budget - spent, depth + 1)
            kept.append(child)
            spent += postings_cost(searcher, child)
        order = {c: i for i, c in enumerate(node.children)}
        kept.sort(key=lambda c: order.get(c, len(order)))
        alone = tuple(c for c in node.alone if c in kept)
        return (kept[0] if len(kept) == 1 else dataclasses.replace(node, children=tuple(kept), alone=alone)), True
    if isinstance(node, And):
        parts, cut = [], False
        for child in node.children:
            if isinstance(child, Not):
                parts.append(child)
                continue
            narrowed, was_cut = _prune(searcher, child, budget, depth + 1)
            parts.append(narrowed)
            cut = cut or was_cut
        return And(tuple(parts)), cut
    return node, False


def fit_to_budget(searcher: tantivy.Searcher, node: Node, budget: int | None = None) -> tuple[Node, bool]:
    """The tree to run and whether it was cut (then its count is a lower bound of the query's).

    Within budget the tree is returned untouched. Over it, repeats are dropped first (exact), and
    only if that is not enough are the commonest alternatives dropped (:func:`_prune`).
    """
    budget = budget if budget is not None else count_budget()
    if tree_depth(node) > MAX_DEPTH:  # the parser never nests this deep; refuse, don't recurse
        raise BadInput(f"the query is nested more than {MAX_DEPTH} levels deep")
    if postings_cost(searcher, node) <= budget:
        return node, False
    node = _dedupe(node)
    return _prune(searcher, node, budget)
