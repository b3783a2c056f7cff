"""The lexical index's schema and analyzers, in one place so the indexer, the query builder and
the snippet highlighter all tokenize text exactly the same way.

Why this layout:
- ``all``/``all_exact`` hold every searchable text once more (title, abstract, subjects,
  keywords, organizations, authors, identifiers): an unfielded word or phrase is matched on this
  one field (one posting list per word instead of one per field, which is what keeps multi-word
  queries fast at millions of records), and the title copy adds a boost for matches in the title.
  Multi-valued fields get a position gap, so a phrase never spans two values.
- ``all_pairs`` indexes each pair of adjacent unstemmed words as one term (``wind_tunnel``): a
  two-word phrase is then one posting list instead of a positional check of every document holding
  both words (``"united states"`` matches most OSTI records through their affiliations), and longer
  phrases check positions only where all their pairs occur.
- Fields a prefix can target exist twice: stemmed (``en_stem``, for bare words: "tunnels" finds
  "tunnel") and unstemmed (``default``: lowercase only, for quoted phrases, which must match exactly).
- Filters and facets read fast fields (``source``, ``year``, ``document_type``, ``subject_value``,
  ``organization_value``, ``topic``) stored with the ``raw`` tokenizer so a facet value is the label
  itself (for ``topic``, the shared topic's slug, computed from the subjects by the crosswalk in
  :mod:`searchnasa.topics`).
- ``card`` holds the few fields a result card shows (compact JSON), so a results page needs no
  SQLite round trip; ``key`` is a 63-bit hash of the id in a fast column so ranking code can join
  hits to semantic candidates without loading documents.
- ``sample`` puts each record in nested uniform samples (1/16, 1/64, 1/256, 1/1024 of all
  records, by id hash) as posting lists, so facet counts over a huge result set can be estimated by
  intersecting with a short list instead of visiting every match.
- ``newest_key``/``oldest_key`` sort by year with records lacking a year last, and the id's hash as
  the tie-break, so sorted pages are stable.
"""

from __future__ import annotations

import hashlib

import tantivy

SCHEMA_VERSION = 7

# Per-field copies for field prefixes (``title:``, ``subject:``, ``abstract:``): (stemmed, exact).
# The abstract has no exact copy (it is the bulk of the text, and ``all_exact`` covers unfielded
# phrases); ``abstract:"..."`` matches the phrase on the stemmed copy.
TEXT_FIELDS: dict[str, tuple[str, str | None]] = {
    "title": ("title", "title_exact"),
    "abstract": ("abstract", None),
    "subjects": ("subjects", "subjects_exact"),
    "keywords": ("keywords", "keywords_exact"),
}
# Fields indexed once with the unstemmed analyzer (names and identifiers are not English words).
PLAIN_FIELDS = ("authors", "identifiers")

# An unfielded match in the title adds this times the title field's BM25 (the title is also in
# ``all``). Chosen on SciFact, nDCG@10: 0 -> 0.685, 0.3 -> 0.695, 1.0 -> 0.668, 2.0 lower still;
# NPL documents have no title, so it cannot be confirmed there (bench/README.md, "Ranking quality").
TITLE_BOOST = 0.3
BOOSTS: dict[str, float] = {
    "title": 3.0,
    "abstract": 1.0,
    "subjects": 1.5,
    "keywords": 1.5,
    "authors": 1.0,
    "identifiers": 1.0,
}

STEM_TOKENIZER = "en_stem"
PLAIN_TOKENIZER = "default"
MAX_TOKEN_LEN = 40  # tantivy's default/en_stem analyzers drop longer tokens


