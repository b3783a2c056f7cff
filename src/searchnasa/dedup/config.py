"""The dedup configuration file (TOML): split rules that undo wrong merges, and the embedding rule.

A wrong merge is fixed by people, not by tuning thresholds: a ``[[split]]`` rule lists ids that
must never share a cluster, and every later run honours it.

    # SEARCHNASA_HOME/dedup.toml
    [[split]]
    ids = ["ntrs:19650020858", "ntrs:19660003873"]
    note = "report and its later journal version are catalogued separately on purpose"

    [embeddings]
    enabled = true      # used only when vectors exist (searchnasa embed)
    threshold = 0.96    # cosine of the title+abstract embeddings
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from searchnasa.errors import BadInput

CONFIG_FILENAME = "dedup.toml"
# Chosen on the bundled sample's vectors (ONNX int8, the default backend): the pairs that pass the
# guards have cosine 1.0000, 1.0000, 0.9861, 0.9765, 0.9699 (all the same work twice), then 0.9469
# and below; 0.96 sits in that gap, as 0.97 did under torch (0.9719 / 0.9472). bench/README.md,
# "ONNX int8 as the default".
DEFAULT_THRESHOLD = 0.96


@dataclass(frozen=True)
class SplitRule:
    """Ids that must end up in different clusters (pairwise)."""

    ids: tuple[str, ...]
    note: str = ""


@dataclass(frozen=True)
class DedupConfig:
    splits: tuple[SplitRule, ...] = ()
    embeddings_enabled: bool = True
    embedding_threshold: float = DEFAULT_THRESHOLD
    source: Path | None = None
    split_pairs: frozenset[tuple[str, str]] = field(default=frozenset(), compare=False)

    def separated(self, a: str, b: str) -> bool:
        return (min(a, b), max(a, b)) in self.split_pairs


def _pairs(rules: tuple[SplitRule, ...]) -> frozenset[tuple[str, str]]:
    out = set()
    for rule in rules:
        for i, a in enumerate(rule.ids):
            for b in rule.ids[i + 1:]:
                if a != b:
                    out.add((min(a, b), max(a, b)))
    return frozenset(out)


def parse_config(text: str, source: Path | None = None) -> DedupConfig:
    """Parse and check the file; every mistake is a :class:`BadInput` naming the file and the key."""
    where = str(source) if source else "dedup config"
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise BadInput(f"{where}: not valid TOML: {exc}") from exc
    unknown = set(data) - {"split", "embeddings"}
    if unknown:
        raise BadInput(f"{where}: unknown section(s) {', '.join(sorted(unknown))}; known: split, embeddings")
    splits = []
    raw_splits = data.get("split", [])
    if not isinstance(raw_splits, list):
        raise BadInput(f"{where}: 'split' must be an array of tables ([[split]])")
    for n, entry in enumerate(raw_splits, start=1):
        ids = entry.get("ids") if isinstance(entry, dict) else None
        if not isinstance(ids, list) or len(ids) < 2 or not all(isinstance(i, str) and ":" in i for i in ids):
            raise BadInput(f"{where}: [[split]] #{n} needs ids = [\"ntrs:…\", \"osti:…\"] (two or more record ids)")
        splits.append(SplitRule(tuple(i.strip() for i in ids), str(entry.get("note", ""))))
    emb = data.get("embeddings", {})
    if not isinstance(emb, dict):
        raise BadInput(f"{where}: [embeddings] must be a table")
    enabled = emb.get("enabled", True)
    threshold = emb.get("threshold", DEFAULT_THRESHOLD)
    if not isinstance(enabled, bool):
        raise BadInput(f"{where}: embeddings.enabled must be true or false")
    if not isinstance(threshold, (int, float)) or not 0.5 <= float(threshold) <= 1.0:
        raise BadInput(f"{where}: embeddings.threshold must be a number between 0.5 and 1.0")
    rules = tuple(splits)
    return DedupConfig(rules, enabled, float(threshold), source, _pairs(rules))


def load_config(path: Path | None, home: Path | None = None) -> DedupConfig:
    """``--config PATH`` if given (it must exist), else ``<home>/dedup.toml`` if present, else defaults."""
    if path is not None:
        if not Path(path).is_file():
            raise BadInput(f"dedup config {path} not found")
        return parse_config(Path(path).read_text(encoding="utf-8"), Path(path))
    if home is not None and (Path(home) / CONFIG_FILENAME).is_file():
        p = Path(home) / CONFIG_FILENAME
        return parse_config(p.read_text(encoding="utf-8"), p)
    return DedupConfig()
