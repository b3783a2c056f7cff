"""Walk OSTI ``/records`` by following the ``Link: rel="next"`` header.

Why this shape: OSTI pages with a 1-based ``page`` and announces the next page in ``Link`` and the
total in ``X-Total-Count``. A full walk sorts by ``entry_date asc`` so records entered during the
walk land at the end instead of shifting pages already read. Incremental runs ask for
``entry_date_start`` (``MM/DD/YYYY``); that filter has been reported to answer HTTP 500 or to be
ignored, so when it fails the walker falls back to reading ``sort=entry_date desc`` until it passes
the checkpoint date.
"""

from __future__ import annotations

import copy
import dataclasses
import logging
from collections.abc import Iterator
from datetime import date
from typing import Any
from urllib.parse import urlencode, urljoin

import httpx

from searchnasa.errors import HarvestError
from searchnasa.ingest.harvest.checkpoint import STATE_VERSION, finish_since, note_newest, now_iso
from searchnasa.ingest.harvest.http import BadBody, ClientError, HarvestClient
from searchnasa.ingest.harvest.ntrs import Page

log = logging.getLogger(__name__)


def validate_records(data: Any) -> None:
    """A records page is a JSON array of objects (errors come as an object)."""
    if not isinstance(data, list):
        raise BadBody("expected a JSON array of records")


def osti_date(day: date) -> str:
    """OSTI date filters take ``MM/DD/YYYY``."""
    return day.strftime("%m/%d/%Y")


def entry_day(item: dict[str, Any]) -> str | None:
    """The ``YYYY-MM-DD`` part of ``entry_date`` (``2019-04-26T00:00:00Z``), or None."""
    value = item.get("entry_date")
    if isinstance(value, str) and len(value) >= 10 and value[4] == "-":
        return value[:10]
    return None


def next_link(headers: httpx.Headers, base_url: str) -> str | None:
    """The ``rel="next"`` target of an RFC 8288 ``Link`` header, resolved against the request URL."""
    value = headers.get("link")
    if not value:
        return None
    for part in httpx.Response(200, headers={"link": value}).links.values():
        if part.get("rel") == "next" and part.get("url"):
            return urljoin(base_url, part["url"])
    return None


def new_state(*, mode: str, query: str | None, page_size: int, start: date | None,
              until: date | None, today: date, prev_since: date | None = None) -> dict[str, Any]:
    """A fresh walk: everything (``full``) or what was entered from ``start`` on (``incremental``);
    ``prev_since`` is the previous checkpoint's source date, kept when nothing newer is read."""
    params: dict[str, Any] = {"rows": page_size, "page": 1, "sort": "entry_date asc"}
    if query:
        params["q"] = query
    if mode == "incremental" and start is not None:
        params["entry_date_start"] = osti_date(start)
    if mode == "incremental" and until is not None:
        params["entry_date_end"] = osti_date(until)
    return {
        "version": STATE_VERSION,
        "source": "osti",
        "mode": mode,
        "phase": "walk",
        "params": params,
        "next_url": None,
        "page": 1,
        "start": start.isoformat() if start else None,
        "until": until.isoformat() if until else None,
        "page_size": page_size,
        "total": None,
        "done": 0,
        "run_started": now_iso(),
        "run_started_day": today.isoformat(),
        "next_since": None,
        "newest_seen": prev_since.isoformat() if prev_since else None,
    }


class OstiWalker:
    """Yield pages of raw OSTI records and the walk state after each page."""

    def __init__(self, client: HarvestClient, api: str, state: dict[str, Any],
                 probe_attempts: int = 2) -> None:
        self.client = client
        self.url = api.rstrip("/") + "/records"
        self.state = state
        self.probe_attempts = probe_attempts

    def _get(self, url: str, params: dict[str, Any] | None):
        return self.client.request("GET", url, params=params, validate=validate_records)

    def _first_incremental(self) -> Any:
        """Try the date filter with few attempts: a server that keeps failing it gets the fallback."""
        saved = self.client.policy
        self.client.policy = dataclasses.replace(saved, max_attempts=self.probe_attempts)
        try:
            return self._get(self.url, self.state["params"])
        except (HarvestError, ClientError) as exc:
            log.warning("osti: entry_date filter failed (%s); walking by entry_date desc instead", exc)
            return None
        finally:
            self.client.policy = saved

    def _fall_back(self) -> None:
        st = self.state
        params = {k: v for k, v in st["params"].items() if not k.startswith("entry_date")}
        params.update({"sort": "entry_date desc", "page": 1})
        st.update(mode="walk_desc", params=params, next_url=None, page=1)

    def pages(self) -> Iterator[Page]:
        st = self.state
        while st["phase"] == "walk":
            first = st["next_url"] is None
            if first and st["mode"] == "incremental":
                resp = self._first_incremental()
                if resp is not None and any(
                        (entry_day(r) or "9999") < st["start"] for r in resp.data if isinstance(r, dict)):
                    log.warning("osti: entry_date_start was ignored by the server; walking by entry_date desc")
                    resp = None
                if resp is None:
                    self._fall_back()
                    resp = self._get(self.url, st["params"])
            elif first:
                resp = self._get(self.url, st["params"])
            else:
                resp = self._get(st["next_url"], None)
            total = resp.headers.get("x-total-count")
            if total is not None and total.strip().isdigit() and st["mode"] != "walk_desc":
                st["total"] = int(total)
            items = [r for r in resp.data if isinstance(r, dict)]
            st["page"] = st.get("page", 1) + (0 if first else 1)
            nxt = next_link(resp.headers, resp.url)
            if "link" not in resp.headers and len(resp.data) >= int(st["params"]["rows"]):
                # a compatible server without Link headers: count pages ourselves
                nxt = f"{self.url}?{urlencode({**st['params'], 'page': st['page'] + 1})}"
            if st["mode"] == "walk_desc":
                keep = [r for r in items if _in_range(r, st["start"], st["until"])]
                passed = st["start"] is not None and any(
                    (entry_day(r) or "0000") < st["start"] for r in items)
                if passed:
                    nxt = None  # sorted newest first: everything after this is older than the checkpoint
                items = keep
            st["next_url"] = nxt
            st["done"] += len(items)
            note_newest(st, (entry_day(r) for r in items))
            if not nxt or not resp.data:
                st["phase"] = "done"
                st["next_since"] = finish_since(st)
            yield Page(items, copy.deepcopy(st))


def _in_range(item: dict[str, Any], start: str | None, until: str | None) -> bool:
    day = entry_day(item)
    if day is None:
        return False
    return (start is None or day >= start) and (until is None or day <= until)
