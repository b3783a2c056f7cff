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
    RelatedItem,
    SearchRequest,
    SearchResponse,
    SortOrder,
    TopicSlug,
)
from searchnasa.web.deps import check_record_id, related_items, services
from searchnasa.web.form import MAX_FILTER_VALUES

router = APIRouter(prefix="/api", tags=["api"])

MIN_RELATED, MAX_RELATED, DEFAULT_RELATED = 10, 50, 20

ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    400: {"description": "Bad request: `{\"error\": {\"code\", \"message\"}}`"},
    404: {"description": "Unknown record: `{\"error\": {\"code\", \"message\"}}`"},
    422: {"description": "Invalid parameter: `{\"error\": {\"code\", \"message\"}}`"},
    503: {"description": "Index not built yet: `{\"error\": {\"code\", \"message\"}}`"},
}


def related_json(items: list[RelatedItem]) -> list[dict[str, Any]]:
    return [{**item.model_dump(mode="json"), "explanation": item.explanation} for item in items]


class RelatedResponse(BaseModel):
    seed_ids: list[str]
    negative_ids: list[str] = Field(default_factory=list)
    results: list[dict[str, Any]]


class RelatedQuery(BaseModel):
    """Papers like these (``ids``) and unlike those (``negative_ids``)."""

    ids: list[str] = Field(..., min_length=1, max_length=MAX_SEEDS)
    negative_ids: list[str] = Field(default_factory=list, max_length=MAX_SEEDS)
    limit: int = Field(DEFAULT_RELATED, ge=1, le=MAX_RELATED)


def search_filters(
    q: Annotated[str, Query(max_length=MAX_QUERY_CHARS, description="The query (see the query language).")] = "",
    source: Annotated[Literal["ntrs", "osti"] | None, Query()] = None,
    year_from: Annotated[int | None, Query(ge=YEAR_MIN, le=YEAR_MAX)] = None,
    year_to: Annotated[int | None, Query(ge=YEAR_MIN, le=YEAR_MAX)] = None,
    sort: Annotated[SortOrder, Query()] = "relevance",
    mode: Annotated[Mode, Query()] = "hybrid",
    document_type: Annotated[list[str], Query(max_length=MAX_FILTER_VALUES)] = [],
    subject: Annotated[list[str], Query(max_length=MAX_FILTER_VALUES)] = [],
    organization: Annotated[list[str], Query(max_length=MAX_FILTER_VALUES)] = [],
    topic: Annotated[list[TopicSlug], Query(max_length=MAX_FILTER_VALUES, description=(  # type: ignore[valid-type]
        "Shared topics of both sources (records whose subject categories map to any of them); "
        "`facets.topic` lists them with their labels."))] = [],
) -> SearchRequest:
    """The query and its filters, declared once for every endpoint that runs a search
    (``/api/search`` and ``/api/export``), so their OpenAPI parameters and limits cannot drift."""
    return SearchRequest(q=q, source=source, year_from=year_from, year_to=year_to, sort=sort, mode=mode,
                         document_type=document_type, subject=subject, organization=organization, topic=topic)


SearchFilters = Annotated[SearchRequest, Depends(search_filters)]


@router.get("/search", response_model=SearchResponse, responses=ERROR_RESPONSES,
            summary="Search both collections.")
def api_search(
    request: Request,
    filters: SearchFilters,
    page: Annotated[int, Query(ge=1, le=MAX_PAGE)] = 1,
    per_page: Annotated[int, Query(ge=1, le=MAX_PER_PAGE)] = 20,
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


@router.get("/records/{record_id}", responses={**ERROR_RESPONSES, 200: {
    "description": "The record as JSON, or its citation when `format` is given.",
    "content": {"application/json": {}, "application/x-bibtex": {}, "text/csv": {}}}},
    summary="One record, every field (or its citation).")
def api_record(
    request: Request,
    record_id: Annotated[str, Path(max_length=100)],
    format: Annotated[CitationName | None, Query(description="A citation format instead of JSON.")] = None,
) -> Any:
    record = services(request).search().get(check_record_id(record_id))
    if format is not None:
        return citation_response([record], format, record.id.replace(":", "-"))
    return {**record.model_dump(mode="json"), "url": record.url, "source_label": record.source_label}


@router.get("/records/{record_id}/related", response_model=RelatedResponse, responses=ERROR_RESPONSES,
            summary="Papers related to one record, with the reasons.")
def api_record_related(
    request: Request,
    record_id: Annotated[str, Path(max_length=100)],
    limit: Annotated[int, Query(ge=MIN_RELATED, le=MAX_RELATED)] = DEFAULT_RELATED,
) -> RelatedResponse:
    service = services(request).search()
    service.get(check_record_id(record_id))
    items = related_items(service, [record_id], [], limit)
    return RelatedResponse(seed_ids=[record_id], results=related_json(items))


@router.post("/related", response_model=RelatedResponse, responses=ERROR_RESPONSES,
             summary="Papers like a set of records and unlike another set.")
def api_related(request: Request, body: Annotated[RelatedQuery, Body()]) -> RelatedResponse:
    service = services(request).search()
    if len(body.ids) + len(body.negative_ids) > MAX_SEEDS:
        raise BadInput(f"at most {MAX_SEEDS} ids and negative_ids together")
    for rid in body.ids + body.negative_ids:
        service.get(check_record_id(rid))
    if set(body.ids) & set(body.negative_ids):
        raise BadInput("a record cannot be both in ids and negative_ids")
    items = related_items(service, body.ids, body.negative_ids, body.limit)
    return RelatedResponse(seed_ids=body.ids, negative_ids=body.negative_ids, results=related_json(items))


@router.get("/export", responses={**ERROR_RESPONSES, 200: {
    "description": "Citations of a selection (`ids`) or of a whole result set, streamed.",
    "content": {"application/x-bibtex": {}, "application/x-research-info-systems": {}, "text/csv": {},
                "application/vnd.citationstyles.csl+json": {}}}},
    summary=f"Citations for selected records or a whole result set (up to {MAX_EXPORT:,}).")
def api_export(
    request: Request,
    format: Annotated[CitationName, Query(description="bibtex, ris, csl-json or csv")],
    filters: SearchFilters,
    ids: Annotated[list[str], Query(max_length=EXPORT_PAGE, description="A selection of record ids.")] = [],
    limit: Annotated[int, Query(ge=1, le=MAX_EXPORT)] = 100,
) -> StreamingResponse:
    service = services(request).search()
    if ids:
        for rid in ids:
            check_record_id(rid)
        return citation_response(selected_records(service.store, ids), format, "selection")
    req = filters
    service.search(req.model_copy(update={"per_page": 1}), fold_copies=False)  # fail now (404/503), not mid-stream
    return citation_response(iter_result_records(service, req, limit), format, "search-nasa-results")
