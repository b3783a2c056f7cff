"""Read a BEIR-format folder: ``corpus.jsonl``, ``queries.jsonl``, ``qrels/<split>.tsv``.

Any folder of that layout works; errors name the file and line so a broken download is obvious.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from searchnasa.errors import BadInput, FormatError


@dataclass
class BeirDoc:
    id: str
    title: str
    text: str


@dataclass
class BeirData:
    """One evaluation set: documents, queries, and graded judgments ``qrels[qid][docid] = grade``."""

    corpus: dict[str, BeirDoc]
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]
    name: str = ""
    skipped_queries: list[str] = field(default_factory=list)

    @property
    def judged_queries(self) -> list[str]:
        """Queries with at least one relevant document (others cannot score and are left out)."""
        return [q for q in self.queries if any(g > 0 for g in self.qrels.get(q, {}).values())]


def _read_jsonl(path: Path) -> list[dict]:
    if not path.is_file():
        raise BadInput(f"{path} not found: a BEIR folder holds corpus.jsonl, queries.jsonl and qrels/test.tsv")
    rows = []
    with path.open("rb") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                row = orjson.loads(line)
            except orjson.JSONDecodeError as exc:
                raise FormatError(f"not JSON: {exc}", str(path), n) from exc
            if not isinstance(row, dict) or "_id" not in row:
                raise FormatError("each line needs an object with an _id", str(path), n)
            rows.append(row)
    return rows


def read_qrels(path: Path) -> dict[str, dict[str, int]]:
    """``query-id  corpus-id  score`` rows (tab-separated, with a header line)."""
    if not path.is_file():
        raise BadInput(f"{path} not found")
    qrels: dict[str, dict[str, int]] = {}
    with path.open(newline="") as fh:
        for n, row in enumerate(csv.reader(fh, delimiter="\t"), 1):
            if not row or (n == 1 and row[0].strip().lower() in ("query-id", "query_id", "qid")):
                continue
            if len(row) < 3:
                raise FormatError("expected query-id, corpus-id, score", str(path), n)
            try:
                grade = int(float(row[2]))
            except ValueError as exc:
                raise FormatError(f"score {row[2]!r} is not a number", str(path), n) from exc
            qrels.setdefault(row[0].strip(), {})[row[1].strip()] = grade
    return qrels


def load_beir(folder: Path, split: str = "test") -> BeirData:
    """Load a BEIR folder; only queries that have judgments in ``split`` are kept."""
    folder = Path(folder)
    if not folder.is_dir():
        raise BadInput(f"{folder} is not a folder")
    corpus = {}
    for row in _read_jsonl(folder / "corpus.jsonl"):
        did = str(row["_id"])
        corpus[did] = BeirDoc(did, str(row.get("title") or ""), str(row.get("text") or ""))
    queries = {str(r["_id"]): str(r.get("text") or "") for r in _read_jsonl(folder / "queries.jsonl")}
    qrels = read_qrels(folder / "qrels" / f"{split}.tsv")
    kept = {q: t for q, t in queries.items() if q in qrels}
    return BeirData(corpus=corpus, queries=kept, qrels=qrels, name=folder.name,
                    skipped_queries=[q for q in queries if q not in qrels])
