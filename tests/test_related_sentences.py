"""Sentence vectors in related papers, on the real sample with its real vectors:

- a home holding sentence vectors re-ranks the head of a seed's list and shows, per paper, the
  pair of sentences (seed's, paper's) closest in meaning, with their real cosine;
- a seed without stored sentence vectors, or a home without any, ranks exactly as before;
- the pair is plain text in the API and escaped on the related page (an abstract holding HTML),
  checked on a real ``searchnasa serve``.

Sentence vectors are embedded for a few seeds' candidate heads only (through the shared
embedding cache, so a rerun costs seconds).
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Iterator

import httpx
import numpy as np
import pytest

from searchnasa.index import build_index
from searchnasa.records import Record
from searchnasa.search.related import SENTENCE_REASON, find_related
from searchnasa.semantic.cache import open_default_cache
from searchnasa.semantic.embedder import get_embedder
from searchnasa.semantic.model import record_text
from searchnasa.semantic.sentence_vectors import SentenceStore, embed_sentences_pending
from searchnasa.semantic.vectors import VectorStore
from searchnasa.sentences import record_sentences
from searchnasa.store import StoredItem, open_store

from semantic_util import records_in, semantic_home_from, semantic_service
from server_util import Server, running_server

SEED = Record(id="osti:88880001", source="osti", source_id="88880001",
              title="Film <b>cooling</b> effectiveness of turbine blades",
              abstract=("Film cooling effectiveness <script>alert('seed')</script> was measured on a turbine "
                        "blade at blowing ratios from 0.5 to 2. The coolant jets lift off the wall at the "
                        "highest blowing ratio."))
RELATIVE = Record(id="osti:88880002", source="osti", source_id="88880002",
                  title="Infrared thermography of film-cooled turbine blades <i>in a cascade</i>",
                  abstract=("We measured film cooling effectiveness <img src=x onerror=alert(2)> on a turbine "
                            "blade at several blowing ratios. Jet lift-off lowers the effectiveness near the holes."))
SAMPLE_SEEDS = 2      # sample seeds given sentence vectors (with their candidate heads)
HEAD_EMBEDDED = 60    # candidates of each such seed given sentence vectors


def _add_records(home: Path, records: list[Record]) -> None:
    store = open_store(home)
    store.upsert([StoredItem(r, "records-jsonl", r.model_dump(mode="json")) for r in records])
    build_index(store, home / "index")
    vstore = VectorStore(home / "vectors")
    vstore.embed_pending(((0, r) for r in records), embedder=get_embedder(), batch_size=16)
    vstore.close()
    store.close()


@pytest.fixture(scope="module")
def plain_home(indexed_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample with its record vectors and the two HTML records; no sentence vectors."""
    home = semantic_home_from(indexed_home, tmp_path_factory.mktemp("plain_home"))
    _add_records(home, [SEED, RELATIVE])
    return home


@pytest.fixture(scope="module")
def sample_seeds(plain_home: Path) -> list[Record]:
    store = open_store(plain_home, readonly=True)
    recs = [rec for _, rec in store.iter_records() if rec.abstract and 400 < len(rec.abstract) < 1500]
    store.close()
    return [recs[i] for i in (10, 210, 410)]  # the first SAMPLE_SEEDS get sentence vectors, the last none


