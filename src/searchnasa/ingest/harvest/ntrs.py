"""Walk NTRS ``/citations/search`` completely, in ``published`` date windows under the result window.

Why windows: Elasticsearch behind NTRS refuses ``page.from + page.size`` above 10,000 (HTTP 400),
so the collection is cut into ``published`` ranges holding at most that many records each, halving
a range whose ``stats.total`` is too big. A single day can still be too big (legacy records dated
January 1st), so such a day is cut further by ``created`` ranges. Records without a publication
date fall outside every ``published`` range; a final pass finds them at the end of the
``published``-ascending order (Elasticsearch sorts missing values last) inside ``created`` windows.

Every page yields the new walk state; the runner commits it with the page's records, so a killed
process resumes at the page after the last one stored.
"""

from __future__ import annotations

import copy
import logging
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any

from searchnasa.errors import HarvestError
from searchnasa.ingest.harvest.checkpoint import STATE_VERSION, now_iso
from searchnasa.ingest.harvest.http import BadBody, ClientError, HarvestClient

log = logging.getLogger(__name__)

PUBLISHED_MIN = date(1600, 1, 1)
CREATED_MIN = date(1900, 1, 1)
FUTURE_DAYS = 5 * 366  # some records carry future publication dates (announced proceedings)
_WINDOW_RE = re.compile(r"less than or equal to:?\s*\[?(\d+)\]?")


@dataclass
class Page:
    """Raw items from one response, the state to commit with them, and what could not be fetched."""

    items: list[dict[str, Any]]
    state: dict[str, Any]
    skipped: dict[str, int] = field(default_factory=dict)


def validate_search(data: Any) -> None:
    """The search envelope: ``{"stats": {"total": int, ...}, "results": [...]}``."""
    if not isinstance(data, dict) or not isinstance(data.get("results"), list):
        raise BadBody("expected an object with a 'results' list")
    stats = data.get("stats")
    if not isinstance(stats, dict) or not isinstance(stats.get("total"), int):
        raise BadBody("expected 'stats.total' to be an integer")


def _d(value: str) -> date:
    return date.fromisoformat(value)


