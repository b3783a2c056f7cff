"""The request and response shapes of search: shared by the search service, the JSON API, the
HTML pages and the CLI, so all four always agree.

Every field carries its description here, next to its type, because the OpenAPI spec (and so
``/docs``) is generated from these models: a field nobody described is a field a client has to
guess at (tests/test_api_docs.py checks that none is left undescribed).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, computed_field, field_validator

from searchnasa.limits import NO_DATE_LABEL, YEAR_MAX, YEAR_MIN
from searchnasa.records import Author, Record
from searchnasa.search.sentence_match import HEAD as SENTENCE_HEAD
from searchnasa.search.sentence_match import W_SENTENCE
from searchnasa.topics import topic_slugs

SortOrder = Literal["relevance", "newest", "oldest"]
Mode = Literal["lexical", "semantic", "hybrid"]

# The shared topics' slugs (searchnasa/data/topics.toml), so the API refuses an unknown topic with
# a 422 that lists the known ones, and the OpenAPI spec lists them.
TopicSlug = Literal[topic_slugs()]  # type: ignore[valid-type]

MAX_QUERY_CHARS = 1000
MAX_PER_PAGE = 100
MAX_PAGE = 1000

DATE_LABEL_DOC = (
    f"The date as a result card shows it: the year (`\"1978\"`), or `\"{NO_DATE_LABEL}\"` when the source "
    "gives no date. The same meaning in search results and related papers; the full date, its kind "
    "(published, issued, ...) and precision are the record's `date` (`/api/records/{record_id}`).")
AUTHORS_DOC = (
    "The authors as objects, in the shape the record uses (`name`, `affiliation`, `orcid`): the record's "
    "first 10. A result card holds names only, so `affiliation` and `orcid` are null here even when the "
    "record has them; read the record for those.")


class SearchRequest(BaseModel):
    """What a user asked for. Limits are enforced here so every entry point shares them."""

    q: str = Field("", max_length=MAX_QUERY_CHARS)
    source: Literal["ntrs", "osti"] | None = None
    page: int = Field(1, ge=1, le=MAX_PAGE)
    per_page: int = Field(20, ge=1, le=MAX_PER_PAGE)
    year_from: int | None = Field(None, ge=YEAR_MIN, le=YEAR_MAX)
    year_to: int | None = Field(None, ge=YEAR_MIN, le=YEAR_MAX)
    sort: SortOrder = "relevance"
    document_type: list[str] = Field(default_factory=list)
    subject: list[str] = Field(default_factory=list)
    organization: list[str] = Field(default_factory=list)
    author: list[str] = Field(default_factory=list)
    # shared topics of both sources (searchnasa.topics): records whose subjects map to any of them
    topic: list[TopicSlug] = Field(default_factory=list)  # type: ignore[valid-type]
    mode: Mode = "hybrid"
    # hybrid mode: after the records that match, show records close in meaning that do not
    extras: bool = True

    def years_in_order(self) -> tuple["SearchRequest", str | None]:
        """This request with a reversed year range swapped, and the notice that says so (a range
        from 1990 to 1980 is a typing slip, not a wish for no records)."""
        lo, hi = self.year_from, self.year_to
        if lo is None or hi is None or lo <= hi:
            return self, None
        return (self.model_copy(update={"year_from": hi, "year_to": lo}),
                f"Years swapped: showing {hi}–{lo} (the range was given as {lo}–{hi}).")


class FacetBucket(BaseModel):
    """One value of a facet and how many records of the answer have it."""

    value: str = Field(description="The facet value (a source, year, decade, document type, subject or organization).")
    count: int = Field(description=(
        "Records of the answer with this value (an estimate when the facet is listed in `facets_estimated`)."))
    label: str | None = Field(None, description=(
        "What a person reads when `value` is a code: a topic's label (its `value` is the topic's slug)."))


class SearchHit(BaseModel):
    """One result card's data. ``snippet_html`` is already escaped; only ``<mark>`` is markup."""

    id: str = Field(description="The record id: `ntrs:<NTRS id>` or `osti:<OSTI id>`.")
    source: Literal["ntrs", "osti"] = Field(description="The collection that holds the record.")
    source_label: str = Field(description="The collection's name for display (`NASA NTRS`, `DOE OSTI`).")
    title: str = Field(description="The title as plain text.")
    title_html: str = Field(description="The title, HTML-escaped, with the query's words in `<mark>`.")
    abstract: str | None = Field(description="The abstract as plain text; null when the source gives none.")
    snippet_html: str = Field(description=(
        "The abstract's best passage for the query, HTML-escaped, with the query's words in `<mark>`."))
    year: int | None = Field(description="The year of the record's date; null when the source gives no date.")
    date_label: str = Field(description=DATE_LABEL_DOC)
    url: str | None = Field(description="The original record at its source (landing page, else a file).")
    link_label: str = Field(description="What a card's link to the original says (first subject, keyword or author).")
    authors: list[Author] = Field(default_factory=list, description=AUTHORS_DOC)
    document_type: str | None = Field(None, description="The source's document type (NTRS STI type, OSTI product type).")
    subjects: list[str] = Field(default_factory=list, description="Subject categories as the source labels them.")
    score: float = Field(0.0, description=(
        "The ranking score: results are in descending `score` within one answer. In hybrid mode the fused "
        "score (min-max-normalized lexical score and cosine similarity of meaning, weighted; reciprocal-rank "
        "fusion when the semantic side cannot score), past the fused head the lexical score; BM25 in lexical "
        "mode; the cosine in semantic mode; 0 when sorted by date. Not comparable across queries or modes."))
    also_in: list[dict[str, str]] = Field(default_factory=list, description=(
        "Other copies of the same work (the other source holding the same report), folded into this card: "
        "each `{id, source, source_label, url}`."))
    close_in_meaning: bool = Field(False, description=(
        "Hybrid mode: true for an extra, a record close in meaning that does not match the query; extras "
        "come after every match and are never counted in `total`."))
    missing_words: list[str] = Field(default_factory=list, description=(
        "For an extra (`close_in_meaning`): the typed words the record does not contain."))

    @field_validator("authors", mode="before")
    @classmethod
    def _names_to_authors(cls, value: object) -> object:
        """A card stores author names; a name is an author with only ``name`` known."""
        if isinstance(value, list):
            return [{"name": v} if isinstance(v, str) else v for v in value]
        return value


