"""The JSON API under ``/api/``: the same search, records and related papers the pages show.

Parameters are validated by FastAPI from the limits in :mod:`searchnasa.search.schemas` and
:mod:`searchnasa.limits`, so a bad request is a 422 JSON error (never a 500), and the OpenAPI spec
states every limit.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Body, Depends, Path, Query, Request
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, Field

from searchnasa.errors import BadInput
from searchnasa.exports.resultset import iter_result_records, selected_records
from searchnasa.limits import MAX_EXPORT, MAX_SEEDS, YEAR_MAX, YEAR_MIN
from searchnasa.records import Record
from searchnasa.search.schemas import (
    MAX_PAGE,
    MAX_PER_PAGE,
    MAX_QUERY_CHARS,
    Mode,
    RecordResponse,
    RelatedItem,
    SearchRequest,
    SearchResponse,
    SortOrder,
    TopicSlug,
)
from searchnasa.web.deps import record_id_of, related_items, services
from searchnasa.web.form import MAX_FILTER_VALUES
from searchnasa.web.openapi_docs import ErrorResponse

router = APIRouter(prefix="/api", tags=["api"])

MIN_RELATED, MAX_RELATED, DEFAULT_RELATED = 1, 50, 20

ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorResponse, "description": "Bad request (`bad_request`)."},
    404: {"model": ErrorResponse, "description": "Unknown record or page (`not_found`)."},
    422: {"model": ErrorResponse, "description": "Invalid parameter (`invalid_request`): the message names it."},
    503: {"model": ErrorResponse, "description": "Index not built yet (`index_missing`), or the store unreadable."},
}
ID_RESPONSES: dict[int | str, dict[str, Any]] = {**ERROR_RESPONSES, 409: {"model": ErrorResponse, "description": (
    "A bare number that both sources hold as a record id (`ambiguous_id`); the message names both ids.")}}
RECORD_ID_DOC = (
    "A record id: `ntrs:19810053652`, `osti:3002088`, or the bare number the search box also accepts "
    "(`19810053652`), which names the record of whichever source holds that number; 404 when neither "
    "does, 409 (`ambiguous_id`) when both do.")


class RelatedResponse(BaseModel):
    """Related papers, best first, each with the reasons it is related."""

    seed_ids: list[str] = Field(description="The records the papers are related to (ids as resolved).")
    negative_ids: list[str] = Field(default_factory=list, description="The records they should be unlike.")
    results: list[RelatedItem] = Field(description="The related papers, in descending `score`.")


class RelatedQuery(BaseModel):
    """Papers like these (``ids``) and unlike those (``negative_ids``)."""

    ids: list[str] = Field(..., min_length=1, max_length=MAX_SEEDS, description=(
        "Records to find papers like (ids or bare numbers, as in `/api/records/{record_id}`)."))
    negative_ids: list[str] = Field(default_factory=list, max_length=MAX_SEEDS, description=(
        f"Records the papers should be unlike; at most {MAX_SEEDS} ids and negative_ids together."))
    limit: int = Field(DEFAULT_RELATED, ge=MIN_RELATED, le=MAX_RELATED, description="How many papers to return.")


def search_filters(
    q: Annotated[str, Query(max_length=MAX_QUERY_CHARS, description=(
        "The query: words, \"quoted phrases\", AND/OR/NOT, `field:value` (title, author, subject, ...), "
        "year ranges, or an identifier typed alone (DOI, record id, report number)."))] = "",
    source: Annotated[Literal["ntrs", "osti"] | None, Query(description=(
        "Only records of this collection: `ntrs` (NASA) or `osti` (DOE)."))] = None,
    year_from: Annotated[int | None, Query(ge=YEAR_MIN, le=YEAR_MAX, description=(
        "Only records dated in or after this year (records without a date are left out)."))] = None,
    year_to: Annotated[int | None, Query(ge=YEAR_MIN, le=YEAR_MAX, description=(
        "Only records dated in or before this year (records without a date are left out)."))] = None,
    sort: Annotated[SortOrder, Query(description=(
        "`relevance` (by `score`), `newest` or `oldest` (by date; undated records last)."))] = "relevance",
    mode: Annotated[Mode, Query(description=(
        "`hybrid` (words and meaning, fused), `lexical` (words only) or `semantic` (meaning only; "
        "still only records that satisfy the query's required parts and the filters)."))] = "hybrid",
    document_type: Annotated[list[str], Query(max_length=MAX_FILTER_VALUES, description=(
        "Only these document types (a `document_type` facet value; repeat for several, any of them)."))] = [],
    subject: Annotated[list[str], Query(max_length=MAX_FILTER_VALUES, description=(
        "Only these subjects (a `subject` facet value; repeat for several, any of them)."))] = [],
    organization: Annotated[list[str], Query(max_length=MAX_FILTER_VALUES, description=(
        "Only these organizations (an `organization` facet value; repeat for several, any of them)."))] = [],
    author: Annotated[list[str], Query(max_length=MAX_FILTER_VALUES, description=(
        "Only records by these authors, as people type them: 'Last, First', 'First Last', 'Last, F' "
        "(diacritics optional; repeat for several, any of them)."))] = [],
    topic: Annotated[list[TopicSlug], Query(max_length=MAX_FILTER_VALUES, description=(  # type: ignore[valid-type]
        "Shared topics of both sources (records whose subject categories map to any of them); "
        "`facets.topic` lists them with their labels."))] = [],
) -> SearchRequest:
    """The query and its filters, declared once for every endpoint that runs a search
    (``/api/search`` and ``/api/export``), so their OpenAPI parameters and limits cannot drift."""
    return SearchRequest(q=q, source=source, year_from=year_from, year_to=year_to, sort=sort, mode=mode,
                         document_type=document_type, subject=subject, organization=organization,
                         author=author, topic=topic)


SearchFilters = Annotated[SearchRequest, Depends(search_filters)]


@router.get("/search", response_model=SearchResponse, responses=ERROR_RESPONSES,
            summary="Search both collections.")
def api_search(
    request: Request,
    filters: SearchFilters,
    page: Annotated[int, Query(ge=1, le=MAX_PAGE, description="The page of results, from 1.")] = 1,
    per_page: Annotated[int, Query(ge=1, le=MAX_PER_PAGE, description="Results per page.")] = 20,
    extras: Annotated[bool, Query(description=(
        "Hybrid mode: after the records that match (counted in `total`), list records close in meaning "
        "that do not match (counted in `extras_total`, marked `close_in_meaning` with their `missing_words`)."
    ))] = True,
) -> SearchResponse:
    req = filters.model_copy(update={"page": page, "per_page": per_page, "extras": extras})
    return services(request).search().search(req)


CitationName = Literal["bibtex", "ris", "csl-json", "csv"]
EXPORT_PAGE = 100


def citation_response(records: Iterable[Record], fmt: str, stem: str) -> StreamingResponse:
    """Citations streamed record by record: a 1,000-record export is never built in memory."""
    from searchnasa.exports import filename, get_format, write

    spec = get_format(fmt)
    return StreamingResponse(
        write(records, spec.name), media_type=spec.media_type,
        headers={"content-disposition": f'inline; filename="{filename(stem, spec.name)}"'})


@router.get("/records/{record_id}", response_model=RecordResponse, responses={**ID_RESPONSES, 200: {
    "description": "The record as JSON (the `RecordResponse` schema), or its citation when `format` is given. "
                   "`withdrawn_on` is the day a reconcile pass found the record gone from its source (null "
                   "while the source still serves it): search and related papers no longer return it.",
    "content": {"application/x-bibtex": {}, "application/x-research-info-systems": {}, "text/csv": {},
                "application/vnd.citationstyles.csl+json": {}}}},
    summary="One record, every field (or its citation).")
def api_record(
    request: Request,
    record_id: Annotated[str, Path(max_length=100, description=RECORD_ID_DOC)],
    format: Annotated[CitationName | None, Query(description=(
        "A citation instead of JSON: `bibtex`, `ris`, `csl-json` or `csv`."))] = None,
) -> Any:
    service = services(request).search()
    record = service.get(record_id_of(service, record_id))
    if format is not None:
        return citation_response([record], format, record.id.replace(":", "-"))
    return RecordResponse.of(record, withdrawn_on=service.withdrawn_on(record.id))


@router.get("/records/{record_id}/related", response_model=RelatedResponse, responses=ID_RESPONSES,
            summary="Papers related to one record, with the reasons.")
def api_record_related(
    request: Request,
    record_id: Annotated[str, Path(max_length=100, description=RECORD_ID_DOC)],
    limit: Annotated[int, Query(ge=MIN_RELATED, le=MAX_RELATED, description="How many papers to return.")]
    = DEFAULT_RELATED,
) -> RelatedResponse:
    service = services(request).search()
    seed = service.get(record_id_of(service, record_id)).id
    items = related_items(service, [seed], [], limit)
    return RelatedResponse(seed_ids=[seed], results=items)


@router.post("/related", response_model=RelatedResponse, responses=ID_RESPONSES,
             summary="Papers like a set of records and unlike another set.")
def api_related(request: Request, body: Annotated[RelatedQuery, Body()]) -> RelatedResponse:
    service = services(request).search()
    if len(body.ids) + len(body.negative_ids) > MAX_SEEDS:
        raise BadInput(f"at most {MAX_SEEDS} ids and negative_ids together")
    ids = [service.get(record_id_of(service, rid)).id for rid in body.ids]
    negative_ids = [service.get(record_id_of(service, rid)).id for rid in body.negative_ids]
    if set(ids) & set(negative_ids):
        raise BadInput("a record cannot be both in ids and negative_ids")
    items = related_items(service, ids, negative_ids, body.limit)
    return RelatedResponse(seed_ids=ids, negative_ids=negative_ids, results=items)


@router.get("/export", responses={**ID_RESPONSES, 200: {
    "description": "Citations of a selection (`ids`) or of a whole result set, streamed.",
    "content": {"application/x-bibtex": {}, "application/x-research-info-systems": {}, "text/csv": {},
                "application/vnd.citationstyles.csl+json": {}}}},
    summary=f"Citations for selected records or a whole result set (up to {MAX_EXPORT:,}).")
def api_export(
    request: Request,
    format: Annotated[CitationName, Query(description="`bibtex`, `ris`, `csl-json` or `csv`.")],
    filters: SearchFilters,
    ids: Annotated[list[str], Query(max_length=EXPORT_PAGE, description=(
        "A selection of record ids (or bare numbers, as in `/api/records/{record_id}`); when given, the "
        "query and filters are ignored."))] = [],
    limit: Annotated[int, Query(ge=1, le=MAX_EXPORT, description=(
        "Without `ids`: cite at most this many records of the result set, in its order."))] = 100,
) -> StreamingResponse:
    service = services(request).search()
    if ids:
        resolved = [record_id_of(service, rid) for rid in ids]
        return citation_response(selected_records(service.store, resolved), format, "selection")
    req = filters
    service.search(req.model_copy(update={"per_page": 1}), fold_copies=False)  # fail now (404/503), not mid-stream
    return citation_response(iter_result_records(service, req, limit), format, "search-nasa-results")