def _split_range(lo: str, hi: str) -> tuple[list[str], list[str]] | None:
    """Halve an inclusive day range; None when it is a single day."""
    a, b = _d(lo), _d(hi)
    if a >= b:
        return None
    mid = a + timedelta(days=(b - a).days // 2)
    return [a.isoformat(), mid.isoformat()], [(mid + timedelta(days=1)).isoformat(), b.isoformat()]


def new_state(*, mode: str, base: dict[str, str], page_size: int, window_limit: int,
              today: date) -> dict[str, Any]:
    """A fresh walk over everything matching ``base`` (q and the modified range)."""
    hi = (today + timedelta(days=FUTURE_DAYS)).isoformat()
    return {
        "version": STATE_VERSION,
        "source": "ntrs",
        "mode": mode,
        "phase": "count",
        "base": base,
        "page_size": page_size,
        "limit": window_limit,
        "published_range": [PUBLISHED_MIN.isoformat(), hi],
        "created_range": [CREATED_MIN.isoformat(), (today + timedelta(days=1)).isoformat()],
        "stack": [],
        "gap_stack": [],
        "total": None,
        "in_windows": 0,
        "done": 0,
        "run_started": now_iso(),
        "run_started_day": today.isoformat(),
        "next_since": None,
    }


class NtrsWalker:
    """Yield pages of raw NTRS citations and the walk state after each page."""

    def __init__(self, client: HarvestClient, api: str, state: dict[str, Any]) -> None:
        self.client = client
        self.url = api.rstrip("/") + "/citations/search"
        self.state = state

    # -- requests ----------------------------------------------------------------------------
    def _search(self, ranges: dict[str, list[str]], page_from: int, size: int,
                sort: bool = True) -> dict[str, Any]:
        params: dict[str, Any] = dict(self.state["base"])
        for key, (lo, hi) in ranges.items():
            params[f"{key}.gte"] = lo
            params[f"{key}.lte"] = hi
        params["page.size"] = size
        params["page.from"] = page_from
        if sort:
            params["sort.field"] = "published"
            params["sort.order"] = "asc"
        return self.client.request("GET", self.url, params=params, validate=validate_search).data

    def _count(self, ranges: dict[str, list[str]]) -> tuple[int, bool]:
        """``stats.total`` and whether it is only a lower bound (``stats.estimate``)."""
        stats = self._search(ranges, 0, 1, sort=False)["stats"]
        return int(stats["total"]), stats.get("estimate") is True

    def _shrink_limit(self, exc: ClientError, page_from: int, size: int) -> bool:
        """A 400 about the result window teaches us the server's real limit; anything else is fatal."""
        text = exc.body or ""
        if exc.status != 400 or not any(k in text for k in (
                "result window", "Result window", "max_result_window", "search_phase_execution_exception")):
            return False
        match = _WINDOW_RE.search(text)
        limit = int(match.group(1)) if match else page_from
        if limit >= page_from + size:
            limit = page_from  # the message did not help: be conservative
        limit = max(limit, 1)
        log.warning("ntrs: server result window is %d, not %d; splitting windows smaller",
                    limit, self.state["limit"])
        self.state["limit"] = limit
        return True

    # -- the walk ----------------------------------------------------------------------------
    def pages(self) -> Iterator[Page]:
        st = self.state
        if st["phase"] == "count":
            total, estimate = self._count({})
            st["total"] = None if estimate else total  # a capped count is no use for progress or gaps
            st["stack"] = [{"published": st["published_range"], "from": 0}]
            st["phase"] = "windows"
            yield Page([], copy.deepcopy(st))
        if st["phase"] == "windows":
            yield from self._windows()
            st["phase"] = "gap"
            if st["total"] is None or st["in_windows"] < st["total"]:
                st["gap_stack"] = [{"created": st["created_range"], "offset": None}]
            yield Page([], copy.deepcopy(st))
        if st["phase"] == "gap":
            yield from self._gap()
            st["phase"] = "done"
            st["next_since"] = st["run_started_day"]
            yield Page([], copy.deepcopy(st))

    def _split(self, w: dict[str, Any]) -> list[dict[str, Any]] | None:
        """Halve a window on published, then (one day left) on created; None when it is one day of both."""
        halves = _split_range(*w["published"])
        if halves is not None:
            parts = [{"published": h, "from": 0} for h in halves]
        else:
            halves = _split_range(*(w.get("created") or self.state["created_range"]))
            if halves is None:
                return None
            parts = [{"published": w["published"], "created": h, "from": 0} for h in halves]
        if not w.get("estimated"):
            parts[0]["left_of"] = w.get("total")  # the right half then holds parent minus left
        return parts

    def _try_search(self, ranges: dict[str, list[str]], page_from: int, size: int) -> dict[str, Any] | None:
        """One page, or ``None`` when a 400 taught a smaller result window (the caller plans again
        under it); any other client error ends the harvest."""
        try:
            return self._search(ranges, page_from, size)
        except ClientError as exc:
            if not self._shrink_limit(exc, page_from, size):
                raise HarvestError(f"ntrs: {exc.message}") from exc
            return None

    def _windows(self) -> Iterator[Page]:  # one loop on purpose: each pass acts on the top window of the stack
        st = self.state
        stack: list[dict[str, Any]] = st["stack"]
        while stack:
            w = stack[-1]
            if w.get("expect") == 0 and w["from"] == 0:  # its sibling held the whole parent
                stack.pop()
                continue
            ranges = {"published": w["published"]}
            if w.get("created"):
                ranges["created"] = w["created"]
            limit = st["limit"]
            size = min(st["page_size"], limit - w["from"])
            if size <= 0:  # reached the window limit on a window that cannot be split further
                results, total, finished = [], w.get("total", 0), True
                skipped = {f"over the {limit}-record result window on {ranges}": max(total - limit, 0)}
            else:
                data = self._try_search(ranges, w["from"], size)
                if data is None:
                    if w["from"] >= st["limit"] or w.get("total", 0) > st["limit"]:
                        # re-split this window under the smaller limit: it holds more than the
                        # limit, so reading on from here would stop short at the limit
                        w["from"] = 0
                        w.pop("capped", None)
                    continue
                total = self._window_total(w, data)
                if w["from"] == 0 and total > limit and not w.get("capped"):
                    if self._split_top(w, ranges):
                        yield Page([], copy.deepcopy(st))
                        continue
                results, finished, skipped = _read_window(w, data, total, limit, ranges)
            if finished:
                stack.pop()
                st["in_windows"] += total
            st["done"] += len(results)
            yield Page(results, copy.deepcopy(st), skipped)

    def _window_total(self, w: dict[str, Any], data: dict[str, Any]) -> int:
        """The window's ``stats.total`` (an estimate that reaches the limit counts as too big), and
        on a left half's first page what that leaves for its right sibling (``expect``)."""
        stack = self.state["stack"]
        limit = self.state["limit"]
        total = int(data["stats"]["total"])
        estimated = data["stats"].get("estimate") is True
        if estimated and total >= limit:
            total = limit + 1  # only a lower bound: certainly too big for one window
        w["estimated"] = estimated
        if w["from"] == 0 and w.get("left_of") is not None and len(stack) > 1 and not estimated:
            stack[-2]["expect"] = max(int(w.pop("left_of")) - total, 0)
        w["total"] = total
        return total

    def _split_top(self, w: dict[str, Any], ranges: dict[str, list[str]]) -> bool:
        """Replace the top window, too big for the result window, by its halves (True); a window
        that cannot be split is marked ``capped`` and read as far as the limit allows (False)."""
        stack = self.state["stack"]
        parts = self._split(w)
        stack.pop()
        if parts is None:
            w["capped"] = True
            stack.append(w)
            log.warning("ntrs: %s holds %d records, over the window of %d", ranges, w["total"], self.state["limit"])
            return False
        stack.extend(reversed(parts))  # earliest range on top
        return True

    def _gap(self) -> Iterator[Page]:
        """Find records without a publication date: the tail of each created window's published sort."""
        st = self.state
        stack: list[dict[str, Any]] = st["gap_stack"]
        while stack:
            w = stack[-1]
            if w["offset"] is None:
                planned = self._plan_gap(w)
                if planned is not None:
                    yield planned
                    continue
            size = min(st["page_size"], w["end"] - w["offset"], st["limit"] - w["offset"])
            data = self._try_search({"created": w["created"]}, w["offset"], size) if size > 0 else {"results": []}
            if data is None:
                w["offset"] = None  # count again and split under the smaller window
                w.pop("whole", None)
                w.pop("left_of", None)
                continue
            results = [r for r in data["results"] if isinstance(r, dict) and not _has_published(r)]
            w["offset"] += len(data["results"])
            if not data["results"] or w["offset"] >= w["end"]:
                stack.pop()
            st["done"] += len(results)
            yield Page(results, copy.deepcopy(st))

    def _plan_gap(self, w: dict[str, Any]) -> Page | None:
        """Count the top created window: drop it when it holds no undated record, split it when it
        holds more than the limit (a page to yield either way), else set the offsets to read."""
        st = self.state
        whole, dated, capped = self._gap_counts(w)
        if whole - dated <= 0:
            st["gap_stack"].pop()
            return Page([], copy.deepcopy(st))
        if whole > st["limit"]:
            return self._split_gap(w, whole, dated, capped)
        w["offset"], w["end"] = dated, whole
        return None

    def _gap_counts(self, w: dict[str, Any]) -> tuple[int, int, bool]:
        """All records and dated ones in the window's created range, and whether the totals are only
        lower bounds; what the left half leaves of its parent is passed on to the right half."""
        st = self.state
        stack = st["gap_stack"]
        created = {"created": w["created"]}
        capped = False
        if "whole" in w:  # known from the parent minus the left sibling: no request needed
            whole, dated = w["whole"], w["dated"]
        else:
            whole, capped = self._count(created)
            dated = self._count({**created, "published": st["published_range"]})[0] if not capped else 0
            if capped:
                whole = max(whole, st["limit"] + 1)  # a lower bound: split further
        if w.get("left_of") and len(stack) > 1 and not capped:
            parent_whole, parent_dated = w.pop("left_of")
            stack[-2]["whole"] = max(parent_whole - whole, 0)
            stack[-2]["dated"] = max(parent_dated - dated, 0)
        return whole, dated, capped

    def _split_gap(self, w: dict[str, Any], whole: int, dated: int, capped: bool) -> Page:
        """Replace a created window holding more than the limit by its halves; a single day is read
        as far as the limit reaches and the rest counted as skipped."""
        st = self.state
        stack = st["gap_stack"]
        limit = st["limit"]
        halves = _split_range(*w["created"])
        stack.pop()
        if halves is None and capped:  # totals are lower bounds: nothing to count
            log.warning("ntrs: created day %s holds over %d records; records on it without "
                        "a publication date cannot be checked", w["created"][0], limit)
            return Page([], copy.deepcopy(st))
        if halves is None:  # read the undated records the window reaches, count the rest
            reachable = max(0, limit - dated)
            if reachable:
                w.update(offset=dated, end=dated + reachable)
                stack.append(w)
            return Page([], copy.deepcopy(st),
                        {f"undated records past the result window on created {w['created']}":
                         whole - dated - reachable})
        right = {"created": halves[1], "offset": None}
        left: dict[str, Any] = {"created": halves[0], "offset": None}
        if not capped:
            left["left_of"] = [whole, dated]
        stack.extend([right, left])
        return Page([], copy.deepcopy(st))


def _read_window(w: dict[str, Any], data: dict[str, Any], total: int, limit: int,
                 ranges: dict[str, list[str]]) -> tuple[list[dict[str, Any]], bool, dict[str, int]]:
    """The page's citations, whether the window is finished, and what a capped window leaves unread."""
    results = [r for r in data["results"] if isinstance(r, dict)]
    w["from"] += len(data["results"])
    finished = not data["results"] or w["from"] >= total
    skipped: dict[str, int] = {}
    if w.get("capped") and w["from"] >= limit and total > limit:
        skipped[f"over the {limit}-record result window on {ranges}"] = total - limit
        finished = True
    return results, finished, skipped


def _has_published(item: dict[str, Any]) -> bool:
    pubs = item.get("publications")
    return isinstance(pubs, list) and any(
        isinstance(p, dict) and p.get("publicationDate") for p in pubs)