@pytest.fixture(scope="module")
def sentence_home(plain_home: Path, sample_seeds: list[Record], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The plain home plus sentence vectors for some seeds and their candidate heads."""
    home = tmp_path_factory.mktemp("sentence_home")
    shutil.copy2(plain_home / "store.sqlite3", home / "store.sqlite3")
    shutil.copytree(plain_home / "index", home / "index")
    shutil.copytree(plain_home / "vectors", home / "vectors")
    plain = semantic_service(plain_home)
    ids = {SEED.id, RELATIVE.id}
    for seed in sample_seeds[:SAMPLE_SEEDS]:
        ids |= {seed.id, *(i.id for i in find_related(plain, [seed.id], [], HEAD_EMBEDDED))}
    ids -= {sample_seeds[-1].id}
    store = open_store(home, readonly=True)
    records = store.get_many(sorted(ids))
    store.close()
    cache = open_default_cache()
    try:
        embed_sentences_pending(home / "vectors", ((0, records[i]) for i in sorted(records)),
                                embedder=get_embedder(), cache=cache)
    finally:
        cache.close()
    return home


def _lists(home: Path, seed_ids: list[str]) -> list[list[tuple]]:
    service = semantic_service(home)
    return [[(i.id, i.score, tuple(i.reasons), i.sentence_pair) for i in find_related(service, [sid], [], 20)]
            for sid in seed_ids]


def test_sentence_vectors_are_stored_int8_beside_the_record_vectors(sentence_home: Path) -> None:
    store = SentenceStore(sentence_home / "vectors")
    try:
        n = store.count()
        row = store.conn.execute("SELECT q, scale FROM sentences WHERE id = ?", (SEED.id,)).fetchone()
    finally:
        store.close()
    assert n >= 60
    units = record_sentences(SEED.title, SEED.abstract)
    assert len(row[0]) == len(units) * 384 and len(row[1]) == len(units) * 4  # int8 + one scale each


def test_without_sentence_vectors_the_list_is_unchanged(plain_home: Path, sentence_home: Path,
                                                       sample_seeds: list[Record]) -> None:
    """A seed with no stored sentences ranks exactly as in a home that has none at all."""
    unembedded = sample_seeds[-1].id
    before, after = _lists(plain_home, [unembedded]), _lists(sentence_home, [unembedded])
    assert after == before
    assert all(pair is None for _, _, _, pair in before[0])
    assert not any(SENTENCE_REASON in r for _, _, reasons, _ in before[0] for r in reasons)


def test_the_head_is_reranked_and_each_pair_is_real(plain_home: Path, sentence_home: Path,
                                                    sample_seeds: list[Record]) -> None:
    seeds = sample_seeds[:SAMPLE_SEEDS]
    store = open_store(sentence_home, readonly=True)
    embedder = get_embedder()
    changed = shown = 0
    for seed, before, after in zip(seeds, _lists(plain_home, [s.id for s in seeds]),
                                   _lists(sentence_home, [s.id for s in seeds])):
        changed += [i for i, *_ in before] != [i for i, *_ in after]
        assert [s for _, s, _, _ in after] == sorted((s for _, s, _, _ in after), reverse=True)
        for rid, _, reasons, pair in after:
            if pair is None:
                continue
            shown += 1
            other = store.get_many([rid])[rid]
            assert pair.seed.rstrip("…") in " ".join(record_sentences(seed.title, seed.abstract))
            assert pair.related.rstrip("…") in " ".join(record_sentences(other.title, other.abstract))
            assert f"{SENTENCE_REASON} {pair.similarity:.2f}" in reasons
            if not pair.seed.endswith("…") and not pair.related.endswith("…"):
                a, b = embedder.encode([pair.seed, pair.related])
                assert abs(float(np.dot(a, b)) - pair.similarity) < 0.02
    store.close()
    assert changed >= 1, "sentence similarity should move at least one list"
    assert shown >= 20


@pytest.fixture(scope="module")
def server(sentence_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with running_server(sentence_home, tmp_path_factory.mktemp("logs") / "serve.log") as srv:
        yield srv


def test_the_pair_is_plain_text_in_the_api_and_escaped_on_the_page(server: Server) -> None:
    api = httpx.get(f"{server.base_url}/api/records/{SEED.id}/related", params={"limit": 10}, timeout=60)
    assert api.status_code == 200, api.text
    item = next(r for r in api.json()["results"] if r["id"] == RELATIVE.id)
    pair = item["sentence_pair"]
    assert pair and "<" in pair["seed"] and "<" in pair["related"]  # every sentence of both holds markup
    assert pair["seed"] in record_sentences(SEED.title, SEED.abstract)
    assert pair["related"] in record_sentences(RELATIVE.title, RELATIVE.abstract)
    page = httpx.get(f"{server.base_url}/records/{SEED.id}/related", timeout=60)
    assert page.status_code == 200
    shown = re.findall(r'<p class="sentence-pair">(.*?)</p>', page.text, re.S)
    assert shown, "the related page shows sentence pairs"
    mine = [p for p in shown if "turbine" in p]
    assert mine and all("&lt;" in p for p in mine)
    assert "<script>alert" not in page.text and "<img src=x" not in page.text and "<b>cooling" not in page.text


def test_the_bundled_sample_brings_its_sentence_vectors(indexed_home: Path, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A home seeded from the bundle (as ``make run`` seeds one) gets the sample's sentence vectors
    without the model: every record with text has its row, its related lists show a sentence pair
    at once, and ``embed --sentences`` finds nothing left to embed."""
    import searchnasa.semantic.vectors as vectors

    def no_model(*_: object, **__: object) -> None:
        raise AssertionError("seeding from the bundle must not load the model")

    monkeypatch.setattr(vectors, "get_embedder", no_model)
    home = semantic_home_from(indexed_home, tmp_path, sentences=True)
    sstore = SentenceStore(home / "vectors")
    try:
        stored, checkpoint = sstore.count(), sstore.checkpoint_seq
    finally:
        sstore.close()
    records = records_in(home)
    with_sentences = [r for r in records.values() if record_text(r) and record_sentences(r.title, r.abstract)]
    assert stored == len(with_sentences) > 6000
    assert checkpoint == 0  # seeding leaves the walk of `embed --sentences` where it was
    service = semantic_service(home)
    seeds = [r for r in with_sentences if r.abstract and len(r.abstract) > 600][:3]
    for seed in seeds:
        items = find_related(service, [seed.id], [], 10)
        assert any(i.sentence_pair is not None for i in items), seed.id
    report = embed_sentences_pending(home / "vectors", ((0, r) for r in records.values()))
    assert report.embedded == 0 and report.unchanged == len(records)


def test_a_home_without_sentences_is_looked_at_again_only_now_and_then(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Every hybrid search asks whether sentence vectors exist; a home without them is not opened
    again on each search, yet sentences embedded later are found within ``RECHECK_SECONDS``."""
    import searchnasa.semantic.sentence_vectors as sv

    vectors = tmp_path / "vectors"
    VectorStore(vectors).close()  # record vectors' file, no sentences table
    reader = sv.SentenceReader(vectors)
    assert not reader.present()
    SentenceStore(vectors).close()  # `embed --sentences` creates the table
    assert not reader.present()  # not looked at again yet
    now = sv.time.monotonic()
    monkeypatch.setattr(sv.time, "monotonic", lambda: now + sv.RECHECK_SECONDS + 1)
    assert reader.present()


def test_a_free_text_seeds_sentences_take_one_model_call(plain_home: Path) -> None:
    """A free-text seed's sentences go to the model in one call, not one call (and one turn at the
    model) each; under the default ONNX backend, which runs one text at a time inside a call, the
    vectors are those of each sentence embedded alone."""
    from searchnasa.semantic.provider import VectorProvider

    provider = VectorProvider(plain_home / "vectors")
    embedder = provider.embedder
    calls: list[int] = []
    encode = embedder.encode

    def counting(texts, *args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(len(texts))
        return encode(texts, *args, **kwargs)

    units = ["Film cooling effectiveness was measured at blowing ratios 0.5 to 2.",
             "A turbine blade with shaped holes was tested in a linear cascade."]
    embedder.encode = counting  # type: ignore[method-assign]
    try:
        together = provider.embed_sentences(units, wait=30)
    finally:
        del embedder.encode
    assert calls == [2]
    alone = np.stack([embedder.encode([u])[0] for u in units])
    assert np.allclose(together, alone, atol=1e-5 if embedder.backend == "onnx" else 1e-3)


def test_embed_sentences_command_stores_them_and_resumes(tmp_path: Path) -> None:
    """``searchnasa embed --sentences``: every record's sentences stored; a rerun embeds nothing; a
    record whose text changed is embedded again (and its old row is not served meanwhile)."""
    from typer.testing import CliRunner

    import searchnasa.cli  # noqa: F401  (registers every command)
    from searchnasa.cli.app import app
    from searchnasa.semantic.sentence_vectors import SentenceReader

    home = tmp_path / "home"
    store = open_store(home)
    store.upsert([StoredItem(r, "records-jsonl", r.model_dump(mode="json")) for r in (SEED, RELATIVE)])
    store.close()
    runner = CliRunner()
    first = runner.invoke(app, ["embed", "--sentences", "--home", str(home)], catch_exceptions=False)
    assert first.exit_code == 0, first.output
    want = len(record_sentences(SEED.title, SEED.abstract)) + len(record_sentences(RELATIVE.title, RELATIVE.abstract))
    assert f"2 records walked, {want} sentences embedded" in first.output
    reader = SentenceReader(home / "vectors")
    got = reader.vectors_for([SEED.id, RELATIVE.id])
    assert [len(got[r.id]) for r in (SEED, RELATIVE)] == [len(record_sentences(r.title, r.abstract))
                                                         for r in (SEED, RELATIVE)]
    again = runner.invoke(app, ["embed", "--sentences", "--home", str(home)], catch_exceptions=False)
    assert "0 records walked" in again.output
    changed = SEED.model_copy(update={"abstract": "A new abstract about nozzle erosion. It has two sentences."})
    store = open_store(home)
    store.upsert([StoredItem(changed, "records-jsonl", changed.model_dump(mode="json"))])
    store.close()
    third = runner.invoke(app, ["embed", "--sentences", "--home", str(home)], catch_exceptions=False)
    assert "1 records walked, 3 sentences embedded" in third.output, third.output
    assert len(SentenceReader(home / "vectors").vectors_for([SEED.id])[SEED.id]) == 3
