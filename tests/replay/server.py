"""A replay server speaking the NTRS and OSTI search APIs on 127.0.0.1, with fault injection.

Why the standard library's ``ThreadingHTTPServer`` and not an ASGI app: the faults the harvester
must survive live below HTTP (a connection reset, a body shorter than its ``Content-Length``, a
response that stalls past the client's timeout), and a plain socket handler can produce each of
them exactly. Each API's rules are enforced as documented in ``shared/SOURCES.md``:

NTRS (``/ntrs/api/citations/search``): GET with dotted keys or POST with a nested JSON body;
``q=*`` matches everything and an empty ``q`` nothing; ``published``/``modified``/``created``
``.gte``/``.lte`` take full ``YYYY-MM-DD`` dates; ``sort.field`` on those three (missing values
last, unknown fields ignored); ``page.from + page.size`` over the window is HTTP 400 with an
Elasticsearch-style body; ``title`` and ``distribution`` are ignored (as measured on the real API),
and so are the range filters named in ``ntrs_ignored_filters`` (as a stand-in for the API did).
``remove_ntrs`` / ``remove_osti`` withdraw a record: searches and its single-record URL (404)
stop returning it.

OSTI (``/osti/api/v1/records``): a JSON array, ``X-Total-Count``, ``Link`` with ``rel="next"`` and
``rel="last"``; 1-based ``page`` and ``rows``; ``sort=field dir``; ``entry_date_*`` and
``publication_date_*`` filters in ``MM/DD/YYYY`` (optionally failing with HTTP 500, as reported);
``subject`` as a fielded text search (every word of it among the record's subjects' words);
errors as ``{statusCode, statusMessage, errorDescription}``.

A fixed-window rate limit answers 429 with ``Retry-After``. Faults are queued with :meth:`inject`
and consumed by the next matching requests.
"""

from __future__ import annotations

import json
import math
import re
import socket
import struct
import threading
import time
from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable
from urllib.parse import parse_qsl, urlencode, urlsplit

import orjson

FAULTS = ("429", "500", "502-html", "html", "timeout", "truncated", "short", "reset")
_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_MDY = re.compile(r"^(\d{1,2})/(\d{1,2})/(\d{4})$")


def _flatten(body: Any, prefix: str = "") -> dict[str, Any]:
    """The POST body's nested keys as the GET form's dotted keys (``{"page": {"size": 5}}``)."""
    out: dict[str, Any] = {}
    if isinstance(body, dict):
        for key, value in body.items():
            name = f"{prefix}.{key}" if prefix else str(key)
            if isinstance(value, dict):
                out.update(_flatten(value, name))
            else:
                out[name] = value
    return out


def _day(value: Any) -> str | None:
    return value[:10] if isinstance(value, str) and len(value) >= 10 else None


def _ntrs_keys(item: dict[str, Any]) -> dict[str, str | None]:
    pubs = item.get("publications") or []
    published = next((_day(p.get("publicationDate")) for p in pubs
                      if isinstance(p, dict) and p.get("publicationDate")), None)
    return {"published": published, "modified": _day(item.get("modified")),
            "created": _day(item.get("created"))}


class HttpError(Exception):
    def __init__(self, status: int, body: Any) -> None:
        super().__init__(status)
        self.status = status
        self.body = body


@dataclass
class Logged:
    method: str
    path: str
    params: dict[str, Any]
    status: int = 0
    fault: str | None = None
    user_agent: str = ""


