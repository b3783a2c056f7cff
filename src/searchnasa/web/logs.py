"""The server's log: a timestamp on every line, repeats counted instead of written, a bounded file.

A server that cannot accept connections (file descriptors exhausted) gets asyncio's
"socket.accept() out of system resource" with a traceback on every accept attempt: hundreds of
thousands of lines a minute, written through the root logger with no timestamp. Three parts keep
the log readable and its size bounded whatever happens:

- :class:`CollapsingHandler` writes the first occurrence of a message, counts the identical ones
  that follow within ``SEARCHNASA_LOG_REPEAT_SECONDS``, and then writes one line saying how many
  there were ("... [repeated 350207 times in the last 60 s]").
- :class:`LineFormatter` stamps every line, the lines of a traceback included.
- With ``SEARCHNASA_LOG_FILE`` (or ``serve --log-file``) the log goes to a file rotated by size,
  safe with several worker processes writing to it (``concurrent-log-handler``).

:func:`log_config` is the ``logging.config.dictConfig`` dict uvicorn applies in every worker.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from typing import Any

from searchnasa.settings import env_number, env_value

FORMAT = "%(asctime)s %(levelname)s %(name)s %(message)s"
# Distinct messages remembered for counting; past it the oldest are forgotten (their counts written).
MAX_TRACKED = 512


class LineFormatter(logging.Formatter):
    """The usual format, with every continuation line (a traceback's) stamped like the first."""

    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        if "\n" not in text:
            return text
        first, *rest = text.split("\n")
        stamp = f"{self.formatTime(record, self.datefmt)} {record.levelname} {record.name} | "
        return "\n".join([first, *(stamp + line for line in rest)])


@dataclass
class _Seen:
    """One message within its counting interval: when it was first written and repeats since."""

    first: float
    repeats: int = 0
    record: logging.LogRecord | None = None


class CollapsingHandler(logging.Handler):
    """Writes each distinct message once per interval to ``target``; the repeats become one count.

    Identical means same logger, level and formatted message (a traceback of the same exception
    type at the same place is part of "same message" only through its text). A flush thread
    writes pending counts when an interval ends, so a flood that stops is still reported.
    """

    def __init__(self, target: logging.Handler, interval: float) -> None:
        super().__init__()
        self.target = target
        self.interval = max(0.0, interval)
        self._seen: dict[tuple[str, int, str], _Seen] = {}
        self._state = threading.Lock()
        self._flusher: threading.Thread | None = None

    def setFormatter(self, fmt: logging.Formatter | None) -> None:  # noqa: N802 (logging's name)
        super().setFormatter(fmt)
        self.target.setFormatter(fmt)

    def emit(self, record: logging.LogRecord) -> None:
        if self.interval == 0:
            self.target.handle(record)
            return
        key = (record.name, record.levelno, record.getMessage())
        now = time.monotonic()
        with self._state:
            seen = self._seen.get(key)
            if seen is not None and now - seen.first < self.interval:
                seen.repeats += 1
                seen.record = record
                return
            due = self._take_due(now, also=key)
            self._seen[key] = _Seen(first=now)
            if len(self._seen) > MAX_TRACKED:
                oldest = next(iter(self._seen))
                due.append(self._summary(self._seen.pop(oldest), now))
        for line in [d for d in due if d is not None]:
            self.target.handle(line)
        self.target.handle(record)
        self._start_flusher()

    def flush_counts(self) -> None:
        """Write the counts of every interval that has ended (the flush thread calls this)."""
        with self._state:
            due = self._take_due(time.monotonic())
        for line in [d for d in due if d is not None]:
            self.target.handle(line)

    def _take_due(self, now: float, also: tuple[str, int, str] | None = None) -> list[logging.LogRecord | None]:
        """Pop the entries whose interval ended (and ``also``), as summary records to write.

        Entries are inserted when first seen, so the dict is in ``first`` order and the ended ones
        are a prefix: every access line (each one distinct) reads only that prefix, not all 512."""
        ended = []
        for key, seen in self._seen.items():
            if now - seen.first < self.interval:
                break
            ended.append(key)
        if also is not None and also in self._seen and also not in ended:
            ended.append(also)
        return [self._summary(self._seen.pop(k), now) for k in ended]

    @staticmethod
    def _summary(seen: _Seen, now: float) -> logging.LogRecord | None:
        """The line that reports an entry's repeats, or None when there were none."""
        if not seen.repeats or seen.record is None:
            return None
        last = seen.record
        line = logging.LogRecord(last.name, last.levelno, last.pathname, last.lineno,
                                 "%s [repeated %d times in the last %d s]",
                                 (last.getMessage().split("\n", 1)[0], seen.repeats,
                                  max(1, round(now - seen.first))),
                                 None)
        return line

    def _start_flusher(self) -> None:
        if self._flusher is not None and self._flusher.is_alive():
            return

        def run() -> None:
            while True:
                time.sleep(self.interval)
                self.flush_counts()

        self._flusher = threading.Thread(target=run, name="log-repeat-counter", daemon=True)
        self._flusher.start()

    def flush(self) -> None:
        self.target.flush()

    def close(self) -> None:
        self.flush_counts()
        self.target.close()
        super().close()


def collapsing_handler(log_file: str = "", max_bytes: int = 0, backups: int = 0,
                       interval: float = 60.0) -> CollapsingHandler:
    """dictConfig factory: the collapsing handler over stderr, or over a size-rotated file."""
    target: logging.Handler
    if log_file:
        from concurrent_log_handler import ConcurrentRotatingFileHandler

        target = ConcurrentRotatingFileHandler(log_file, mode="a", maxBytes=max_bytes,
                                               backupCount=backups, encoding="utf-8")
    else:
        target = logging.StreamHandler()
    return CollapsingHandler(target, interval)


def log_config(level: str, log_file: str | None = None) -> dict[str, Any]:
    """One line per event, stamped, to stderr or the rotated file; the root logger (asyncio's
    errors land there) goes the same way, so no line escapes the counting or the stamp."""
    level = level.upper()
    handler = {
        "()": "searchnasa.web.logs.collapsing_handler",
        "formatter": "line",
        "log_file": log_file if log_file is not None else env_value("LOG_FILE"),
        "max_bytes": int(env_number("LOG_MAX_BYTES", int)),
        "backups": int(env_number("LOG_BACKUPS", int)),
        "interval": float(env_number("LOG_REPEAT_SECONDS", float)),
    }
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"line": {"()": "searchnasa.web.logs.LineFormatter", "format": FORMAT}},
        "handlers": {"main": handler},
        "root": {"handlers": ["main"], "level": "WARNING"},
        "loggers": {
            "searchnasa": {"handlers": ["main"], "level": level, "propagate": False},
            "uvicorn": {"handlers": ["main"], "level": level, "propagate": False},
            "uvicorn.error": {"level": level},
        },
    }
