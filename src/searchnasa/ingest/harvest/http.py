"""The one HTTP client every harvester uses: rate limit, timeouts, retries with backoff, Retry-After.

Why one client: politeness rules (a token bucket per source, a User-Agent with a contact, honouring
``Retry-After``) and robustness rules (retry 429/5xx/timeouts/resets/garbled bodies, then stop with a
clear error when one request keeps failing or the server fails most recent requests) must hold for
every request, so they live in one place.
A body is only handed to the caller once it parsed as the JSON shape the caller expects, so a
truncated body or an HTML error page can never reach the store.
"""

from __future__ import annotations

import email.utils
import logging
import random
import re
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

import httpx
import orjson

from searchnasa import __version__
from searchnasa.errors import HarvestError

log = logging.getLogger(__name__)

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})


class TokenBucket:
    """A token bucket: ``rate`` requests per second on average, bursts up to ``capacity``.

    ``rate <= 0`` turns the limit off (benchmarks, local mirrors). Time and sleep are injectable so
    tests can check the pacing without waiting for it.
    """

    def __init__(self, rate: float, capacity: float = 1.0,
                 clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.rate = rate
        self.capacity = max(capacity, 1.0)
        self.tokens = self.capacity
        self.clock = clock
        self.sleep = sleep
        self.updated = clock()

    def acquire(self) -> float:
        """Take one token, sleeping until one is available; returns the seconds slept."""
        if self.rate <= 0:
            return 0.0
        now = self.clock()
        self.tokens = min(self.capacity, self.tokens + (now - self.updated) * self.rate)
        self.updated = now
        waited = 0.0
        if self.tokens < 1.0:
            waited = (1.0 - self.tokens) / self.rate
            self.sleep(waited)
            self.tokens = 1.0
            self.updated = self.clock()
        self.tokens -= 1.0
        return waited


@dataclass
class RetryPolicy:
    """How hard to try: attempts per request, the failure share over a rolling window of requests,
    an optional run-wide cap, and the backoff curve.

    Why a rolling window and not a run-wide budget: a server that fails a steady few percent of
    requests would spend any fixed budget on a long enough harvest although every request succeeds
    on retry (a full NTRS walk is thousands of requests). What must stop a harvest is one request
    that keeps failing (``max_attempts``) or a server that fails most requests right now (more than
    ``max_failure_ratio`` of the last ``failure_window`` attempts). ``budget`` (None: no cap) is
    the old run-wide limit, for an operator who wants one.

    Backoff is exponential with full jitter (``uniform(0, min(cap, base * 2**attempt))``), so many
    clients that failed together do not retry together. ``Retry-After`` from the server wins over
    the computed delay, up to ``max_retry_after`` seconds.
    """

    max_attempts: int = 6
    budget: int | None = None
    backoff_base: float = 1.0
    backoff_cap: float = 60.0
    max_retry_after: float = 900.0
    failure_window: int = 100
    max_failure_ratio: float = 0.5

    def delay(self, attempt: int, rng: random.Random) -> float:
        return rng.uniform(0, min(self.backoff_cap, self.backoff_base * (2 ** attempt)))

    @property
    def min_window(self) -> int:
        """Attempts seen before the failure share is judged: a few early failures are no trend."""
        return max(1, min(self.failure_window, 20))


class FailureWindow:
    """The outcomes of the last ``size`` attempts, to tell a failing server from transient errors."""

    def __init__(self, size: int) -> None:
        self.outcomes: deque[bool] = deque(maxlen=max(size, 1))
        self.failures = 0

    def add(self, failed: bool) -> None:
        if len(self.outcomes) == self.outcomes.maxlen and self.outcomes[0]:
            self.failures -= 1
        self.outcomes.append(failed)
        self.failures += failed

    @property
    def seen(self) -> int:
        return len(self.outcomes)

    def ratio(self) -> float:
        return self.failures / self.seen if self.outcomes else 0.0


class BadBody(Exception):
    """The server answered 200 but the body is not the JSON shape the caller expects."""


class ClientError(HarvestError):
    """The server refused the request (4xx other than 429): retrying the same request cannot help."""

    def __init__(self, message: str, status: int, body: str) -> None:
        super().__init__(message)
        self.status = status
        self.body = body


@dataclass
class Response:
    """A parsed JSON body with the headers paging needs (``Link``, ``X-Total-Count``)."""

    data: Any
    headers: httpx.Headers
    url: str
    status: int


@dataclass
class ClientStats:
    """Counters for the end-of-run summary and the tests."""

    requests: int = 0
    retries: int = 0
    peak_failure_ratio: float = 0.0
    reasons: dict[str, int] = field(default_factory=dict)
    slept_for_rate: float = 0.0
    slept_for_retry: float = 0.0

    def note(self, reason: str) -> None:
        self.reasons[reason] = self.reasons.get(reason, 0) + 1


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """``Retry-After`` is either seconds or an HTTP date; anything else is ignored."""
    if not value:
        return None
    value = value.strip()
    if re.fullmatch(r"\d+(\.\d+)?", value):
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    current = now if now is not None else datetime.now(timezone.utc).timestamp()
    return max(0.0, when.timestamp() - current)


def user_agent(contact: str) -> str:
    """Operators of the APIs can see who is harvesting and how to reach them."""
    return f"searchnasa/{__version__} (+https://github.com/searchnasa; mailto:{contact})"


def _describe_body(text: str) -> str:
    """A short, one-line description of an unexpected body for error messages."""
    title = re.search(r"<title[^>]*>(.*?)</title>", text, re.IGNORECASE | re.DOTALL)
    if title:
        return f"an HTML page titled {title.group(1).strip()[:80]!r}"
    if text.lstrip().startswith("<"):
        return "an HTML/XML page"
    snippet = " ".join(text.split())[:80]
    return f"{len(text)} bytes starting {snippet!r}" if snippet else "an empty body"


class HarvestClient:
    """Send requests to one source API with its politeness and retry rules.

    ``validate`` callables passed to :meth:`request` check the parsed body's shape; a body that
    fails is retried like a 5xx, because proxies and overloaded backends produce exactly these.
    """

    def __init__(self, name: str, *, rate: float, contact: str, timeout: float = 30.0,
                 policy: RetryPolicy | None = None, sleep: Callable[[float], None] = time.sleep,
                 seed: int | None = None, transport: httpx.BaseTransport | None = None) -> None:
        self.name = name
        self.policy = policy or RetryPolicy()
        self.sleep = sleep
        self.bucket = TokenBucket(rate, sleep=sleep)
        self.rng = random.Random(seed)
        self.stats = ClientStats()
        self.window = FailureWindow(self.policy.failure_window)
        self.http = httpx.Client(
            timeout=httpx.Timeout(timeout),
            headers={"User-Agent": user_agent(contact), "Accept": "application/json"},
            follow_redirects=True,
            transport=transport,
        )

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> "HarvestClient":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _spend_retry(self, reason: str, attempt: int, retry_after: float | None, url: str) -> None:
        """Count a failed attempt against the limits, then sleep the backoff (or what the server asked)."""
        self.stats.retries += 1
        self.stats.note(reason)
        self._note_outcome(failed=True)
        if attempt + 1 >= self.policy.max_attempts:
            raise HarvestError(
                f"{self.name}: giving up after {attempt + 1} attempts ({reason}) at {url}; "
                "the checkpoint is saved, re-run the same command to resume")
        self._check_failing(reason, url)
        if self.policy.budget is not None and self.stats.retries > self.policy.budget:
            raise HarvestError(
                f"{self.name}: retry budget of {self.policy.budget} spent (last: {reason}) at {url}; "
                "the checkpoint is saved, re-run the same command to resume")
        wait = self.policy.delay(attempt, self.rng)
        if retry_after is not None:
            wait = min(max(retry_after, 0.0), self.policy.max_retry_after)
        log.info("%s: %s, retry %d in %.2fs (%s)", self.name, reason, attempt + 1, wait, url)
        self.stats.slept_for_retry += wait
        self.sleep(wait)

    def _note_outcome(self, failed: bool) -> None:
        self.window.add(failed)
        if self.window.seen >= self.policy.min_window:
            self.stats.peak_failure_ratio = max(self.stats.peak_failure_ratio, self.window.ratio())

    def _check_failing(self, reason: str, url: str) -> None:
        """Stop when most recent attempts failed: the server is down or refusing us, not flaky."""
        window = self.window
        if window.seen >= self.policy.min_window and window.ratio() > self.policy.max_failure_ratio:
            raise HarvestError(
                f"{self.name}: the server failed {window.failures} of the last {window.seen} requests "
                f"(last: {reason}) at {url}; stopping until it recovers. The checkpoint is saved, "
                "re-run the same command to resume")

    def request(self, method: str, url: str, *, params: Mapping[str, Any] | None = None,
                json_body: Any = None, validate: Callable[[Any], None] | None = None) -> Response:
        """One logical request: rate-limited, retried, and returned only as validated JSON."""
        attempt = 0
        while True:
            self.stats.slept_for_rate += self.bucket.acquire()
            self.stats.requests += 1
            retry_after: float | None = None
            try:
                resp = self.http.request(method, url, params=params, json=json_body)
            except httpx.TimeoutException:
                self._spend_retry("timeout", attempt, None, url)
                attempt += 1
                continue
            except (httpx.TransportError, httpx.DecodingError) as exc:  # resets, refused, short reads
                self._spend_retry(f"connection error: {type(exc).__name__}", attempt, None, url)
                attempt += 1
                continue
            status = resp.status_code
            if status in RETRY_STATUSES:
                retry_after = parse_retry_after(resp.headers.get("Retry-After"))
                reason = "rate limited (429)" if status == 429 else f"server error ({status})"
                self._spend_retry(reason, attempt, retry_after, str(resp.url))
                attempt += 1
                continue
            if status >= 400:
                self._note_outcome(failed=False)  # the server answered; the request itself is wrong
                raise ClientError(
                    f"{self.name}: HTTP {status} for {resp.url}: {_describe_body(resp.text)}",
                    status, resp.text)
            try:
                data = orjson.loads(resp.content)
                if validate is not None:
                    validate(data)
            except (orjson.JSONDecodeError, BadBody) as exc:
                self._spend_retry(f"unexpected body ({_describe_body(resp.text)}: {exc})", attempt,
                                  None, str(resp.url))
                attempt += 1
                continue
            self._note_outcome(failed=False)
            return Response(data=data, headers=resp.headers, url=str(resp.url), status=status)
