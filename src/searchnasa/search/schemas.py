"""The request and response shapes of search: shared by the search service, the JSON API, the
HTML pages and the CLI, so all four always agree.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from searchnasa.limits import YEAR_MAX, YEAR_MIN

SortOrder = Literal["relevance", "newest", "oldest"]
Mode = Literal["lexical", "semantic", "hybrid"]

MAX_QUERY_CHARS = 1000
MAX_PER_PAGE = 100
MAX_PAGE = 1000


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
    mode: Mode = "hybrid"
    # hybrid mode: after the records that match, show records close in meaning that do not
    extras: bool = True


class FacetBucket(BaseModel):
    value: str
    count: int


class SearchHit(BaseModel):
    """One result card's data. ``snippet_html`` is already escaped; only ``<mark>`` is markup."""

    id: str
    source: Literal["ntrs", "osti"]
    source_label: str
    title: str
    title_html: str
    abstract: str | None
    snippet_html: str
    year: int | None
    date_label: str
    url: str | None
    link_label: str
    authors: list[str] = Field(default_factory=list)
    document_type: str | None = None
    subjects: list[str] = Field(default_factory=list)
    score: float = 0.0
    also_in: list[dict[str, str]] = Field(default_factory=list)
    # hybrid mode: a record close in meaning that does not match the query (shown after the
    # matches, never counted in ``total``), and the typed words it does not contain
    close_in_meaning: bool = False
    missing_words: list[str] = Field(default_factory=list)


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
    query: str
    interpreted: str = ""
    notices: list[str] = Field(default_factory=list)
    # acronyms typed as bare words and also searched as their meanings (or said to be ambiguous)
    acronyms: list[AcronymNote] = Field(default_factory=list)
    total: int
    total_is_lower_bound: bool = False
    # hybrid mode: records close in meaning that do not match, listed after the ``total`` matches
    extras_total: int = 0
    # What ``total`` and the facet counts count: records. Copies of one work held by both sources
    # are folded into one card per page ("Also in"), but every copy still counts as a record.
    count_unit: Literal["records"] = "records"
    page: int
    per_page: int
    mode: Mode = "lexical"
    # "Did you mean": the query with words the index does not hold replaced by the closest words
    # it does (search/spelling.py); offered, never applied
    suggestion: str | None = None
    results: list[SearchHit] = Field(default_factory=list)
    facets: dict[str, list[FacetBucket]] = Field(default_factory=dict)
    redirect_id: str | None = None
    # facets whose counts were estimated from a uniform sample of a very large result set
    facets_estimated: list[str] = Field(default_factory=list)
    took_ms: float = 0.0


class RelatedItem(BaseModel):
    """One related paper, with the reasons it is related (shown to the user)."""

    id: str
    source: Literal["ntrs", "osti"]
    source_label: str
    title: str
    abstract: str | None
    abstract_truncated: str
    year: int | None
    date_label: str
    url: str | None
    score: float
    reasons: list[str] = Field(default_factory=list)

    @property
    def explanation(self) -> str:
        return " · ".join(self.reasons)
