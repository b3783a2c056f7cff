""""Did you mean": a corrected query for words the index does not hold.

A misspelled word ("aerodynamcs") matches nothing lexically, so a keyword search finds nothing and
a hybrid search shows records that are merely near the typo in embedding space. The fix users
expect is one click away: the same query with the word replaced by the closest word the index
does hold, offered, never applied behind their back.

How a word is corrected, in the order of the checks:

1. Only words of at least ``MIN_LENGTH`` letters are checked (shorter words have too many
   neighbours to guess from; digits and identifiers are never corrected).
2. A word is suspect when it matches at most ``SUSPECT_MAX_DF`` records the way the query
   searches it: a bare word by its stem on ``all`` (so a word the index holds in another
   inflection, "computings", is left alone), a word of a quoted phrase exactly on ``all_exact``.
3. Candidates are the unstemmed terms of ``all_exact`` that start like the word (its first two
   letters, those two swapped, or its first and third: a slip in the second letter), read from
   Tantivy's term dictionary with their document frequencies (``Searcher.terms_with_prefix``):
   a few hundred terms, about a millisecond at 4M records.
4. The best candidate is the closest by optimal-string-alignment distance (an adjacent swap is
   one edit), at most 1 edit for words under ``TWO_EDITS_FROM`` letters and 2 from there; ties go
   to the term found with the query's other words in the most records, then to the more frequent
   term. It is offered when the word matches nothing, or when the candidate
   is at least ``MIN_RATIO`` times as frequent (a typo that a few records share).

A word typed with accents the index does not hold ("kármán" where records say "Karman") is
offered without them first. A bare word that matches nothing but starts other words ("turbo":
"turbojet", "turbopump") is offered truncated ("turbo*", see :mod:`.query`), unless a close word
is more common than those words together.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

import tantivy
from rapidfuzz import process
from rapidfuzz.distance import OSA

from searchnasa.index.schema import PLAIN_ANALYZER, STEM_ANALYZER
from searchnasa.search.query_tree import Phrase, Prefix, Term

Q = tantivy.Query
Occur = tantivy.Occur

MIN_LENGTH = 5
TWO_EDITS_FROM = 8
SUSPECT_MAX_DF = 3
MIN_RATIO = 100
MAX_TIED = 5  # equally close candidates compared by the records they share with the query
MAX_SUSPECTS = 5  # words looked up in the term dictionary, per query
MAX_CONTEXT = 6  # of the query's other words, to break ties
FIELD = "all_exact"


def _max_edits(word: str) -> int:
    return 2 if len(word) >= TWO_EDITS_FROM else 1


def _candidates(searcher: tantivy.Searcher, word: str) -> dict[str, int]:
    prefixes = {word[:2], word[1] + word[0], word[0] + word[2]}
    terms: dict[str, int] = {}
    for prefix in prefixes:
        for term, df in searcher.terms_with_prefix(FIELD, prefix):
            terms[term] = int(df)
    return terms


def _stem(word: str) -> str | None:
    stems = STEM_ANALYZER.analyze(word)
    return stems[0] if len(stems) == 1 else None


def _matches(searcher: tantivy.Searcher, word: str, exact: bool) -> int:
    if exact:
        return int(searcher.doc_freq(FIELD, word))
    stem = _stem(word)
    return int(searcher.doc_freq("all", stem)) if stem else 0


def _together(searcher: tantivy.Searcher, schema: tantivy.Schema, word: str, context: Sequence[str]) -> int:
    """How many records hold ``word`` with every word of ``context`` (stems on ``all``)."""
    stems = [stem for stem in (_stem(w) for w in [word, *context]) if stem]
    query = Q.boolean_query([(Occur.Must, Q.term_query(schema, "all", stem)) for stem in stems])
    return int(searcher.search(query, limit=1, count=True).count or 0)


def _fold(word: str) -> str:
    return unicodedata.normalize("NFKD", word).encode("ascii", "ignore").decode()


def _checked(word: str) -> bool:
    return len(word) >= MIN_LENGTH and word.isalpha()


def correct_word(searcher: tantivy.Searcher, word: str, exact: bool = False,
                 schema: tantivy.Schema | None = None, context: Sequence[str] = (),
                 df: int | None = None) -> str | None:
    """The index's closest word to ``word`` (lower case, one token), or None when ``word`` is
    found, too short, not a word, or has no close and clearly more frequent neighbour.
    ``exact``: the word is part of a quoted phrase (matched unstemmed). ``context``: the query's
    other words; among equally close candidates the one found with them in the most records wins
    ("heat sheld": "shield", not the more frequent "shell"), then the more frequent. ``df``: the
    word's matches when the caller has counted them."""
    if not _checked(word):
        return None
    df = _matches(searcher, word, exact) if df is None else df
    if df > SUSPECT_MAX_DF:
        return None
    folded = _fold(word)
    if folded != word and len(folded) >= MIN_LENGTH and _matches(searcher, folded, exact) > df:
        return folded  # "kármán" typed, "karman" indexed
    terms = _candidates(searcher, word)
    terms.pop(word, None)
    # "turbo": no such word, but "turbojet", "turbopump", ... start with it: the truncation,
    # unless a close word is more common than all of those together ("sheld": "shield", not
    # "sheldon"); in a quoted phrase, which cannot be truncated, such a word is left as typed.
    # (``terms`` holds every word starting with ``word``: they all start with its first two letters.)
    starts = 0 if df else sum(n for t, n in terms.items() if t.startswith(word))
    truncated = None if exact else word + "*"
    close = process.extract(word, list(terms), scorer=OSA.distance, score_cutoff=_max_edits(word), limit=None)
    if not close:
        return truncated if starts else None
    nearest = min(distance for _, distance, _ in close)
    tied = sorted((term for term, distance, _ in close if distance == nearest), key=lambda t: (-terms[t], t))
    tied = tied[:MAX_TIED]
    best = tied[0]
    if len(tied) > 1 and context and schema is not None:
        best = max(tied, key=lambda t: (_together(searcher, schema, t, context), terms[t], t))
    if starts >= terms[best]:
        return truncated
    if df and terms[best] < MIN_RATIO * df:
        return None
    return best


