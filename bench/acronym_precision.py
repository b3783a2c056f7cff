"""The mined acronym list of the bundled sample: its size, and its precision on entries judged by hand.

An *entry* is one (acronym, meaning) pair a search expands: what a user typing the acronym gets
searched besides it. ``--draw`` writes a seeded random draw of entries to a TSV with an empty
``correct`` column and, for the judge, one sentence of a record that defines it; a person fills in
``yes``/``no`` (is the meaning what the acronym stands for in that collection?). Without
``--draw``, the script prints the list's size and, when the judged file exists, the precision.

    python bench/acronym_precision.py --draw 50 --out bench/acronym_judged.tsv   # then judge it
    python bench/acronym_precision.py --judged bench/acronym_judged.tsv          # size + precision
"""

from __future__ import annotations

import argparse
import csv
import math
import random
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from _common import print_and_save  # noqa: E402

from searchnasa.index.acronym_lexicon import read_lexicon  # noqa: E402
from searchnasa.index.acronym_table import update_acronyms  # noqa: E402
from searchnasa.ingest.importer import import_paths  # noqa: E402
from searchnasa.ingest.sample import sample_path  # noqa: E402
from searchnasa.settings import Settings  # noqa: E402
from searchnasa.store import Store, open_store  # noqa: E402

OUT = ROOT / "bench" / "out"
FIELDS = ["acronym", "meaning", "records", "example_id", "example", "correct", "note"]


def sample_store(home: Path) -> Store:
    """The bundled sample in a store of its own, its acronyms mined as ``searchnasa index`` does."""
    store = open_store(home)
    if store.count() == 0:
        import_paths(store, [sample_path()], "records-jsonl")
    update_acronyms(store, Settings().with_home(home).index_dir)
    return store


def sizes(store: Store, home: Path) -> dict[str, Any]:
    lexicon = read_lexicon(Settings().with_home(home).index_dir)
    with store.reading() as conn:
        definitions = conn.execute("SELECT COUNT(*) FROM acronym_definitions").fetchone()[0]
        pairs = conn.execute("SELECT COUNT(DISTINCT acronym || '|' || key) FROM acronym_counts").fetchone()[0]
        acronyms = conn.execute("SELECT COUNT(DISTINCT acronym) FROM acronym_counts").fetchone()[0]
    entries = lexicon.entries.values()
    return {"records": store.count(), "definitions_found": definitions, "distinct_acronym_meanings": pairs,
            "distinct_acronyms": acronyms, "lexicon_acronyms": len(lexicon),
            "expanded_acronyms": sum(1 for e in entries if e.expand),
            "expanded_entries": sum(len(e.expand) for e in entries),
            "ambiguous_expanded_to_dominant": sum(1 for e in entries if e.expand and e.others),
            "ambiguous_expanded_to_none": sum(1 for e in entries if not e.expand)}


def example(store: Store, acronym: str, key: str) -> tuple[str, str]:
    """One defining record and the sentence of its abstract (or title) that holds the acronym."""
    with store.reading() as conn:
        rid = conn.execute("SELECT record_id FROM acronym_definitions WHERE acronym = ? AND key = ? "
                           "ORDER BY record_id LIMIT 1", (acronym, key)).fetchone()[0]
    record = store.get(rid)
    for text in (record.abstract or "", record.title):
        for sentence in re.split(r"(?<=[.!?])\s+", text):
            if acronym in sentence:
                return rid, " ".join(sentence.split())[:400]
    return rid, record.title[:400]


def draw(store: Store, home: Path, n: int, seed: int, out: Path) -> None:
    lexicon = read_lexicon(Settings().with_home(home).index_dir)
    entries = [(e.acronym, m) for e in lexicon.entries.values() for m in e.expand]
    picked = random.Random(seed).sample(entries, min(n, len(entries)))
    with open(out, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh, delimiter="\t")
        writer.writerow(FIELDS)
        for acronym, meaning in sorted(picked, key=lambda p: p[0]):
            rid, sentence = example(store, acronym, meaning.key)
            writer.writerow([acronym, meaning.form, meaning.records, rid, sentence, "", ""])
    print(f"wrote {len(picked)} entries to {out}: fill in the 'correct' column (yes/no)")


def precision(judged: Path) -> dict[str, Any]:
    with open(judged, encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t"))
    done = [r for r in rows if r["correct"].strip().lower() in ("yes", "no")]
    right = sum(r["correct"].strip().lower() == "yes" for r in done)
    p = right / len(done) if done else float("nan")
    # Wilson 95% interval: 50 judgments leave a wide one, and the reader should see how wide
    z, k = 1.96, len(done)
    centre = (p + z * z / (2 * k)) / (1 + z * z / k) if k else float("nan")
    half = z * math.sqrt(p * (1 - p) / k + z * z / (4 * k * k)) / (1 + z * z / k) if k else float("nan")
    return {"judged": len(done), "correct": right, "precision": round(p, 3),
            "wilson_95": [round(centre - half, 3), round(centre + half, 3)],
            "wrong": [f"{r['acronym']} = {r['meaning']}" for r in done if r["correct"].strip().lower() == "no"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--draw", type=int, default=0, help="write this many random entries to --out")
    parser.add_argument("--seed", type=int, default=20261201)
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "acronym_judged.tsv")
    parser.add_argument("--judged", type=Path, help="a judged TSV: report its precision")
    parser.add_argument("--json", type=Path, help="also write the numbers here")
    args = parser.parse_args()
    home = OUT / "home-acronyms"
    store = sample_store(home)
    if args.draw:
        draw(store, home, args.draw, args.seed, args.out)
        return
    result = sizes(store, home)
    if args.judged:
        result["hand_check"] = precision(args.judged)
    print_and_save(result, args.json)


if __name__ == "__main__":
    main()