class ReplayServer:
    """Serve ``ntrs_items`` and ``osti_items``; start with ``with ReplayServer(...) as server``."""

    def __init__(self, ntrs_items: list[dict[str, Any]] | None = None,
                 osti_items: list[dict[str, Any]] | None = None, *, window: int = 10000,
                 rate_limit: tuple[int, float] | None = None, latency: float = 0.0,
                 stall: float = 2.0, osti_date_filters_fail: bool = False,
                 osti_max_rows: int = 1000, osti_link_headers: bool = True, total_cap: int | None = None, clock: Callable[[], float] = time.monotonic,
                 ntrs_ignored_filters: tuple[str, ...] = ()) -> None:
        self.ntrs_items = list(ntrs_items or [])
        self.osti_items = list(osti_items or [])
        self.window = window
        self.rate_limit = rate_limit
        self.latency = latency
        self.stall = stall
        self.osti_date_filters_fail = osti_date_filters_fail
        self.osti_max_rows = osti_max_rows
        self.osti_link_headers = osti_link_headers  # False: a compatible server that sends no Link
        self.total_cap = total_cap  # Elasticsearch's track_total_hits: bigger totals become estimates
        self.clock = clock  # the rate limit's clock; tests pass a fake one the client's sleep advances
        # range filters this stand-in ignores (as independent stand-ins for the API have): "created", ...
        self.ntrs_ignored_filters = tuple(ntrs_ignored_filters)
        self._osti_cache: dict[Any, Any] = {}
        self.log: list[Logged] = []
        self._ntrs_index: list[tuple[dict[str, str | None], dict[str, Any]]] | None = None
        self._sorted_cache: dict[Any, Any] = {}
        self.faults: list[tuple[str, str | None]] = []
        self.scheduled: dict[int, str] = {}
        self.lock = threading.Lock()
        self._rate_window_start = clock()
        self._rate_count = 0
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------------------------
    def start(self) -> "ReplayServer":
        server = self

        class Handler(_Handler):
            replay = server

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> "ReplayServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        assert self._httpd is not None, "server not started"
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def ntrs_api(self) -> str:
        return self.url + "/ntrs/api"

    @property
    def osti_api(self) -> str:
        return self.url + "/osti/api/v1"

    # -- test controls -----------------------------------------------------------------------
    def inject(self, *faults: str, path: str | None = None) -> None:
        """Queue faults for the next requests whose path contains ``path`` (any path when None)."""
        for fault in faults:
            if fault.split(":")[0] not in FAULTS:
                raise ValueError(f"unknown fault {fault!r}")
        with self.lock:
            self.faults.extend((f, path) for f in faults)

    def schedule(self, faults: dict[int, str]) -> None:
        """Fail the requests with these 1-based numbers (counted over all requests) with these faults."""
        for fault in faults.values():
            if fault.split(":")[0] not in FAULTS:
                raise ValueError(f"unknown fault {fault!r}")
        with self.lock:
            self.scheduled.update(faults)

    def _take_fault(self, path: str) -> str | None:
        with self.lock:
            scheduled = self.scheduled.pop(len(self.log), None)
            if scheduled is not None:
                return scheduled
            for i, (fault, where) in enumerate(self.faults):
                if where is None or where in path:
                    del self.faults[i]
                    return fault
        return None

    def _rate_check(self) -> float | None:
        """Seconds to wait when over the limit, else None (and the request is counted)."""
        if self.rate_limit is None:
            return None
        limit, per = self.rate_limit
        with self.lock:
            now = self.clock()
            if now - self._rate_window_start >= per:
                self._rate_window_start, self._rate_count = now, 0
            if self._rate_count >= limit:
                return per - (now - self._rate_window_start)
            self._rate_count += 1
        return None

    def add_ntrs(self, items: list[dict[str, Any]]) -> None:
        """Add citations to the served collection (the next search sees them)."""
        with self.lock:
            self.ntrs_items.extend(items)
            self._ntrs_index = None

    def remove_ntrs(self, item_id: Any) -> dict[str, Any]:
        """Withdraw a citation: searches and ``/citations/{id}`` (404) no longer return it."""
        with self.lock:
            item = next(i for i in self.ntrs_items if str(i["id"]) == str(item_id))
            self.ntrs_items.remove(item)
            self._ntrs_index = None
        return item

    def remove_osti(self, osti_id: str) -> dict[str, Any]:
        """Withdraw a record: searches and ``/records/{osti_id}`` (404) no longer return it."""
        with self.lock:
            item = next(i for i in self.osti_items if i["osti_id"] == osti_id)
            self.osti_items.remove(item)
        return item

    def update_ntrs(self, item_id: Any, **fields: Any) -> dict[str, Any]:
        """Change fields of a served citation, as an edit on the real service would."""
        with self.lock:
            item = next(i for i in self.ntrs_items if str(i["id"]) == str(item_id))
            item.update(fields)
            self._ntrs_index = None
        return item

    def _ntrs_snapshot(self) -> list[tuple[dict[str, str | None], dict[str, Any]]]:
        """The items with their range keys, computed once per change (searches run often)."""
        with self.lock:
            if self._ntrs_index is None or len(self._ntrs_index) != len(self.ntrs_items):
                self._ntrs_index = [(_ntrs_keys(i), i) for i in self.ntrs_items]
            return self._ntrs_index

    def _ntrs_ordered(self, field: str | None, desc: bool) -> list[tuple[dict[str, str | None], dict[str, Any]]]:
        """The snapshot in sort order, cached: ties keep collection order, missing values go last
        in both directions (Elasticsearch's default ``missing: _last``)."""
        snapshot = self._ntrs_snapshot()
        if field is None:
            return snapshot
        with self.lock:
            cache = self._sorted_cache
            if cache.get("of") is not snapshot:
                cache.clear()
                cache["of"] = snapshot
            key = (field, desc)
            if key not in cache:
                present = [m for m in snapshot if m[0][field] is not None]
                missing = [m for m in snapshot if m[0][field] is None]
                present.sort(key=lambda m: m[0][field], reverse=desc)  # type: ignore[arg-type,return-value]
                cache[key] = present + missing
            return cache[key]

    def statuses(self) -> Counter:
        return Counter(entry.status for entry in self.log)

    # -- NTRS --------------------------------------------------------------------------------
    def ntrs_search(self, params: dict[str, Any]) -> dict[str, Any]:
        started = time.perf_counter()
        q = str(params.get("q", "") or "").strip()
        try:
            size = int(params.get("page.size", 25))
            start = int(params.get("page.from", 0))
        except (TypeError, ValueError) as exc:
            raise HttpError(400, {"statusCode": 400, "message": f"invalid paging: {exc}"}) from exc
        if start + size > self.window:
            raise HttpError(400, {
                "error": {
                    "root_cause": [{"type": "illegal_argument_exception", "reason": (
                        f"Result window is too large, from + size must be less than or equal to: "
                        f"[{self.window}] but was [{start + size}]. See the scroll api for a more "
                        "efficient way to request large data sets. This limit can be set by changing "
                        "the [index.max_result_window] index level setting.")}],
                    "type": "search_phase_execution_exception", "reason": "all shards failed",
                    "phase": "query", "grouped": True,
                },
                "status": 400,
            })
        ranges: list[tuple[str, str, str]] = []
        for key, value in params.items():
            m = re.fullmatch(r"(published|modified|created)\.(gte|lte)", key)
            if m and m.group(1) in self.ntrs_ignored_filters:
                continue
            if m:
                if not isinstance(value, str) or not _DAY.match(value):
                    raise HttpError(400, {"statusCode": 400,
                                          "message": f"{key} must be a full YYYY-MM-DD date"})
                ranges.append((m.group(1), m.group(2), value))
        terms = [t for t in re.findall(r'"[^"]+"|\S+', q.lower()) if t != "*"]
        field = params.get("sort.field")
        sort_field = field if field in ("published", "modified", "created") else None
        desc = str(params.get("sort.order", "asc")).lower() == "desc"
        matched = []
        for keys, item in self._ntrs_ordered(sort_field, desc):
            if not q:
                break  # an empty q returns nothing on the real API
            ok = True
            for field, op, value in ranges:
                have = keys[field]
                if have is None or (op == "gte" and have < value) or (op == "lte" and have > value):
                    ok = False
                    break
            if not ok:
                continue
            if "center" in params and str((item.get("center") or {}).get("code", "")).lower() != \
                    str(params["center"]).lower():
                continue
            if "stiType" in params and item.get("stiType") != params["stiType"]:
                continue
            if "subjectCategory" in params and str(params["subjectCategory"]).lower() not in [
                    s.lower() for s in item.get("subjectCategories") or []]:
                continue
            if terms:
                text = f"{item.get('title', '')} {item.get('abstract', '')}".lower()
                if not all(t.strip('"') in text for t in terms):
                    continue
            matched.append((keys, item))
        page = [item for _, item in matched[start:start + size]]
        centers = Counter(str((i.get("center") or {}).get("code")) for _, i in matched if i.get("center"))
        years = Counter(k["published"][:4] for k, _ in matched if k["published"])
        return {
            "stats": {"took": int((time.perf_counter() - started) * 1000),
                      "total": min(len(matched), self.total_cap or len(matched)),
                      "estimate": bool(self.total_cap and len(matched) > self.total_cap), "maxScore": 0},
            "results": [{"_meta": {"score": 0}, **item} for item in page],
            "aggregations": {
                "center": {"doc_count_error_upper_bound": 0, "sum_other_doc_count": 0,
                           "buckets": [{"key": k, "doc_count": n} for k, n in centers.most_common(10)]},
                "published": {"buckets": [
                    {"key_as_string": y, "key": int(datetime(int(y), 1, 1).timestamp() * 1000),
                     "doc_count": n} for y, n in sorted(years.items())]},
            },
        }

    # -- OSTI --------------------------------------------------------------------------------
    def osti_records(self, params: dict[str, str], base_url: str) -> tuple[list[Any], dict[str, str]]:
        def error(status: int, message: str, description: str) -> HttpError:
            return HttpError(status, {"statusCode": status, "statusMessage": message,
                                      "errorDescription": description})
        try:
            rows = int(params.get("rows", 20))
            page = int(params.get("page", 1))
        except ValueError as exc:
            raise error(400, "Bad Request", f"invalid paging parameter: {exc}") from exc
        if rows < 1 or page < 1:
            raise error(400, "Bad Request", "rows and page must be positive")
        rows = min(rows, self.osti_max_rows)
        bounds: dict[str, str] = {}
        for key in ("entry_date_start", "entry_date_end", "publication_date_start", "publication_date_end"):
            if key in params:
                if self.osti_date_filters_fail:
                    raise error(500, "Internal Server Error", "Unable to process date parameters")
                m = _MDY.match(params[key])
                if not m:
                    raise error(400, "Bad Request", f"{key} must be MM/DD/YYYY")
                bounds[key] = f"{m.group(3)}-{int(m.group(1)):02d}-{int(m.group(2)):02d}"
        q = params.get("q", "").strip().lower()
        subject = [w for w in re.findall(r"\w+", params.get("subject", "").lower())]
        matched = self._osti_matched(q, bounds, params.get("sort", ""), subject)
        total = len(matched)
        last = max(1, math.ceil(total / rows))
        body = matched[(page - 1) * rows: page * rows]

        def link(p: int) -> str:
            return f"{base_url}?{urlencode({**params, 'page': p, 'rows': rows})}"

        links = [f'<{link(page + 1)}>; rel="next"'] if page < last else []
        links.append(f'<{link(last)}>; rel="last"')
        headers = {"X-Total-Count": str(total)}
        if self.osti_link_headers:
            headers["Link"] = ", ".join(links)
        return body, headers

    def _osti_matched(self, q: str, bounds: dict[str, str], sort_param: str,
                      subject: list[str]) -> list[dict[str, Any]]:
        """The matching records in sort order, cached per query while the collection is unchanged
        (a walk of thousands of one-record pages must not sort the collection each time)."""
        with self.lock:
            items = list(self.osti_items)
        cache_key = (q, tuple(sorted(bounds.items())), sort_param, tuple(subject), len(items),
                     id(items[0]) if items else 0, id(items[-1]) if items else 0)
        cached = self._osti_cache.get(cache_key)
        if cached is not None:
            return cached
        matched = []
        for item in items:
            if q and not all(t in f"{item.get('title', '')} {item.get('description', '')}".lower()
                             for t in q.split()):
                continue
            if subject and not all(w in re.findall(r"\w+", " ".join(item.get("subjects") or []).lower())
                                   for w in subject):
                continue
            ok = True
            for key, value in bounds.items():
                field = key.rsplit("_", 1)[0]
                have = _day(item.get(field))
                if have is None or (key.endswith("start") and have < value) or \
                        (key.endswith("end") and have > value):
                    ok = False
            if ok:
                matched.append(item)
        sort = sort_param.replace("+", " ").split()
        if sort and sort[0] in ("entry_date", "publication_date", "osti_id", "title"):
            field, desc = sort[0], len(sort) > 1 and sort[1].lower() == "desc"
            present = [i for i in matched if i.get(field)]
            missing = [i for i in matched if not i.get(field)]
            present.sort(key=lambda i: str(i.get(field)), reverse=desc)
            matched = present + missing
        self._osti_cache = {cache_key: matched}
        return matched


