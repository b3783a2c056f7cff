"""What one request costs the rate limiter, in requests' worth of work.

A search costs about the same whatever it asks, but two kinds of request cost far more and are
easy to ask for: an export streams up to 1,000 records with their citations (about 100 times the
work of a search page), and every truncated word (``turbo*``) expands to up to 64 indexed words
plus a pattern over the whole term dictionary. A CSV export of 1,000 rows for 90 OR-ed prefixes
took 2.3 s of CPU on the sample against about 20 ms for a search. With the rate limit on, such a
request spends as many tokens as the searches it costs, so the limit bounds work, not requests.
"""

from __future__ import annotations

from urllib.parse import parse_qs

from searchnasa.limits import MAX_EXPORT

EXPORT_PATHS = ("/api/export",)
EXPORT_ROWS_PER_TOKEN = 100     # 100 exported records cost one more search's worth
TOKENS_PER_TRUNCATION = 0.5     # each truncated word adds half a search
DEFAULT_EXPORT_ROWS = 100       # /api/export's default limit


def _rows(params: dict[str, list[str]]) -> int:
    """The records an export will stream: its ids, else its limit (default 100, at most 1,000)."""
    if params.get("ids"):
        return len(params["ids"])
    try:
        limit = int(params.get("limit", [str(DEFAULT_EXPORT_ROWS)])[0])
    except ValueError:
        return 0  # refused with a 422 before any work
    return max(0, min(limit, MAX_EXPORT))


def request_cost(path: str, query_string: bytes) -> float:
    """Tokens a request spends: 1, plus its exported rows and truncated words (module docs)."""
    params = parse_qs(query_string.decode("latin-1"), max_num_fields=1000)
    cost = 1.0
    cost += TOKENS_PER_TRUNCATION * sum(q.count("*") for q in params.get("q", []))
    if path in EXPORT_PATHS:
        cost += _rows(params) / EXPORT_ROWS_PER_TOKEN
    return cost
