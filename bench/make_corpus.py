"""Generate a SYNTHETIC corpus of N records shaped like the bundled sample, for benchmarks.

Every record is labelled synthetic: its title starts with ``[SYNTHETIC]``, its id is
``ntrs:synthetic-<n>`` / ``osti:synthetic-<n>`` and its landing link points at ``example.invalid``.
Nothing here is a real report.

How it resembles the sample (so query costs resemble real ones):
- text is stitched from word spans (3-8 words) cut from the sample's real titles and abstracts, so
  word frequencies and common phrases ("wind tunnel", "heat transfer") keep their statistics;
- abstract and title lengths, the share of records without an abstract or a year, year, subject,
  keyword, document type, organization and author-count distributions are drawn from the sample,
  per source; 15% NTRS / 85% OSTI (roughly the full collections' mix).
Deterministic: the same ``--seed`` and ``N`` give the same file.

    python bench/make_corpus.py 1000000 -o bench/out/corpus-1m.jsonl.gz
"""

from __future__ import annotations

import argparse
import gzip
import re
import sys
import time
from pathlib import Path

import numpy as np
import orjson

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from searchnasa.ingest.sample import sample_path  # noqa: E402

NTRS_SHARE = 0.15
_WORDS = re.compile(r"\S+")


class Pool:
    """Values with their sample frequencies; ``draw`` samples with replacement."""

    def __init__(self, values: list, rng: np.random.Generator) -> None:
        self.values = values if values else [None]
        self.rng = rng

    def draw(self, n: int) -> list:
        idx = self.rng.integers(0, len(self.values), size=n)
        return [self.values[i] for i in idx]


class SourceModel:
    """Everything drawn per source: lengths, years, labels, names."""

    def __init__(self, recs: list[dict], rng: np.random.Generator) -> None:
        self.rng = rng
        self.title_len = Pool([len(_WORDS.findall(r["title"])) for r in recs], rng)
        self.abstract_len = Pool([len(_WORDS.findall(r["abstract"])) if r.get("abstract") else 0 for r in recs], rng)
        self.year = Pool([r.get("year") for r in recs], rng)
        self.subjects = Pool([r["subjects"] for r in recs], rng)
        self.keywords = Pool([r["keywords"] for r in recs], rng)
        self.doc_type = Pool([(r.get("document_type"), r.get("document_type_label")) for r in recs], rng)
        self.orgs = Pool([r["organizations"] for r in recs], rng)
        self.n_authors = Pool([len(r["authors"]) for r in recs], rng)
        self.authors = Pool([a for r in recs for a in r["authors"]], rng)


def spans(texts: list[str], rng: np.random.Generator) -> list[list[str]]:
    """Cut texts into consecutive word spans of 3-8 words (phrases survive inside a span)."""
    out: list[list[str]] = []
    for text in texts:
        words = _WORDS.findall(text)
        i = 0
        while i < len(words):
            size = int(rng.integers(3, 9))
            out.append(words[i:i + size])
            i += size
    return out


class SpanStream:
    """Random spans drawn in large blocks (one numpy call per block, not per span)."""

    def __init__(self, pool: list[list[str]], rng: np.random.Generator, block: int = 1 << 20) -> None:
        self.pool, self.rng, self.block = pool, rng, block
        self.idx = rng.integers(0, len(pool), size=block)
        self.pos = 0

    def text(self, n_words: int) -> str:
        words: list[str] = []
        while len(words) < n_words:
            if self.pos == self.block:
                self.idx = self.rng.integers(0, len(self.pool), size=self.block)
                self.pos = 0
            words.extend(self.pool[self.idx[self.pos]])
            self.pos += 1
        return " ".join(words[:n_words])


BLOCK = 10_000


def _record(i: int, source: str, m: dict[str, list], j: int, titles: SpanStream,
            abstracts: SpanStream) -> dict:
    sid = f"synthetic-{i}"
    year = m["year"][j]
    dtype, dlabel = m["doc_type"][j]
    abstract_words = m["abstract_len"][j]
    return {
        "id": f"{source}:{sid}", "source": source, "source_id": sid, "kind": "citation",
        "title": "[SYNTHETIC] " + titles.text(max(2, m["title_len"][j])),
        "abstract": abstracts.text(abstract_words) if abstract_words else None,
        "authors": m["authors"][j],
        "date": {"value": str(year), "kind": "published", "precision": "year"} if year else None,
        "year": year, "subjects": m["subjects"][j], "keywords": m["keywords"][j],
        "document_type": dtype, "document_type_label": dlabel, "organizations": m["orgs"][j],
        "identifiers": {"doi": None, "report_numbers": [], "contract_numbers": [], "other": []},
        "links": {"landing": f"https://example.invalid/synthetic/{sid}", "pdf": None,
                  "fulltext": None, "other": []},
    }


def _draw_block(model: SourceModel, size: int) -> dict[str, list]:
    counts = [min(c, 12) for c in model.n_authors.draw(size)]
    pool = model.authors.draw(sum(counts))
    authors, k = [], 0
    for c in counts:
        authors.append(pool[k:k + c])
        k += c
    return {"title_len": model.title_len.draw(size), "abstract_len": model.abstract_len.draw(size),
            "year": model.year.draw(size), "doc_type": model.doc_type.draw(size),
            "subjects": model.subjects.draw(size), "keywords": model.keywords.draw(size),
            "orgs": model.orgs.draw(size), "authors": authors}


def generate(n: int, seed: int, out: Path) -> None:
    rng = np.random.default_rng(seed)
    with gzip.open(sample_path(), "rb") as fh:
        sample = [orjson.loads(line) for line in fh if line.strip()]
    models = {s: SourceModel([r for r in sample if r["source"] == s], rng) for s in ("ntrs", "osti")}
    titles = SpanStream(spans([r["title"] for r in sample], rng), rng)
    abstracts = SpanStream(spans([r["abstract"] for r in sample if r.get("abstract")], rng), rng)
    started = time.perf_counter()
    out.parent.mkdir(parents=True, exist_ok=True)
    # level 1: the corpus is scratch data; fast compression keeps generation CPU-light
    with (gzip.open(out, "wb", compresslevel=1) if out.suffix == ".gz" else open(out, "wb")) as fh:
        for base in range(0, n, BLOCK):
            size = min(BLOCK, n - base)
            is_ntrs = rng.random(size) < NTRS_SHARE
            blocks = {s: _draw_block(models[s], size) for s in ("ntrs", "osti")}
            lines = []
            for j in range(size):
                source = "ntrs" if is_ntrs[j] else "osti"
                lines.append(orjson.dumps(_record(base + j, source, blocks[source], j, titles, abstracts)))
            fh.write(b"\n".join(lines) + b"\n")
            done = base + size
            if done % 100_000 == 0:
                rate = done / (time.perf_counter() - started)
                print(f"{done:,} synthetic records ({rate:,.0f}/s)", file=sys.stderr)
    print(f"wrote {n:,} SYNTHETIC records to {out} in {time.perf_counter() - started:.0f}s", file=sys.stderr)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("n", type=int, help="number of synthetic records")
    parser.add_argument("-o", "--output", type=Path, default=ROOT / "bench" / "out" / "corpus.jsonl.gz")
    parser.add_argument("--seed", type=int, default=20261130)
    args = parser.parse_args()
    generate(args.n, args.seed, args.output)


if __name__ == "__main__":
    main()
