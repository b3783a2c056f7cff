"""The fast document builder (store JSON -> one ``add_json`` per record, one analyzer call per record
for word pairs) indexes exactly what the per-value reference builder did, on the real sample:
every term of every field with its document frequency, BM25 scores of word, phrase and field
queries (which depend on term frequencies, field lengths and positions), fast-field values and the
stored card. Also ``searchnasa import --index`` and the index session's crash behaviour.
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
import tantivy
from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st
from index_reference import reference_document

from searchnasa.index import layout
from searchnasa.index.build import IndexSession
from searchnasa.index.documents import _SENTINEL, _pairs_per_value, pairs_text
from searchnasa.index.schema import PLAIN_ANALYZER, build_schema
from searchnasa.search.schemas import SearchRequest
from searchnasa.search.service import SearchService
from searchnasa.settings import Settings
from searchnasa.store import open_store

CLI = str(Path(sys.executable).with_name("searchnasa"))
TEXT_FIELDS = ("id", "all", "all_exact", "all_pairs", "title", "title_exact", "abstract", "subjects",
               "subjects_exact", "keywords", "keywords_exact", "authors", "identifiers", "ident_raw",
               "source", "document_type", "subject_value", "organization_value", "sample")
FAST_INTS = ("key", "year", "newest_key", "oldest_key")


@pytest.fixture(scope="module")
def reference_index(sample_home: Path, tmp_path_factory: pytest.TempPathFactory) -> tantivy.Index:
    """The sample indexed the old way: validated Records, one add_text per value."""
    path = tmp_path_factory.mktemp("reference_index")
    index = tantivy.Index(build_schema(), path=str(path))
    writer = index.writer(heap_size=200_000_000, num_threads=1)
    store = open_store(sample_home, readonly=True)
    for _, record in store.iter_records():
        writer.add_document(reference_document(record))
    store.close()
    writer.commit()
    writer.wait_merging_threads()
    index.reload()
    return index


@pytest.fixture(scope="module")
def fast_index(indexed_home: Path) -> tantivy.Index:
    """The sample indexed by ``build_index`` (the fast builder)."""
    generation = layout.current_generation(Settings().with_home(indexed_home).index_dir)
    return tantivy.Index.open(str(generation))


def test_every_field_has_the_same_terms_and_document_frequencies(reference_index, fast_index) -> None:
    ref, new = reference_index.searcher(), fast_index.searcher()
    assert ref.num_docs == new.num_docs == 6514
    for field in TEXT_FIELDS:
        expected = ref.terms_with_prefix(field, "")
        assert expected, field
        assert new.terms_with_prefix(field, "") == expected, field


def _all_hits(index: tantivy.Index, query: tantivy.Query) -> list[tuple[float, int]]:
    searcher = index.searcher()
    hits = searcher.search(query, 10_000).hits
    keys = searcher.fast_field_values("key", [addr for _, addr in hits])
    return sorted((round(score, 4), key) for (score, _), key in zip(hits, keys))


def _queries(sample_home: Path) -> list[tuple[str, list[str]]]:
    """Words, phrases and field queries drawn with a fixed seed from the sample's own text."""
    store = open_store(sample_home, readonly=True)
    records = [r for _, r in store.iter_records()]
    store.close()
    rng = random.Random(6)
    out: list[tuple[str, list[str]]] = []
    for rec in rng.sample(records, 40):
        title = PLAIN_ANALYZER.analyze(rec.title)
        abstract = PLAIN_ANALYZER.analyze(rec.abstract or "")
        if title:
            out.append((rng.choice(title), ["all", "title"]))
            out.append((" ".join(title[:2]), ["all_exact", "title_exact"]))
        if len(abstract) > 4:
            i = rng.randrange(len(abstract) - 3)
            out.append(('"' + " ".join(abstract[i:i + 3]) + '"', ["all_exact", "abstract"]))
            out.append(("_".join(abstract[i:i + 2]), ["all_pairs"]))
        if rec.authors:
            out.append(('"' + rec.authors[0].name.replace('"', " ") + '"', ["authors", "all_exact"]))
        for subject in rec.subjects[:1]:
            out.append(('"' + subject.replace('"', " ") + '"', ["subjects_exact"]))
        for keyword in rec.keywords[:1]:
            out.append(('"' + keyword.replace('"', " ") + '"', ["keywords", "all"]))
        out.append((rec.source_id, ["identifiers"]))
    return out


