"""Walk NTRS ``/citations/search`` completely, in ``published`` date windows under the result window.

Why windows: Elasticsearch behind NTRS refuses ``page.from + page.size`` above 10,000 (HTTP 400),
so the collection is cut into ``published`` ranges holding at most that many records each, halving
a range whose ``stats.total`` is too big. A single day can still be too big (legacy records dated
January 1st), so such a day is cut further by ``created`` ranges. Records without a publication
date fall outside every ``published`` range; a final pass finds them at the end of the
``published``-ascending order (Elasticsearch sorts missing values last) inside ``created`` windows.

A server may ignore a range filter (stand-ins for the API have): then every narrowed window reports
its parent's total and splitting never converges, one request per day since 1900. A window that
reports the same total as the window it was cut from, and holds a record outside its own range
(or, when no record says, whose sibling holds records too), proves the filter ignored: the walk
stops splitting on that key, reads the window as far as the result window allows, and says so
(``state["ignored"]``, ``state["notes"]``, and the skipped count's reason).

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
from searchnasa.ingest.harvest.checkpoint import STATE_VERSION, finish_since, note_newest, now_iso
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


def _item_day(item: dict[str, Any], key: str) -> str | None:
    """The item's ``published`` (first publication date) or ``created`` day, as the filters see it."""
    if key == "published":
        pubs = item.get("publications")
        if isinstance(pubs, list):
            for pub in pubs:
                if isinstance(pub, dict) and isinstance(pub.get("publicationDate"), str):
                    return pub["publicationDate"][:10]
        return None
    value = item.get(key)
    return value[:10] if isinstance(value, str) and len(value) >= 10 else None


def outside_range(results: list[Any], key: str, day_range: list[str]) -> bool | None:
    """Whether a result lies outside ``day_range`` on ``key`` (True), all that say lie inside
    (False), or no result says (None). A ``published`` window holding an undated record counts as
    outside: a range filter never matches a missing value."""
    lo, hi = day_range
    verdict: bool | None = None
    for item in results:
        if not isinstance(item, dict):
            continue
        day = _item_day(item, key)
        if day is None:
            if key == "published":
                return True
            continue
        if day < lo or day > hi:
            return True
        verdict = False
    return verdict


def new_state(*, mode: str, base: dict[str, str], page_size: int, window_limit: int,
              today: date, prev_since: date | None = None) -> dict[str, Any]:
    """A fresh walk over everything matching ``base`` (q and the modified range); ``prev_since`` is
    the previous checkpoint's source date, kept when this run reads nothing newer."""
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
        "newest_seen": prev_since.isoformat() if prev_since else None,
        "ignored": [],
        "notes": [],
    }


