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

``MIN_SHARE`` and ``MIN_REQUIRED`` were chosen on SciFact claims typed as sentences
(``searchnasa eval --words all``) under the hybrid contract, among the settings that keep "at least
two words" (a pair of the typed words is the least a match should share), and confirmed on NPL;
bench/README.md "Queries as typed" has the sweep.
"""

from __future__ import annotations

import math

from searchnasa.search.query_tree import And, Expanded, Nearby, Node, Not, Or, Term

# Function words of English questions and claims: articles, auxiliaries, pronouns, prepositions,
# conjunctions, question words. Content words ("effect", "use", "new") are never on it.
STOP_WORDS = frozenset("""a an and are as at be been being but by can could did do does for from
had has have how i if in into is it its of on or our should so such than that the their them then
there these they this those to was we were what when where which while who whom why will with
would you your""".split())
LONG_QUERY_WORDS = 4  # from this many content words, not every one is required
MIN_SHARE = 0.1  # the share of a long query's content words a record must hold
MIN_REQUIRED = 2  # ... and never fewer than this many


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
