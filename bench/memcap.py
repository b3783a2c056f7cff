"""Run a benchmark stage under a hard memory limit (a Linux memory cgroup), for ``bench/scale.py``.

Why: a serving process that memory-maps its indexes shows every page it has touched in its RSS,
and the kernel keeps those pages while memory is free, so an RSS figure taken on a 24 GiB machine
says how much the process *used*, not how much it *needs*. Capping the stage at, say, 4 GiB and
timing it there answers the question a user with a smaller machine asks: does it still serve, and
how fast? The cap counts anonymous memory and the page cache the capped processes bring in, so
the stage's files are first dropped from the page cache (``evict``): pages another process read
earlier (the index build) would otherwise be charged to that process's group and escape the cap.

Needs root and the memory controller (cgroup v1 ``memory`` or cgroup v2); :class:`MemoryCap`
raises ``CapUnavailable`` otherwise, and the caller says so instead of running uncapped.
"""

from __future__ import annotations

import os
import time
from pathlib import Path


class CapUnavailable(RuntimeError):
    """No writable memory cgroup here (not root, or no memory controller)."""


def _own_cgroup() -> tuple[Path, int]:
    """This process's memory cgroup folder and the cgroup version (1 or 2)."""
    v1 = Path("/sys/fs/cgroup/memory")
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        if "memory" in controllers.split(",") and v1.is_dir():
            return v1 / path.lstrip("/"), 1
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        hierarchy, controllers, path = line.split(":", 2)
        if hierarchy == "0" and controllers == "":
            folder = Path("/sys/fs/cgroup") / path.lstrip("/")
            if "memory" in (Path("/sys/fs/cgroup") / "cgroup.controllers").read_text().split():
                return folder, 2
    raise CapUnavailable("no memory cgroup controller on this machine")


class MemoryCap:
    """A fresh child memory cgroup limited to ``limit_bytes``; a process joins by writing its pid
    to ``procs`` (``scale.in_cap`` has the command's shell do it before it becomes the command)."""

    def __init__(self, name: str, limit_bytes: int) -> None:
        parent, self.version = _own_cgroup()
        self.path = parent / f"searchnasa-bench-{name}-{os.getpid()}"
        self.procs = self.path / "cgroup.procs"
        self.limit_bytes = limit_bytes
        try:
            self.path.mkdir(exist_ok=True)
            limit_file = "memory.limit_in_bytes" if self.version == 1 else "memory.max"
            (self.path / limit_file).write_text(str(limit_bytes))
            if self.version == 1:  # no swap to hide in: the cap is on RAM (+ swap where present)
                try:
                    (self.path / "memory.memsw.limit_in_bytes").write_text(str(limit_bytes))
                except OSError:
                    pass
        except OSError as exc:
            raise CapUnavailable(f"cannot create a memory cgroup under {parent}: {exc}") from exc

    def report(self) -> dict[str, int | str]:
        """The limit, the group's peak usage (anonymous + page cache it charged) and how often it
        hit the limit or killed a process for memory."""
        out: dict[str, int | str] = {"cgroup": f"v{self.version}", "limit_mb": self.limit_bytes // 2**20}
        if self.version == 1:
            out["peak_usage_mb"] = int((self.path / "memory.max_usage_in_bytes").read_text()) // 2**20
            out["limit_hits"] = int((self.path / "memory.failcnt").read_text())
            stat = (self.path / "memory.oom_control").read_text()
            out["oom_kills"] = next((int(line.split()[1]) for line in stat.splitlines()
                                     if line.startswith("oom_kill ")), 0)
        else:
            peak = self.path / "memory.peak"
            if peak.exists():
                out["peak_usage_mb"] = int(peak.read_text()) // 2**20
            events = dict(line.split() for line in (self.path / "memory.events").read_text().splitlines())
            out["limit_hits"] = int(events.get("max", 0))
            out["oom_kills"] = int(events.get("oom_kill", 0))
        return out

    def close(self) -> None:
        """Remove the group once its processes have exited (retries briefly while they exit)."""
        for _ in range(50):
            try:
                self.path.rmdir()
                return
            except OSError:
                time.sleep(0.1)


def evict(*folders: Path) -> int:
    """Drop the files under ``folders`` from the page cache (``POSIX_FADV_DONTNEED``; clean pages
    that no process maps). Returns the bytes asked to be dropped."""
    total = 0
    for folder in folders:
        paths = [folder] if folder.is_file() else [p for p in folder.rglob("*") if p.is_file()]
        for path in paths:
            try:
                fd = os.open(path, os.O_RDONLY)
            except OSError:
                continue
            try:
                os.fsync(fd)
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
                total += os.fstat(fd).st_size
            except OSError:
                pass
            finally:
                os.close(fd)
    return total