class NtrsWalker:
    """Yield pages of raw NTRS citations and the walk state after each page."""

    def __init__(self, client: HarvestClient, api: str, state: dict[str, Any]) -> None:
        self.client = client
        self.url = api.rstrip("/") + "/citations/search"
        self.state = state
        self.last_results: list[Any] = []
        state.setdefault("ignored", [])
        state.setdefault("notes", [])

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
        data = self._search(ranges, 0, 1, sort=False)
        self.last_results = data["results"]
        stats = data["stats"]
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
            st["next_since"] = finish_since(st)
            yield Page([], copy.deepcopy(st))

    def _split(self, w: dict[str, Any]) -> list[dict[str, Any]] | None:
        """Halve a window on published, then (one day left) on created; None when it is one day of
        both, or the keys left are filters the server ignores."""
        ignored = self.state.get("ignored", [])
        halves = None if "published" in ignored else _split_range(*w["published"])
        key = "published"
        if halves is not None:
            parts = [{"published": h, "from": 0} for h in halves]
        else:
            key = "created"
            halves = None if "created" in ignored else _split_range(
                *(w.get("created") or self.state["created_range"]))
            if halves is None:
                return None
            parts = [{"published": w["published"], "created": h, "from": 0} for h in halves]
        parent = {k: w[k] for k in ("published", "created") if w.get(k)}
        for part in parts:
            part["split_of"] = {"key": key, "total": w.get("total"), "range": parent}
        if not w.get("estimated"):
            parts[0]["left_of"] = w.get("total")  # the right half then holds parent minus left
        return parts

    def _filter_ignored(self, w: dict[str, Any], data: dict[str, Any], total: int) -> bool:
        """Whether this freshly cut window proves its split key's filter ignored by the server: the
        same total as its parent, and a record outside its range (or, when no record says and the
        totals are exact, a sibling that holds records too)."""
        split = w.get("split_of")
        if not split or w["from"] != 0 or total != split.get("total") or total == 0:
            return False
        key = split["key"]
        outside = outside_range(data["results"], key, w[key])
        if outside is None and not w.get("estimated"):
            stack = self.state["stack"]
            sibling = stack[-2] if len(stack) > 1 and stack[-2].get("split_of") == split else None
            if sibling is not None:
                ranges = {k: sibling[k] for k in ("published", "created") if sibling.get(k)}
                outside = self._count(ranges)[0] > 0  # both halves hold records: the cut did nothing
        if not outside:
            return False
        self._note_ignored(key)
        return True

    def _note_ignored(self, key: str) -> None:
        st = self.state
        if key in st["ignored"]:
            return
        st["ignored"].append(key)
        note = (f"the server ignores the {key} filter (a narrowed window reported its parent's "
                f"total); windows are no longer split by {key}")
        st["notes"].append(note)
        log.warning("ntrs: %s", note)

    def _undo_split(self, w: dict[str, Any]) -> None:
        """Put back the window ``w`` was cut from, in place of ``w`` and its sibling."""
        stack = self.state["stack"]
        split = w["split_of"]
        stack.pop()
        if stack and stack[-1].get("split_of") == split:
            stack.pop()
        stack.append({**split["range"], "from": 0})

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
                skipped = {_over_window(limit, ranges, st["ignored"]): max(total - limit, 0)}
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
                if self._filter_ignored(w, data, total):
                    self._undo_split(w)
                    yield Page([], copy.deepcopy(st))
                    continue
                if w["from"] == 0 and total > limit and not w.get("capped"):
                    if self._split_top(w, ranges):
                        yield Page([], copy.deepcopy(st))
                        continue
                results, finished, skipped = _read_window(w, data, total, limit, ranges, st["ignored"])
            if finished:
                stack.pop()
                st["in_windows"] += total
            st["done"] += len(results)
            note_newest(st, (_item_day(r, "modified") for r in results))
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
            note_newest(st, (_item_day(r, "modified") for r in results))
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
        if self._gap_filter_ignored(w, whole):
            return Page([], copy.deepcopy(st))
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
            w["seen"] = self.last_results
            dated = self._count({**created, "published": st["published_range"]})[0] if not capped else 0
            if capped:
                whole = max(whole, st["limit"] + 1)  # a lower bound: split further
        if w.get("left_of") and len(stack) > 1 and not capped:
            parent_whole, parent_dated = w.pop("left_of")
            stack[-2]["whole"] = max(parent_whole - whole, 0)
            stack[-2]["dated"] = max(parent_dated - dated, 0)
        return whole, dated, capped

    def _gap_filter_ignored(self, w: dict[str, Any], whole: int) -> bool:
        """A created half with its parent's total and a record outside its range: the server ignores
        ``created``; the parent window goes back on the stack, to be read without splitting."""
        cut = w.get("cut_from")
        seen = w.pop("seen", None)
        if not cut or seen is None or whole != cut["whole"] or whole == 0:
            return False
        if not outside_range(seen, "created", w["created"]):
            return False
        self._note_ignored("created")
        stack = self.state["gap_stack"]
        stack.pop()
        if stack and stack[-1].get("cut_from") == cut:
            stack.pop()
        stack.append({"created": cut["created"], "offset": None})
        return True

    def _split_gap(self, w: dict[str, Any], whole: int, dated: int, capped: bool) -> Page:
        """Replace a created window holding more than the limit by its halves; a single day is read
        as far as the limit reaches and the rest counted as skipped."""
        st = self.state
        stack = st["gap_stack"]
        limit = st["limit"]
        halves = None if "created" in st["ignored"] else _split_range(*w["created"])
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
        cut = {"created": w["created"], "whole": whole}
        right = {"created": halves[1], "offset": None, "cut_from": cut}
        left: dict[str, Any] = {"created": halves[0], "offset": None, "cut_from": cut}
        if not capped:
            left["left_of"] = [whole, dated]
        stack.extend([right, left])
        return Page([], copy.deepcopy(st))


def _over_window(limit: int, ranges: dict[str, list[str]], ignored: list[str]) -> str:
    """The skipped-count reason for records past the result window, naming an ignored filter."""
    reason = f"over the {limit}-record result window on {ranges}"
    if ignored:
        reason += f" (the server ignores the {' and '.join(ignored)} filter, so it cannot be split)"
    return reason


def _read_window(w: dict[str, Any], data: dict[str, Any], total: int, limit: int,
                 ranges: dict[str, list[str]], ignored: list[str] | None = None,
                 ) -> tuple[list[dict[str, Any]], bool, dict[str, int]]:
    """The page's citations, whether the window is finished, and what a capped window leaves unread."""
    results = [r for r in data["results"] if isinstance(r, dict)]
    w["from"] += len(data["results"])
    finished = not data["results"] or w["from"] >= total
    skipped: dict[str, int] = {}
    if w.get("capped") and w["from"] >= limit and total > limit:
        skipped[_over_window(limit, ranges, ignored or [])] = total - limit
        finished = True
    return results, finished, skipped


def _has_published(item: dict[str, Any]) -> bool:
    pubs = item.get("publications")
    return isinstance(pubs, list) and any(
        isinstance(p, dict) and p.get("publicationDate") for p in pubs)
