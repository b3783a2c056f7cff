"""The year histogram above the results: how the result set spreads over the years, drawn on the
server as SVG (the site runs no JavaScript).

The counts are the search's ``year`` facet (``/api/search`` returns the same ``facets.year``): every
filter applies, the source tab included, except the year range itself, so the chart shows the
years around a chosen range as well (the chosen years are marked). Each bar is a link that sets the
year filter to its year, and carries its year and count as its accessible name, so a screen reader
reads the chart as a list of labelled links. Records without a year are counted apart ("Date not
supplied"), never placed in a year; a record whose source gives only a year sits in that year and
nothing finer is drawn, so no record is given a month it does not have.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from searchnasa.limits import NO_DATE_LABEL
from searchnasa.search.schemas import SearchRequest, SearchResponse
from searchnasa.web.urls import search_url

SLOT = 10  # drawing units per year on the x axis (the SVG is stretched to the column's width)
BAR = 8  # a bar's width within its slot
HEIGHT = 100  # drawing units of the tallest bar
MIN_BAR = 3  # the least height a year with records is drawn at, so it stays visible and clickable


@dataclass(frozen=True)
class Bar:
    """One year with records: where it is drawn, what it says, where it links."""

    year: int
    count: int
    x: int
    y: float
    height: float
    url: str
    label: str
    selected: bool


def _records(count: int, estimated: bool) -> str:
    about = "about " if estimated else ""
    return f"{about}{count:,} record{'' if count == 1 else 's'}"


def _selected(req: SearchRequest, year: int) -> bool:
    if req.year_from is None and req.year_to is None:
        return False
    return (req.year_from is None or year >= req.year_from) and (req.year_to is None or year <= req.year_to)


def year_histogram(req: SearchRequest, resp: SearchResponse) -> dict[str, Any] | None:
    """What the template draws; None when the search counted no years and no undated records."""
    years = sorted((int(b.value), b.count) for b in resp.facets.get("year", []) if b.count > 0)
    no_date = sum(b.count for b in resp.facets.get("no_date", []))
    if not years and not no_date:
        return None
    estimated = "year" in resp.facets_estimated
    first, last = (years[0][0], years[-1][0]) if years else (None, None)
    peak = max((n for _, n in years), default=1)
    bars = []
    for year, count in years:
        height = max(MIN_BAR, HEIGHT * count / peak)
        bars.append(Bar(year=year, count=count, x=(year - first) * SLOT + (SLOT - BAR) // 2,
                        y=round(HEIGHT - height, 2), height=round(height, 2),
                        url=search_url(req, year_from=year, year_to=year, page=1),
                        label=f"{year}: {_records(count, estimated)}", selected=_selected(req, year)))
    has_range = req.year_from is not None or req.year_to is not None
    return {
        "bars": bars, "first": first, "last": last, "estimated": estimated,
        "width": ((last - first + 1) * SLOT) if years else 0, "height": HEIGHT, "slot": SLOT, "bar": BAR,
        "peak_label": _records(peak, estimated), "no_date": no_date,
        "no_date_label": f"{NO_DATE_LABEL}: {_records(no_date, estimated)}",
        "all_years_url": search_url(req, year_from=None, year_to=None, page=1) if has_range else None,
    }