def build_schema() -> tantivy.Schema:
    """The schema; bump :data:`SCHEMA_VERSION` whenever this changes (forces a full rebuild)."""
    sb = tantivy.SchemaBuilder()
    sb.add_text_field("id", stored=True, tokenizer_name="raw", index_option="basic")
    sb.add_text_field("all", tokenizer_name=STEM_TOKENIZER, index_option="position")
    sb.add_text_field("all_exact", tokenizer_name=PLAIN_TOKENIZER, index_option="position")
    sb.add_text_field("all_pairs", tokenizer_name="whitespace", index_option="freq")
    sb.add_integer_field("key", indexed=False, fast=True)
    for stem_name, exact_name in TEXT_FIELDS.values():
        sb.add_text_field(stem_name, tokenizer_name=STEM_TOKENIZER, index_option="position")
        if exact_name:
            sb.add_text_field(exact_name, tokenizer_name=PLAIN_TOKENIZER, index_option="position")
    for name in PLAIN_FIELDS:
        sb.add_text_field(name, tokenizer_name=PLAIN_TOKENIZER, index_option="position")
    # exact identifier lookups: lower-cased whole DOIs and report numbers
    sb.add_text_field("ident_raw", tokenizer_name="raw", index_option="basic")
    sb.add_text_field("source", tokenizer_name="raw", fast=True, index_option="basic")
    sb.add_integer_field("year", indexed=True, fast=True)
    sb.add_text_field("document_type", tokenizer_name="raw", fast=True, index_option="basic")
    sb.add_text_field("subject_value", tokenizer_name="raw", fast=True, index_option="basic")
    sb.add_text_field("organization_value", tokenizer_name="raw", fast=True, index_option="basic")
    # authors as people type them (authors.py): name keys matched, display names counted
    sb.add_text_field("author_key", tokenizer_name="raw", index_option="freq")
    sb.add_text_field("author_value", tokenizer_name="raw", fast=True, index_option="basic")
    sb.add_text_field("topic", tokenizer_name="raw", fast=True, index_option="basic")
    sb.add_text_field("sample", tokenizer_name="raw", index_option="basic")
    sb.add_integer_field("newest_key", fast=True)
    sb.add_integer_field("oldest_key", fast=True)
    sb.add_bytes_field("card", stored=True)
    return sb.build()


def _analyzer(stem: bool) -> tantivy.TextAnalyzer:
    builder = (tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
               .filter(tantivy.Filter.remove_long(MAX_TOKEN_LEN))
               .filter(tantivy.Filter.lowercase()))
    if stem:
        builder = builder.filter(tantivy.Filter.stemmer("english"))
    return builder.build()


# The same pipelines tantivy registers as ``en_stem`` and ``default``.
STEM_ANALYZER = _analyzer(stem=True)
PLAIN_ANALYZER = _analyzer(stem=False)


def stem_tokens(text: str) -> list[str]:
    return STEM_ANALYZER.analyze(text)


def plain_tokens(text: str) -> list[str]:
    return PLAIN_ANALYZER.analyze(text)


SAMPLE_RATES = (16, 64, 256, 1024)


def sample_terms(record_id: str) -> list[str]:
    """The sample levels a record belongs to: ``"64"`` means it is in the 1-in-64 sample."""
    h = id_key(record_id) >> 20  # bits independent of the sort tie-break bits
    return [str(rate) for rate in SAMPLE_RATES if h % rate == 0]


PAIR_JOINER = "_"  # never inside a token: the tokenizers split on every non-alphanumeric character


def word_pairs(tokens: list[str]) -> list[str]:
    """Adjacent token pairs as single terms, for the ``all_pairs`` field and phrase queries."""
    return [f"{a}{PAIR_JOINER}{b}" for a, b in zip(tokens, tokens[1:])]


def id_key(record_id: str) -> int:
    """A stable 63-bit integer for an id (fast-field joins and sort tie-breaks)."""
    return int.from_bytes(hashlib.blake2b(record_id.encode(), digest_size=8).digest(), "big") >> 1


_TIE_BITS = 40
_NO_YEAR_NEWEST = 0  # sorts after every real year when descending
_NO_YEAR_OLDEST = 9999  # sorts after every real year when ascending


def sort_keys(record_id: str, year: int | None) -> tuple[int, int]:
    """(newest_key, oldest_key): year in the high bits, a hash of the id as the tie-break."""
    tie = id_key(record_id) & ((1 << _TIE_BITS) - 1)
    newest = ((year if year is not None else _NO_YEAR_NEWEST) << _TIE_BITS) | tie
    oldest = ((year if year is not None else _NO_YEAR_OLDEST) << _TIE_BITS) | tie
    return newest, oldest