class AcronymNote(BaseModel):
    """An acronym typed in the query that the collection defines, and what the search did with it
    (search/acronyms.py): the meanings also searched, or none when they are too scattered."""

    acronym: str = Field(description="The acronym as typed.")
    expanded_to: list[str] = Field(default_factory=list,
                                   description="Meanings also searched (stemmed, words in order); empty: "
                                               "searched only as typed.")
    other_meanings: list[str] = Field(default_factory=list,
                                      description="Other meanings the collection gives it, not searched.")
    definitions: int = Field(0, description="Records that define the acronym.")
    only_query: str | None = Field(None, description="The same query with the acronym searched only as "
                                                     "typed (written =ACRONYM); null when nothing was added.")
    message: str = Field("", description="The sentence the results page shows.")


class SearchResponse(BaseModel):
    """One page of a search, its counts and facets."""

    query: str = Field(description="The query as received.")
    interpreted: str = Field("", description="How the query was read (`Read as: ...`), after any repair.")
    notices: list[str] = Field(default_factory=list, description=(
        "Things the reader should know about the answer: repairs to the query, ignored parameters, "
        "lower-bound counts, a semantic side that was busy."))
    acronyms: list[AcronymNote] = Field(default_factory=list, description=(
        "Acronyms typed as bare words and also searched as their meanings mined from the collection "
        "(or said to be ambiguous); `=TBC` in the query searches the acronym only."))
    total: int = Field(description="How many records match the query and filters (see `total_is_lower_bound`).")
    total_is_lower_bound: bool = Field(False, description=(
        "True when the query was too broad to count exactly within the work budget: `total` is then at "
        "least the true count's lower bound, and a notice says so."))
    extras_total: int = Field(0, description=(
        "Hybrid mode: records close in meaning that do not match, listed after the `total` matches."))
    count_unit: Literal["records"] = Field("records", description=(
        "What `total` and the facet counts count: records. Copies of one work held by both sources are "
        "folded into one card per page (`also_in`), but every copy still counts as a record."))
    page: int = Field(description="The page number (from 1).")
    per_page: int = Field(description="Results per page.")
    mode: Mode = Field("lexical", description=(
        "How the results were found: `lexical` (words), `semantic` (meaning) or `hybrid` (both, fused)."))
    suggestion: str | None = Field(None, description=(
        "\"Did you mean\": the query with words the index does not hold replaced by the closest words it "
        "does; offered, never applied. Null when there is nothing to suggest."))
    results: list[SearchHit] = Field(default_factory=list, description="The page's results, best first.")
    facets: dict[str, list[FacetBucket]] = Field(default_factory=dict, description=(
        "Counts per facet (`source`, `year` (every year, oldest first), `decade`, `no_date` (one bucket: "
        "the records without a year, under the year facet's filters), `document_type`, `topic`, `subject`, "
        "`organization`, `author`), each counted under every filter except its own, so a count says what "
        "choosing that value would give."))
    redirect_id: str | None = Field(None, description=(
        "Set when the query is an identifier (DOI, record id, report number) naming exactly one record: "
        "the page sends the reader straight to it."))
    facets_estimated: list[str] = Field(default_factory=list, description=(
        "Names of the facets whose counts were estimated from a uniform sample of a very large result set "
        "(rather than counted one by one); `total` is never estimated this way."))
    took_ms: float = Field(0.0, description="Server time for the search, in milliseconds.")


