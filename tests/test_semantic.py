"""Embeddings, their storage, the vector index and the semantic provider, on real data.

Vectors come from the bundled sample embeddings (real all-MiniLM-L6-v2 vectors of real records);
only a handful of texts are embedded afresh, so the model is exercised without slowing the suite.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from searchnasa.index.schema import stem_tokens
from searchnasa.records import Record
from searchnasa.search.models import SearchRequest
from searchnasa.search.semantic_api import SemanticProvider as ProviderProtocol
from searchnasa.search.service import SearchService
from searchnasa.semantic.ann import ExactIndex, HnswIndex, recall_at_k
from searchnasa.semantic.bundle import load_bundle, quantize, dequantize
from searchnasa.semantic.embedder import get_embedder, record_text, text_key
from searchnasa.semantic.provider import SemanticProvider
from searchnasa.semantic.vectors import EmbeddingCache, VectorStore
from searchnasa.settings import Settings
from searchnasa.store import StoredItem, open_store

from search_util import contains_phrase
from semantic_util import semantic_home_from


@pytest.fixture(scope="module")
def bundle():
    b = load_bundle()
    assert b is not None, "src/searchnasa/data/sample_vectors.npz is missing (scripts/embed_sample.py)"
    return b


@pytest.fixture(scope="module")
def sem_home(indexed_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return semantic_home_from(indexed_home, tmp_path_factory.mktemp("sem_home"))


@pytest.fixture(scope="module")
def records(sem_home: Path) -> dict[str, Record]:
    store = open_store(sem_home, readonly=True)
    out = {rec.id: rec for _, rec in store.iter_records()}
    store.close()
    return out


def test_hnsw_recall_against_exact_on_real_embeddings(bundle) -> None:
    ids, matrix = bundle.ids[:3000], bundle.matrix[:3000]  # a slice keeps the build quick
    exact = ExactIndex(ids, matrix)
    # One build thread gives the same graph on every run; a multi-threaded build's insertion order
    # depends on scheduling, which moved recall by a few queries under a loaded machine.
    hnsw = HnswIndex.build(ids, matrix, threads=1)
    rng = np.random.default_rng(7)
    queries = matrix[rng.choice(len(ids), 200, replace=False)]
    # perturb so queries are not exactly stored points (as real queries are not)
    queries = queries + rng.normal(0, 0.02, queries.shape).astype(np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    recall = recall_at_k(exact, hnsw, queries, k=10)
    assert recall >= 0.95, recall
    hnsw.rescore = matrix.astype(np.float16)  # as the provider serves it: int8 graph, exact re-rank
    assert recall_at_k(exact, hnsw, queries, k=10) >= 0.99
    # the similarities HNSW reports are cosines close to the exact ones (int8 storage)
    top_exact = exact.search(queries[0], 5)
    top_hnsw = dict(hnsw.search(queries[0], 5))
    for rid, sim in top_exact:
        if rid in top_hnsw:
            assert abs(top_hnsw[rid] - sim) < 0.02


def test_exact_search_finds_a_stored_vector_first(bundle) -> None:
    exact = ExactIndex(bundle.ids, bundle.matrix)
    hits = exact.search(bundle.matrix[123], 3)
    assert hits[0][0] == bundle.ids[123]
    assert hits[0][1] == pytest.approx(1.0, abs=1e-3)
    assert hits[0][1] >= hits[1][1] >= hits[2][1]


def test_hnsw_index_round_trips_through_disk_and_detects_staleness(bundle, tmp_path: Path) -> None:
    ids, matrix = bundle.ids[:500], bundle.matrix[:500]
    built = HnswIndex.build(ids, matrix)
    built.save(tmp_path, version="7")
    assert HnswIndex.load(tmp_path, version="8") is None
    loaded = HnswIndex.load(tmp_path, version="7")
    assert loaded is not None
    assert [r for r, _ in loaded.search(matrix[10], 5)] == [r for r, _ in built.search(matrix[10], 5)]


def test_bundle_int8_keeps_cosine_and_matches_fresh_embeddings(bundle, records) -> None:
    rng = np.random.default_rng(1)
    m = rng.normal(size=(50, 384)).astype(np.float32)
    m /= np.linalg.norm(m, axis=1, keepdims=True)
    back = dequantize(*quantize(m))
    assert float(np.min(np.sum(back * m, axis=1))) > 0.999
    # three real records embedded now agree with the shipped vectors
    picks = [rid for rid in bundle.ids[:200] if records[rid].abstract][:3]
    fresh = get_embedder().encode([record_text(records[r]) for r in picks])
    shipped = bundle.get_many([text_key(record_text(records[r])) for r in picks])
    for rid, vec in zip(picks, fresh):
        assert float(np.dot(vec, shipped[text_key(record_text(records[rid]))])) > 0.99


def _mini_store(home: Path, recs: list[Record]):
    store = open_store(home)
    store.upsert([StoredItem(r, "records-jsonl", r.model_dump(mode="json")) for r in recs])
    return store


def test_embed_only_new_or_changed_records_and_resume(records, tmp_path: Path) -> None:
    sample = [r for r in records.values() if r.abstract][:6]
    store = _mini_store(tmp_path / "home", sample)
    vs = VectorStore(tmp_path / "home" / "vectors")

    class Stop(Exception):
        pass

    def stop_after_first(n: int) -> None:
        raise Stop()

    with pytest.raises(Stop):  # killed after the first committed batch of 2
        vs.embed_pending(store.iter_records(vs.checkpoint_seq), batch_size=2, on_batch=stop_after_first)
    assert vs.count() == 2
    report = vs.embed_pending(store.iter_records(vs.checkpoint_seq), batch_size=2)
    assert (report.seen, report.embedded) == (4, 4)  # resumed: only the rest
    assert vs.count() == 6

    # nothing changed: nothing embedded, from the checkpoint or from scratch
    assert vs.embed_pending(store.iter_records(vs.checkpoint_seq)).seen == 0
    again = vs.embed_pending(store.iter_records(0))
    assert (again.embedded, again.unchanged) == (0, 6)

    # one abstract edited: that record alone is embedded again
    edited = sample[0].model_copy(update={"abstract": sample[0].abstract + " Revised edition."})
    store.upsert([StoredItem(edited, "records-jsonl", edited.model_dump(mode="json"))])
    report = vs.embed_pending(store.iter_records(vs.checkpoint_seq))
    assert (report.seen, report.embedded) == (1, 1)
    vec = vs.get_many([edited.id])[edited.id]
    assert float(np.linalg.norm(vec)) == pytest.approx(1.0, abs=1e-2)
    vs.close()
    store.close()


def test_cache_reuses_vectors_across_homes(records, tmp_path: Path) -> None:
    sample = [r for r in records.values() if r.abstract][10:13]
    cache = EmbeddingCache(tmp_path / "cache.sqlite3")
    first = VectorStore(tmp_path / "a" / "vectors").embed_pending(
        _mini_store(tmp_path / "a", sample).iter_records(0), cache=cache)
    second = VectorStore(tmp_path / "b" / "vectors").embed_pending(
        _mini_store(tmp_path / "b", sample).iter_records(0), cache=cache)
    assert (first.embedded, second.embedded, second.from_cache) == (3, 0, 3)


def test_provider_is_unavailable_without_vectors_and_search_stays_lexical(indexed_home: Path, tmp_path: Path) -> None:
    provider = SemanticProvider(tmp_path / "no-vectors")
    assert isinstance(provider, ProviderProtocol)
    assert not provider.available()
    assert provider.query_candidates("turbine blade cooling", 10) == []
    service = SearchService(Settings().with_home(indexed_home), semantic=provider)
    resp = service.search(SearchRequest(q="turbine", mode="hybrid"))
    assert resp.mode == "lexical" and resp.total > 0


def test_provider_finds_records_by_meaning(sem_home: Path, records) -> None:
    provider = SemanticProvider(Settings().with_home(sem_home).vectors_dir)
    assert provider.available() and provider.count() == len(load_bundle())
    hits = provider.query_candidates("spacecraft heat shield for atmospheric reentry", 10)
    assert len(hits) == 10
    assert [s for _, s in hits] == sorted((s for _, s in hits), reverse=True)
    text = " ".join(f"{records[r].title} {records[r].abstract or ''}".lower() for r, _ in hits)
    assert any(w in text for w in ("reentry", "re-entry", "entry", "heat shield", "ablat", "thermal protection"))


def test_hybrid_keeps_phrases_fields_and_filters_strict(sem_home: Path, records) -> None:
    settings = Settings().with_home(sem_home)
    service = SearchService(settings, semantic=SemanticProvider(settings.vectors_dir))
    resp = service.search(SearchRequest(q='"wind tunnel" noise', mode="hybrid", per_page=100))
    assert resp.mode == "hybrid" and resp.results
    assert all(contains_phrase(records[h.id], "wind tunnel") for h in resp.results)

    resp = service.search(SearchRequest(q="nuclear reactor safety", mode="hybrid", per_page=100,
                                        source="ntrs", year_from=1960, year_to=1990))
    assert resp.results
    for h in resp.results:
        assert h.source == "ntrs" and h.year is not None and 1960 <= h.year <= 1990

    resp = service.search(SearchRequest(q="title:propeller acoustics", mode="hybrid", per_page=100))
    assert resp.results
    stem = stem_tokens("propeller")[0]  # the field matches stemmed words ("propel...")
    assert all(stem in stem_tokens(records[h.id].title) for h in resp.results)


def test_semantic_mode_ranks_by_meaning(sem_home: Path) -> None:
    settings = Settings().with_home(sem_home)
    provider = SemanticProvider(settings.vectors_dir)
    service = SearchService(settings, semantic=provider)
    resp = service.search(SearchRequest(q="solar panels on satellites", mode="semantic", per_page=10))
    assert resp.mode == "semantic"
    assert [h.id for h in resp.results] == [r for r, _ in provider.query_candidates("solar panels on satellites", 10)]
