"""One ``update`` per home: an advisory lock file that says who holds it and at which stage.

Why ``flock`` and not "the file exists": the kernel releases a ``flock`` when its holder dies, so
a lock left by a SIGKILLed process is simply free again and the next run takes it over, while a
live holder can never be displaced (no pid guessing, no race between two takers). The file's text
(pid, start time, stage) is only information: for the refusal message, for ``/api/status`` and for
tests that watch the stages go by. It must live on a local file system (``flock`` over NFS is not
reliable); docs/operations.md says so.
"""

from __future__ import annotations

import fcntl
import json
import os
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from searchnasa.errors import UpdateBusy

LOCK_FILE = "update.lock"


@dataclass
class Holder:
    """What the lock file says about the run that wrote it."""

    pid: int | None
    started: str | None
    stage: str | None

    @classmethod
    def read(cls, path: Path) -> "Holder | None":
        try:
            data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8") or "{}")
        except (OSError, ValueError):
            return None
        return cls(data.get("pid"), data.get("started"), data.get("stage"))


class UpdateLock:
    """Held for a whole ``update`` run (``with UpdateLock(home) as lock: lock.stage("index")``)."""

    def __init__(self, home: Path) -> None:
        self.path = Path(home) / LOCK_FILE
        self._fd: int | None = None
        self.started = datetime.now(timezone.utc).isoformat(timespec="seconds")
        self.took_over: Holder | None = None  # a dead run's lock taken over (for the summary)

    def acquire(self) -> "UpdateLock":
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            holder = Holder.read(self.path)
            who = (f"pid {holder.pid}, started {holder.started}, stage {holder.stage}"
                   if holder else "pid unknown")
            raise UpdateBusy(f"another update is running in {self.path.parent} ({who}); "
                             "wait for it to finish (this run changed nothing)") from None
        previous = Holder.read(self.path)
        if previous is not None and previous.pid is not None and previous.stage != "finished":
            self.took_over = previous
        self._fd = fd
        self.stage("starting")
        return self

    def stage(self, name: str) -> None:
        """Record the stage now running (rewritten in place; readers see whole small writes)."""
        if self._fd is None:
            return
        data = json.dumps({"pid": os.getpid(), "started": self.started, "stage": name}).encode()
        os.ftruncate(self._fd, 0)
        os.pwrite(self._fd, data, 0)

    def release(self) -> None:
        if self._fd is not None:
            self.stage("finished")
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> "UpdateLock":
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


def lock_holder(home: Path) -> Holder | None:
    """Who is updating ``home`` now (None when nobody is). Read from the file and the holder's pid,
    never by trying the lock: a reader holding it even for a moment would turn a starting update away."""
    holder = Holder.read(Path(home) / LOCK_FILE)
    if holder is None or holder.pid is None or holder.stage == "finished":
        return None
    try:
        os.kill(holder.pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:
        pass  # alive, another user's
    return holder