def test_word_phrase_and_field_queries_score_the_same(sample_home, reference_index, fast_index) -> None:
    queries = _queries(sample_home)
    assert len(queries) > 200
    matched = 0
    for text, fields in queries:
        try:
            ref_query = reference_index.parse_query(text, fields)
        except ValueError:
            continue
        expected = _all_hits(reference_index, ref_query)
        assert _all_hits(fast_index, fast_index.parse_query(text, fields)) == expected, (text, fields)
        matched += bool(expected)
    assert matched > 150


def test_fast_fields_and_stored_cards_are_the_same(reference_index, fast_index) -> None:
    def contents(index: tantivy.Index) -> dict[str, tuple]:
        searcher = index.searcher()
        addrs = [addr for _, addr in searcher.search(tantivy.Query.all_query(), 10_000).hits]
        columns = [searcher.fast_field_values(name, addrs) for name in FAST_INTS]
        out = {}
        for i, addr in enumerate(addrs):
            doc = searcher.doc(addr)
            out[doc.get_first("id")] = (doc.get_first("card"), *(col[i] for col in columns))
        return out

    expected = contents(reference_index)
    assert len(expected) == 6514
    assert contents(fast_index) == expected


@hsettings(max_examples=300, deadline=None)
@given(st.lists(st.text(max_size=60), max_size=8))
def test_pairs_of_joined_values_equal_pairs_value_by_value(values: list[str]) -> None:
    assert pairs_text(values) == " ".join(_pairs_per_value(values))


def test_a_value_holding_the_sentinel_never_pairs_across_values() -> None:
    values = [f"wind {_SENTINEL} tunnel", "beta gamma", f"x{_SENTINEL}", _SENTINEL]
    assert pairs_text(values) == " ".join(_pairs_per_value(values))
    assert pairs_text(["alpha wind", "tunnel beta"]) == "alpha_wind tunnel_beta"


def run_cli(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SEARCHNASA_HOME": str(home), "COLUMNS": "200"}
    return subprocess.run([CLI, *args], capture_output=True, text=True, env=env, timeout=180, check=False)


def test_import_with_index_builds_then_updates_the_index(sample_home: Path, tmp_path: Path) -> None:
    """``import --index`` gives the index ``searchnasa index`` would: full, then incremental."""
    store = open_store(sample_home, readonly=True)
    blobs = [orjson.loads(b) for _, b in store.iter_json_since(0)][:1200]
    store.close()
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    first.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in blobs[:1100]))
    changed = dict(blobs[0], title="SYNTHETIC EDIT qqzyxsynthetic " + blobs[0]["title"])
    second.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in [changed, *blobs[1100:]]))
    home = tmp_path / "home"

    done = run_cli("import", str(first), "--index", home=home)
    assert done.returncode == 0, done.stderr
    assert "index full build: 1,100 records indexed; 1,100 documents" in done.stdout
    settings = Settings().with_home(home)
    service = SearchService(settings)
    assert service.search(SearchRequest(q="", mode="lexical")).total == 1100

    done = run_cli("import", str(second), "--index", home=home)
    assert done.returncode == 0, done.stderr
    assert "index update: 101 records indexed; 1,200 documents" in done.stdout
    hits = service.search(SearchRequest(q="qqzyxsynthetic", mode="lexical")).results
    assert [h.id for h in hits] == [blobs[0]["id"]]
    state = layout.read_state(layout.current_generation(settings.index_dir))
    store = open_store(home)
    assert state.last_seq == store.max_seq() and state.documents == 1200
    assert run_cli("index", home=home).stdout.startswith("index update: 0 records")
    store.close()


def test_an_aborted_session_leaves_the_live_index_and_the_next_build_catches_up(
        sample_home: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    shutil.copy2(sample_home / "store.sqlite3", home / "store.sqlite3")
    index_dir = Settings().with_home(home).index_dir
    store = open_store(home)
    session = IndexSession(store, index_dir)
    session.feed()
    session.abort()  # as after a crash mid-import: nothing published, the generation removed
    assert layout.current_generation(index_dir) is None and not list(index_dir.glob("gen-*"))
    report = IndexSession(store, index_dir)
    report.feed()
    built = report.commit()
    assert built.full and built.documents == 6514 and built.last_seq == store.max_seq()
    store.close()
