"""Tell the kernel that the vector index files are read at random, so a miss reads one page.

The HNSW graph and the sorted id array are memory-mapped (usearch ``view=True``, numpy
``mmap_mode``) and a query walks / bisects them at random. By default Linux reads ahead around
every page fault on a file mapping (up to 128 KB), which is right for files read in order and very
wrong here: when the graph does not fit in the memory left to the process, each fault on one 4 KB
node brings in 32 pages, evicting as many others. Measured at 4M vectors under a 4 GiB limit, the
search process read 440 GB from disk in 10 minutes (bench/README.md, "Memory: what the process
holds vs what it needs"). ``MADV_RANDOM`` turns the read-ahead off for these mappings only; with
memory to spare nothing changes once the pages are resident.

usearch does not expose its mapping, so :func:`advise_mapped_random` finds the mappings of a file
in ``/proc/self/maps`` and advises each. Linux only; elsewhere (or if ``madvise`` fails) it does
nothing and says so by returning 0.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
from pathlib import Path

log = logging.getLogger(__name__)

MADV_RANDOM = 1  # <sys/mman.h> on Linux


def _madvise():
    """libc's ``madvise``, typed; None where there is no such libc function."""
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        fn = ctypes.CDLL(name, use_errno=True).madvise
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    fn.restype = ctypes.c_int
    return fn


def mappings_of(path: Path) -> list[tuple[int, int]]:
    """(start, end) of every mapping of ``path`` in this process (``/proc/self/maps``)."""
    target = str(Path(path).resolve())
    found: list[tuple[int, int]] = []
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                parts = line.rstrip("\n").split(maxsplit=5)
                if len(parts) == 6 and parts[5] == target:
                    start, end = (int(x, 16) for x in parts[0].split("-"))
                    found.append((start, end))
    except OSError:
        return []
    return found


def advise_mapped_random(path: Path) -> int:
    """``madvise(MADV_RANDOM)`` on every mapping of ``path``; returns how many were advised."""
    fn = _madvise()
    if fn is None:
        return 0
    advised = 0
    for start, end in mappings_of(path):
        if fn(ctypes.c_void_p(start), ctypes.c_size_t(end - start), MADV_RANDOM) == 0:
            advised += 1
        else:
            log.debug("madvise(MADV_RANDOM) failed on %s: errno %d", path, ctypes.get_errno())
    return advised

