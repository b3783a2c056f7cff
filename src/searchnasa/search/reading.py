"""How bare words are read: as a person types them, not as a Boolean formula.

These rules apply to the top level of a parsed query (groups in parentheses, phrases, field
clauses and exclusions are left exactly as typed; a query that says ``AND`` anywhere is read as
written, every word required):

- **Stop words are not required.** "what is the effect of microgravity on bone" should not demand
  "what", "is", "the" and "of" of every record (they are in almost every abstract, and the few
  records lacking one are not worse answers). They are dropped from the words the lexical index
  requires and highlights; the semantic model still reads the whole question
  (:attr:`searchnasa.search.query.ParsedQuery.typed_words`). A query made only of stop words
  keeps them.
- **An acronym is one word.** An acronym expanded to the meanings the collection gives it
  (:mod:`searchnasa.search.acronyms`) is one OR group that counts as the one word typed.
- **Long questions need most, not all, of their words.** Two or three words typed together are
  meant together and all stay required. From ``LONG_QUERY_WORDS`` content words on, a record must
  hold at least ``required_words(n)`` of the ``n`` words (BM25 still ranks records holding more of
  them, and rarer ones, first): a ten-word question otherwise matches almost no record with every
  word, and the lexical half of hybrid search would be empty. The page says how it read the query
  ("at least 2 of (effect, microgravity, bone, ...)").
- **A rare word may match alone.** In a long question (not a pasted passage), a word that at most ``RARE_SHARE`` of
  the collection holds (``onchocerciasis`` in "Ivermectin is used to treat onchocerciasis") names
  the subject so precisely that a record holding it alone is an answer, not noise: requiring a
  second, common word ("used", "treat") dropped such records from the matches entirely (SciFact's
  relevant abstract for that claim was in no semantic candidate list either). Such words count as
  the whole requirement and are scored once (:func:`rare_words_alone`; the index's document
  frequencies decide, so the rule needs a searcher and is applied by the search service). The page
  says so: "..., or a rare one alone (onchocerciasis)".

``MIN_SHARE`` and ``MIN_REQUIRED`` were chosen on SciFact claims typed as sentences
(``searchnasa eval --words all``) under the hybrid contract, among the settings that keep "at least
two words" (a pair of the typed words is the least a match should share), and confirmed on NPL;
bench/README.md "Queries as typed" has the sweep. ``RARE_SHARE`` was chosen the same way (SciFact
is flat from 0.005 to 0.05), at its most conservative point: a larger share lets words like
"supersonic" match alone and multiplies a question's matches. As typed, hybrid SciFact 0.731 ->
0.738 with sentence vectors (OR'd 0.738), lexical 0.686 -> 0.694; NPL 0.503 -> 0.501, within its
noise (bench/README.md, "A rare word alone").
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

from searchnasa.search.query_tree import (And, Expanded, Nearby, Node, Not, Or, Term,
                                         is_at_least_group)

# Function words of English questions and claims: articles, auxiliaries, pronouns, prepositions,
# conjunctions, question words. Content words ("effect", "use", "new") are never on it.
STOP_WORDS = frozenset("""a an and are as at be been being but by can could did do does for from
had has have how i if in into is it its of on or our should so such than that the their them then
there these they this those to was we were what when where which while who whom why will with
would you your""".split())
LONG_QUERY_WORDS = 4  # from this many content words, not every one is required
MIN_SHARE = 0.1  # the share of a long query's content words a record must hold
MIN_REQUIRED = 2  # ... and never fewer than this many
RARE_SHARE = 0.01  # a word held by at most this share of the records (one in 100) may match a long query alone


def required_words(n: int) -> int:
    """How many of ``n`` typed content words a record must hold."""
    if n < LONG_QUERY_WORDS:
        return n
    return max(MIN_REQUIRED, math.ceil(MIN_SHARE * n))


def is_stop_word(node: Node) -> bool:
    return isinstance(node, Term) and node.field is None and node.text.lower() in STOP_WORDS


def _bare(node: Node) -> bool:
    """A word typed bare; an acronym expanded to its meanings (:class:`Expanded`) is one word too,
    so "TBC spallation cracks oxidation" needs as many of its words as it would unexpanded."""
    return (isinstance(node, Term) and node.field is None) or isinstance(node, Expanded)


def _typed_text(node: Node) -> str:
    return node.acronym if isinstance(node, Expanded) else node.text  # type: ignore[union-attr]


def read_as_typed(tree: Node) -> Node:
    """The tree with the two rules above applied to its top level."""
    children = list(tree.children) if isinstance(tree, And) else [tree]
    content = [c for c in children if not is_stop_word(c)]
    if not any(not isinstance(c, Not) for c in content):
        return tree  # only stop words (or exclusions besides them): keep them as typed
    words = list(dict.fromkeys(c for c in content if _bare(c)))
    need = required_words(len(words))
    if need < len(words):
        first = content.index(words[0])
        content = [c for c in content if not _bare(c)]
        content.insert(first, Or(tuple(words), minimum=need))
    if len(content) == len(children):
        return tree
    typed = tuple(_typed_text(c) for c in children if _bare(c))
    if len(typed) > 1:
        content.append(Nearby(typed))
    return content[0] if len(content) == 1 else And(tuple(content))


def rare_words_alone(tree: Node, doc_freq: Callable[[Term], int], total_docs: int) -> Node:
    """The tree with each "at least m of" group of a long question (its top level, as
    :func:`read_as_typed` builds it) told which of its bare words are rare enough to match alone:
    held by at least one record and by at most ``RARE_SHARE`` of ``total_docs``. Only a question's
    group (``m`` = ``MIN_REQUIRED``: up to 20 content words) is told: in a pasted passage (a whole
    abstract, ``m`` of 3 or more) one rare word of many says little of what the text is about, and
    at 1M records such a passage's matches grew up to 4x and its search from ~0.3 to ~0.5 s. ``doc_freq``: the
    number of records holding a word (for a word the analyzer splits, the fewest holding any part:
    a bound on the records holding them all)."""
    if is_at_least_group(tree) and tree.minimum <= MIN_REQUIRED:
        limit = RARE_SHARE * total_docs
        rare = tuple(c for c in tree.children if isinstance(c, Term) and c.field is None
                     and 0 < doc_freq(c) <= limit)
        return dataclasses.replace(tree, alone=rare) if rare else tree
    if isinstance(tree, And):
        children = tuple(rare_words_alone(c, doc_freq, total_docs) if isinstance(c, Or) else c
                         for c in tree.children)
        return And(children) if children != tree.children else tree
    return tree


def reads_loosely(tree: Node) -> bool:
    """Whether the top level of ``tree`` holds an "at least m of" group: a long question read as
    typed, so not every word it holds is required (the results page then says how it was read)."""
    children = tree.children if isinstance(tree, And) else (tree,)
    return any(is_at_least_group(c) for c in children)
