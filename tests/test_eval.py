"""The eval command on a tiny BEIR folder written here, where every metric can be worked by hand."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from searchnasa.cli import app
from searchnasa.errors import BadInput, FormatError
from searchnasa.eval.beir import load_beir
from searchnasa.eval.metrics import evaluate
from searchnasa.search.schemas import SearchRequest
from searchnasa.eval.runner import as_any_words, as_plain_text, run_eval

CORPUS = [
    # q1 "zebra": d2 (judged not relevant) says zebra four times in a short text and ranks first;
    # d1 (relevant) says it once in a long text and ranks second. Nothing else mentions zebras.
    {"_id": "d1", "title": "", "text": "The zebra appears once in this long text about savanna grazing "
                                       "animals, grass seasons, water holes, migration routes and predators."},
    {"_id": "d2", "title": "", "text": "zebra zebra zebra zebra"},
    {"_id": "d3", "title": "Lunar regolith", "text": "Dust on the moon sticks to suits."},
    {"_id": "d4", "title": "Turbine blades", "text": "Cooling holes in hot turbine blades."},
    {"_id": "d5", "title": "Quasar spectra", "text": "Broad emission lines of distant quasars."},
]
QUERIES = [{"_id": "q1", "text": "zebra"}, {"_id": "q2", "text": "faraway galaxy light"},
           {"_id": "q3", "text": "unjudged query"}]
QRELS = "query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\t0\nq2\td5\t1\n"


def write_beir(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in CORPUS))
    (folder / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in QUERIES))
    (folder / "qrels").mkdir(exist_ok=True)
    (folder / "qrels" / "test.tsv").write_text(QRELS)
    return folder


# By hand: q1 ranks [d2, d1]; d1 (gain 1) at rank 2 -> DCG = 1/log2(3), ideal 1 -> nDCG 0.6309,
# recall 1, reciprocal rank 1/2. q2 ("faraway galaxy light") shares no word with any document: 0, 0, 0. q3 has no judgments.
EXPECTED = {"ndcg@10": (1 / math.log2(3)) / 2, "recall@100": 0.5, "mrr@10": 0.25}


def test_metrics_by_hand() -> None:
    qrels = {"a": {"x": 2, "y": 1, "z": 0}, "b": {"w": 1}}
    got = evaluate(qrels, {"a": ["z", "y", "x"], "b": []})
    # a: gains [0, 1, 2] -> DCG = 1/log2(3) + 2/log2(4); ideal [2, 1] -> 2 + 1/log2(3)
    ndcg_a = (1 / math.log2(3) + 2 / 2) / (2 + 1 / math.log2(3))
    assert got["ndcg@10"] == pytest.approx(ndcg_a / 2)
    assert got["recall@100"] == pytest.approx(0.5)
    assert got["mrr@10"] == pytest.approx((1 / 2) / 2)


def test_eval_on_a_tiny_beir_folder_matches_hand_computed_metrics(tmp_path: Path) -> None:
    folder = write_beir(tmp_path / "tiny")
    data = load_beir(folder)
    assert set(data.queries) == {"q1", "q2"} and data.skipped_queries == ["q3"]
    result = run_eval(folder, retrievals=["lexical"])
    assert result["documents"] == 5 and result["queries"] == 2
    for name, value in EXPECTED.items():
        assert result["results"]["lexical"][name] == pytest.approx(value)


def test_eval_command_prints_json_and_a_table(tmp_path: Path) -> None:
    folder = write_beir(tmp_path / "tiny")
    runner = CliRunner()
    out = runner.invoke(app, ["eval", str(folder), "--retrieval", "lexical", "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert data["results"]["lexical"]["ndcg@10"] == pytest.approx(EXPECTED["ndcg@10"])
    table = runner.invoke(app, ["eval", str(folder), "--retrieval", "lexical"])
    assert table.exit_code == 0 and "nDCG@10" in table.stdout and "0.315" in table.stdout


def test_eval_all_modes_and_related_on_the_tiny_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SEARCHNASA_EMBED_CACHE", str(tmp_path / "cache.sqlite3"))
    folder = write_beir(tmp_path / "tiny")
    result = run_eval(folder)  # lexical, semantic, hybrid: embeds 5 docs + 2 queries
    assert set(result["results"]) == {"lexical", "semantic", "hybrid"}
    # q1's relevant doc is one of only two zebra documents: every ranking finds it in the top 100
    for metrics in result["results"].values():
        assert metrics["recall@100"] >= 0.5
    # semantic search ranks the quasar document first for "faraway galaxy light" (no shared word;
    # cosine 0.43 with all-MiniLM-L6-v2, above the similarity floor, while every other document is
    # below 0.1 and so is not offered as a semantic candidate at all)
    assert result["results"]["semantic"]["recall@100"] == pytest.approx(1.0)
    assert result["results"]["semantic"]["ndcg@10"] > result["results"]["lexical"]["ndcg@10"]
    assert "7 embedded" not in result["embedding"] and "5 embedded" in result["embedding"]
    again = run_eval(folder, retrievals=["semantic"])  # a rerun takes every vector from the cache
    assert "0 embedded, 5 from cache" in again["embedding"]
    related = run_eval(folder, mode="related")
    assert 0.0 < related["results"]["related"]["ndcg@10"] <= 1.0


def test_bad_folders_give_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match="not a folder"):
        load_beir(tmp_path / "missing")
    folder = write_beir(tmp_path / "broken")
    (folder / "corpus.jsonl").write_text('{"_id": "d1", "text": "ok"}\nnot json\n')
    with pytest.raises(FormatError, match="corpus.jsonl:2"):
        load_beir(folder)
    result = CliRunner().invoke(app, ["eval", str(tmp_path / "missing")])
    assert result.exit_code != 0
    with pytest.raises(BadInput):
        run_eval(write_beir(tmp_path / "ok"), mode="nonsense")


def test_queries_are_read_as_text_not_syntax() -> None:
    assert as_plain_text('"Vitamin D" AND (bone) : -loss') == "Vitamin D and bone loss"
    assert as_any_words("heat shield ablation") == "heat OR shield OR ablation"
    paper = "Boundary layer transition measured in a quiet tunnel. " * 40  # a whole paper as the query
    for text in (as_plain_text(paper), as_any_words(paper)):
        assert len(text) <= 1000 and SearchRequest(q=text).q == text  # what the search box takes
    assert as_plain_text(paper).split()[-1] in paper.split()  # cut at a word, not inside one


def test_words_all_searches_as_typed(tmp_path: Path) -> None:
    """``--words all`` sends a query's words as a user types them (AND), ``any`` joins them by OR:
    "zebra moon" is in no single document, so only the OR finds q1's relevant d1."""
    folder = write_beir(tmp_path / "tiny")
    queries = [{"_id": "q1", "text": "zebra moon"}, QUERIES[1]]  # q2 matches no word either way
    (folder / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries))
    any_words = run_eval(folder, retrievals=["lexical"])
    all_words = run_eval(folder, retrievals=["lexical"], words="all")
    assert any_words["words"] == "any" and all_words["words"] == "all"
    assert any_words["results"]["lexical"]["recall@100"] == pytest.approx(0.5)
    assert all_words["results"]["lexical"]["recall@100"] == pytest.approx(0.0)
    with pytest.raises(BadInput, match="--words"):
        run_eval(folder, words="some")
    bad = subprocess.run([str(Path(sys.executable).parent / "searchnasa"), "eval", str(folder), "--words", "some"],
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode != 0 and "--words must be one of any, all" in bad.stderr
    assert "Traceback" not in bad.stderr
