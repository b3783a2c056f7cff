"""The read-ahead of the disk holding a home, and a warning when it is large enough to hurt serving.

The lexical index (Tantivy) and the HNSW graph (usearch) are memory-mapped. When a mapped page is
not in memory, the kernel reads the disk's whole read-ahead window around it (``read_ahead_kb``
in sysfs; 128 KB on most disks, far more on some virtual machines). Where RAM holds the indexes
that costs nothing after the first touches. Where it does not, every fault reads the window and
evicts other pages to make room, so a large window turns each query into disk reads many times
the size of what it touches. The libraries open and map their files themselves, so the window can
only be set for the disk (docs/operations.md), and ``searchnasa serve`` says so when it is large.
"""

from __future__ import annotations

import os
from pathlib import Path

# Above this, a page fault on a mapped index reads more than a small range around it.
LARGE_READ_AHEAD_KB = 512
# Homes whose indexes are smaller than this sit in the page cache of any machine that runs them.
WARN_ABOVE_BYTES = 2 * 2**30


def read_ahead_file(path: Path, sys_root: Path = Path("/sys")) -> Path | None:
    """The sysfs file holding the read-ahead window of the block device under ``path``, or None
    when there is none (a network or overlay file system, no sysfs)."""
    try:
        dev = os.stat(path).st_dev
        node = (sys_root / "dev" / "block" / f"{os.major(dev)}:{os.minor(dev)}").resolve()
    except OSError:
        return None
    for folder in (node, node.parent):  # a partition's queue settings live on its disk
        candidate = folder / "queue" / "read_ahead_kb"
        if candidate.is_file():
            return candidate
    return None


def read_ahead_kb(path: Path, sys_root: Path = Path("/sys")) -> int | None:
    """The read-ahead window (KB) of the block device holding ``path``, or None (see
    :func:`read_ahead_file`)."""
    found = read_ahead_file(path, sys_root)
    try:
        return int(found.read_text().strip()) if found is not None else None
    except (OSError, ValueError):
        return None


def tree_bytes(*folders: Path) -> int:
    """Bytes of the files under ``folders`` (missing ones count 0)."""
    total = 0
    for folder in folders:
        for root, _, files in os.walk(folder):
            for name in files:
                try:
                    total += os.stat(os.path.join(root, name)).st_size
                except OSError:
                    pass
    return total


def read_ahead_warning(index_dir: Path, vectors_dir: Path, sys_root: Path = Path("/sys"),
                       warn_above: int = WARN_ABOVE_BYTES) -> str | None:
    """A line for the operator when the disk under the index reads ahead more than
    :data:`LARGE_READ_AHEAD_KB` and the indexes are big enough not to sit in memory anyway."""
    kb = read_ahead_kb(index_dir, sys_root)
    if kb is None or kb <= LARGE_READ_AHEAD_KB:
        return None
    size = tree_bytes(index_dir, *Path(vectors_dir).glob("ann-*"))  # what is mapped, not the SQLite store
    if size < warn_above:
        return None
    return (f"the disk holding {index_dir} reads ahead {kb:,} KB around every page fault of a "
            f"memory-mapped index ({size / 2**30:.1f} GiB here); where RAM is smaller than the "
            f"indexes, search slows to disk speed: set it to 128 KB (docs/operations.md, "
            f"\"Memory-mapped indexes and read-ahead\")")