_WORD = re.compile(r"[^\W\d_]+")


def suggest(searcher: tantivy.Searcher, schema: tantivy.Schema, query: str,
            parts: Sequence[Term | Phrase | Prefix]) -> str | None:
    """``query`` with each suspect word among ``parts`` (the words and phrases the user asked
    for, not the excluded ones: :func:`~.query.positive_parts`) replaced by its correction;
    None when nothing was corrected.

    Bounded for any query: at most ``MAX_SUSPECTS`` words are looked up in the term dictionary
    (a query of random letters would otherwise walk it once per word), and the context that
    breaks ties is at most ``MAX_CONTEXT`` of the query's words the index does hold."""
    words: dict[tuple[str, bool], int] = {}
    for part in parts:
        if not isinstance(part, (Term, Phrase)):
            continue  # a truncated word ("turbo*") is a prefix, not a misspelling
        exact = isinstance(part, Phrase)
        for word in PLAIN_ANALYZER.analyze(part.text):
            if (word, exact) not in words:
                words[(word, exact)] = _matches(searcher, word, exact)
    found = list(dict.fromkeys(w for (w, _), df in words.items() if df > SUSPECT_MAX_DF))[:MAX_CONTEXT]
    suspects = [(w, exact, df) for (w, exact), df in words.items()
                if df <= SUSPECT_MAX_DF and _checked(w)][:MAX_SUSPECTS]
    corrections: dict[str, str] = {}
    for word, exact, df in suspects:
        if word not in corrections:
            fixed = correct_word(searcher, word, exact, schema, [w for w in found if w != word], df)
            if fixed is not None:
                corrections[word] = fixed
    if not corrections:
        return None

    def replace(match: re.Match[str]) -> str:
        return corrections.get(match.group(0).lower(), match.group(0))

    corrected = _WORD.sub(replace, query)
    return corrected if corrected != query else None