class SentencePair(BaseModel):
    """The two sentences, one of the seed's and one of the related paper's, closest in meaning."""

    seed: str = Field(description="The seed's sentence (its title counts as one), plain text, cut near 240 characters.")
    related: str = Field(description="This paper's sentence closest in meaning to it, plain text, cut alike.")
    similarity: float = Field(description="The cosine between the two sentences' embeddings (-1..1).")


class RelatedItem(BaseModel):
    """One related paper, with the reasons it is related (shown to the user)."""

    id: str = Field(description="The record id: `ntrs:<NTRS id>` or `osti:<OSTI id>`.")
    source: Literal["ntrs", "osti"] = Field(description="The collection that holds the record.")
    source_label: str = Field(description="The collection's name for display (`NASA NTRS`, `DOE OSTI`).")
    title: str = Field(description="The title as plain text.")
    abstract: str | None = Field(description="The abstract as plain text; null when the source gives none.")
    abstract_truncated: str = Field(description="The abstract's first 300 characters or so, cut between words.")
    year: int | None = Field(description="The year of the record's date; null when the source gives no date.")
    date_label: str = Field(description=DATE_LABEL_DOC)
    url: str | None = Field(description="The original record at its source (landing page, else a file).")
    score: float = Field(description=(
        "The relatedness score the list is ranked by (descending): the seed's own words searched (BM25) "
        "and the similarity of meaning (cosine), each min-max-normalized over the candidates and weighted "
        "0.3 and 0.7, plus small "
        "boosts for a shared subject, organization or report series, minus similarity to negative seeds. "
        f"Where the records' sentence vectors are stored, the first {SENTENCE_HEAD} candidates are re-ranked "
        f"with weight {W_SENTENCE:g} on their sentence similarity (the mean, over the seed's sentences, of "
        "the closest sentence of the candidate). Comparable only within one answer."))
    similarity: float | None = Field(None, description=(
        "Similarity of meaning: the cosine between this paper's embedding and the seeds' (title and "
        "abstract, -1..1). One part of `score`, so it need not fall in the list's order. Null when the "
        "records are not embedded."))
    reasons: list[str] = Field(default_factory=list, description=(
        "Why it is related, each checkable: `similar in meaning 0.62`, `same subject: ...`, "
        "`same organization: ...`, `same report series: ...`, `shared terms: ...` (informative words and "
        "phrases both papers use), `matching sentences 0.71` (the cosine of `sentence_pair`)."))
    sentence_pair: SentencePair | None = Field(None, description=(
        "The seed's sentence and this paper's sentence closest in meaning (the best pair the sentence "
        "re-rank found). Null when the home stores no sentence vectors for the seed or this paper."))

    @computed_field(description="The reasons joined with ` · `, as the pages show them.")  # type: ignore[prop-decorator]
    @property
    def explanation(self) -> str:
        return " · ".join(self.reasons)


class RecordResponse(Record):
    """A whole record (`/api/records/{record_id}`): every field the store holds, plus the link to
    the original and the collection's display name."""

    @computed_field(description="The original record at its source (landing page, else a file).")  # type: ignore[prop-decorator]
    @property
    def url(self) -> str | None:
        return Record.url.fget(self)  # type: ignore[attr-defined]

    @computed_field(description="The collection's name for display (`NASA NTRS`, `DOE OSTI`).")  # type: ignore[prop-decorator]
    @property
    def source_label(self) -> str:
        return Record.source_label.fget(self)  # type: ignore[attr-defined]

    withdrawn_on: str | None = Field(None, description=(
        "The day a reconcile pass found the record gone from its source (null while the source "
        "still serves it); search and related papers no longer return it."))

    @classmethod
    def of(cls, record: Record, withdrawn_on: str | None = None) -> "RecordResponse":
        return cls.model_validate({**record.model_dump(), "withdrawn_on": withdrawn_on})