class _Handler(BaseHTTPRequestHandler):
    replay: ReplayServer
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out in separate writes; no 40 ms stalls

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002  quiet test output
        pass

    def do_GET(self) -> None:
        self._handle("GET")

    def do_POST(self) -> None:
        self._handle("POST")

    # -- plumbing ----------------------------------------------------------------------------
    def _send(self, status: int, body: bytes, content_type: str = "application/json",
              headers: dict[str, str] | None = None, length: int | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body) if length is None else length))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()

    def _reset(self) -> None:
        """Abort the TCP connection with RST (SO_LINGER 0), as a crashing proxy does."""
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.connection.close()

    def _handle(self, method: str) -> None:
        rs = self.replay
        split = urlsplit(self.path)
        params: dict[str, Any] = dict(parse_qsl(split.query, keep_blank_values=True))
        if method == "POST":
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                params.update(_flatten(json.loads(raw or b"{}")))
            except json.JSONDecodeError:
                self._send(400, b'{"statusCode":400,"message":"invalid JSON body"}')
                return
        entry = Logged(method, split.path, params, user_agent=self.headers.get("User-Agent", ""))
        with rs.lock:
            rs.log.append(entry)
        if rs.latency:
            time.sleep(rs.latency)
        is_osti = split.path.startswith("/osti/")
        error_body = (lambda status, msg: {"statusCode": status, "statusMessage": msg,
                                            "errorDescription": msg}) if is_osti else \
            (lambda status, msg: {"statusCode": status, "message": msg})
        wait = rs._rate_check()
        if wait is not None:
            entry.status = 429
            self._send(429, json.dumps(error_body(429, "Too Many Requests")).encode(),
                       headers={"Retry-After": str(max(0, math.ceil(wait))),
                                "x-ratelimit-limit": str(rs.rate_limit[0]), "x-ratelimit-remaining": "0"})
            return
        fault = rs._take_fault(split.path)
        entry.fault = fault
        name, _, arg = (fault or "").partition(":")
        if name == "reset":
            entry.status = -1
            self._reset()
            return
        if name == "429":
            entry.status = 429
            self._send(429, json.dumps(error_body(429, "Too Many Requests")).encode(),
                       headers={"Retry-After": arg or "0"})
            return
        if name == "500":
            entry.status = 500
            self._send(500, json.dumps(error_body(500, "Internal Server Error")).encode())
            return
        if name == "502-html":
            entry.status = 502
            self._send(502, b"<html><head><title>502 Bad Gateway</title></head><body>"
                            b"<h1>502 Bad Gateway</h1></body></html>", "text/html")
            return
        if name == "html":
            entry.status = 200
            self._send(200, b"<!DOCTYPE html><html><head><title>Scheduled Maintenance</title></head>"
                            b"<body>The service is down for maintenance.</body></html>", "text/html")
            return
        if name == "timeout":
            time.sleep(rs.stall)  # stall past the client's timeout, then answer normally
        try:
            status, body, headers = self._route(split.path, params)
        except HttpError as exc:
            status, body, headers = exc.status, exc.body, {}
        payload = orjson.dumps(body)
        entry.status = status
        if name == "truncated":
            cut = payload[: len(payload) // 2]
            self._send(status, cut, headers=headers)
            return
        if name == "short":
            self._send(status, payload[: len(payload) // 2], headers=headers, length=len(payload))
            self.close_connection = True
            return
        try:
            self._send(status, payload, headers=headers)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def _route(self, path: str, params: dict[str, Any]) -> tuple[int, Any, dict[str, str]]:
        rs = self.replay
        if path.rstrip("/") == "/ntrs/api/citations/search":
            return 200, rs.ntrs_search(params), {"x-ratelimit-limit": "500"}
        m = re.fullmatch(r"/ntrs/api/citations/([^/]+)", path)
        if m:
            for item in rs.ntrs_items:
                if str(item["id"]) == m.group(1):
                    return 200, item, {}
            return 404, {"statusCode": 404, "message": "Not found"}, {}
        if path.rstrip("/") == "/osti/api/v1/records":
            base = f"http://{self.headers.get('Host')}{path}"
            body, headers = rs.osti_records({k: str(v) for k, v in params.items()}, base)
            return 200, body, headers
        m = re.fullmatch(r"/osti/api/v1/records/(\d+)", path)
        if m:
            hits = [i for i in rs.osti_items if i.get("osti_id") == m.group(1)]
            if hits:
                return 200, hits, {}
            return 404, {"statusCode": 404, "statusMessage": "Not Found",
                         "errorDescription": f"No record found for {m.group(1)}"}, {}
        return 404, {"statusCode": 404, "message": "Not found"}, {}


def main() -> None:
    """Run the replay server from the command line (for manual checks and the benchmark)."""
    import argparse
    import sys
    from pathlib import Path

    from .collections import ntrs_items, osti_items

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--raw", type=Path, default=Path(__file__).resolve().parents[3] / "shared/data/raw")
    parser.add_argument("--window", type=int, default=10000)
    args = parser.parse_args()
    with ReplayServer(ntrs_items(args.raw), osti_items(args.raw), window=args.window) as server:
        sys.stdout.write(f"NTRS {server.ntrs_api}\nOSTI {server.osti_api}\n")
        sys.stdout.flush()
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
