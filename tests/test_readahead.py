"""The read-ahead check ``searchnasa serve`` runs: found through sysfs, a warning only when it hurts."""

from __future__ import annotations

import os
from pathlib import Path

from searchnasa.web.readahead import read_ahead_kb, read_ahead_warning


def _fake_sysfs(root: Path, under: Path, kb: int, partition: bool = True) -> Path:
    """A sysfs tree in which the device holding ``under`` is a partition (or a disk) whose disk
    reads ahead ``kb``."""
    dev = os.stat(under).st_dev
    disk = root / "devices" / "virtual" / "vdx"
    (disk / "queue").mkdir(parents=True)
    (disk / "queue" / "read_ahead_kb").write_text(f"{kb}\n")
    target = disk / "vdx1" if partition else disk
    target.mkdir(exist_ok=True)
    (root / "dev" / "block").mkdir(parents=True)
    (root / "dev" / "block" / f"{os.major(dev)}:{os.minor(dev)}").symlink_to(target)
    return root


def test_read_ahead_is_found_for_a_partition_and_a_whole_disk(tmp_path: Path) -> None:
    data = tmp_path / "home"
    data.mkdir()
    assert read_ahead_kb(data, _fake_sysfs(tmp_path / "sys1", data, 8192)) == 8192
    assert read_ahead_kb(data, _fake_sysfs(tmp_path / "sys2", data, 256, partition=False)) == 256
    assert read_ahead_kb(data, tmp_path / "no-sysfs") is None
    assert read_ahead_kb(tmp_path / "missing", tmp_path / "sys1") is None
    real = read_ahead_kb(Path("/"))  # this machine: a number, or None on an overlay file system
    assert real is None or real >= 0


def test_the_warning_names_the_window_only_when_large_and_the_indexes_big(tmp_path: Path) -> None:
    index, vectors = tmp_path / "index", tmp_path / "vectors"
    index.mkdir()
    (vectors / "ann-1-abc").mkdir(parents=True)
    (index / "segment.idx").write_bytes(b"\0" * 300_000)
    (vectors / "ann-1-abc" / "graph.usearch").write_bytes(b"\0" * 300_000)
    (vectors / "vectors.sqlite3").write_bytes(b"\0" * 900_000)  # not mapped: does not count
    large = _fake_sysfs(tmp_path / "large", index, 8192)
    small = _fake_sysfs(tmp_path / "small", index, 128)
    line = read_ahead_warning(index, vectors, large, warn_above=500_000)
    assert line is not None and "8,192 KB" in line and "128 KB" in line and "docs/operations.md" in line
    assert read_ahead_warning(index, vectors, large, warn_above=700_000) is None  # 600 kB mapped
    assert read_ahead_warning(index, vectors, small, warn_above=1) is None
