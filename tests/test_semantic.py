"""Embeddings, their storage, the vector index and the semantic provider, on real data.

Vectors come from the bundled sample embeddings (real all-MiniLM-L6-v2 vectors of real records);
only a handful of texts are embedded afresh, so the model is exercised without slowing the suite.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from search_util import contains_phrase
from semantic_util import semantic_home_from

from searchnasa.index.schema import stem_tokens
from searchnasa.records import Record
from searchnasa.search.schemas import SearchRequest
from searchnasa.search.protocols import SemanticProvider as ProviderProtocol
from searchnasa.search.service import SearchService
from searchnasa.semantic.exact import ExactIndex, recall_at_k
from searchnasa.semantic.hnsw import HnswIndex
from searchnasa.semantic.bundle import dequantize, load_bundle, quantize
from searchnasa.semantic.embedder import get_embedder
from searchnasa.semantic.model import record_text
from searchnasa.semantic.text_keys import text_key
from searchnasa.semantic.provider import VectorProvider
from searchnasa.semantic.vectors import EmbeddingCache, VectorStore
from searchnasa.settings import Settings
from searchnasa.store import StoredItem, open_store


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
    # the graph alone, no re-ranking: each vector quantized to int8 with its own scale (ann.to_int8)
    recall = recall_at_k(exact, hnsw, queries, k=10)
    assert recall >= 0.98, recall
    # usearch quantizing the same floats itself (round(127 x)) stops near 0.957: ours is finer
    from usearch.index import Index

    theirs = Index(ndim=matrix.shape[1], metric="cos", dtype="i8", connectivity=16, expansion_add=128,
                   expansion_search=96)
    theirs.add(np.arange(len(ids), dtype=np.uint64), np.asarray(matrix, dtype=np.float32)[np.argsort(
        np.array([r.encode() for r in ids]), kind="stable")], threads=1)
    usearch_q = sum(len({int(k) for k in theirs.search(q, 10).keys}
                        & set(hnsw.keys_of([r for r, _ in exact.search(q, 10)]).values())) for q in queries)
    assert usearch_q / (10 * len(queries)) < recall
    # the similarities HNSW reports are the cosines, within int8 rounding (~1e-4)
    top_exact = exact.search(queries[0], 5)
    top_hnsw = dict(hnsw.search(queries[0], 5))
    assert set(top_hnsw) & {rid for rid, _ in top_exact}
    for rid, sim in top_exact:
        if rid in top_hnsw:
            assert abs(top_hnsw[rid] - sim) < 0.001


def test_ivfpq_recall_against_exact_on_real_embeddings(bundle, tmp_path: Path) -> None:
    """IVF-PQ picks candidates by 48-byte codes and re-ranks them by their int8 rows: recall@10 of
    held-out real vectors (queries at the distances real ones have) against exact search."""
    from searchnasa.semantic.ann import build_from_store, load_index
    from searchnasa.semantic.saved import saved_kind
    from searchnasa.semantic.ivfpq import FAISS_NAME, IvfPqIndex

    rng = np.random.default_rng(11)
    held = rng.choice(len(bundle.ids), 200, replace=False)
    keep = np.setdiff1d(np.arange(len(bundle.ids)), held)
    ids, matrix = [bundle.ids[i] for i in keep], bundle.matrix[keep]
    vs = VectorStore(tmp_path)
    vs.put_many([(rid, f"k{i}", matrix[i]) for i, rid in enumerate(ids)])
    index = build_from_store(vs.conn, tmp_path, uid=vs.uid(), kind="ivfpq")
    vs.close()
    assert isinstance(index, IvfPqIndex) and saved_kind(tmp_path) == "ivfpq"
    assert load_index(tmp_path, "hnsw") is None  # another kind is not served as HNSW
    exact = ExactIndex(ids, matrix)
    queries = bundle.matrix[held]
    assert recall_at_k(exact, index, queries, k=10) >= 0.97
    assert recall_at_k(exact, index, queries[:50], k=200) >= 0.9  # hybrid's 200 semantic candidates
    # what stays in RAM is each vector's 48-byte code and its 8-byte row, besides the centroids (a
    # fixed ~0.6 MB): far less than the 384-byte vectors, which stay on disk
    centroids = 4 * (index.index.pq.M * index.index.pq.ksub * index.index.pq.dsub + index.params.nlist * 384)
    per_vector = ((index.path / FAISS_NAME).stat().st_size - centroids) / len(ids)
    assert 56 <= per_vector < 64, per_vector
    # cosines are those of the int8 rows, within ~1e-4 of float; vectors come back by id and hash
    for rid, sim in index.search(queries[0], 5):
        assert abs(sim - float(matrix[ids.index(rid)] @ queries[0])) < 0.001
    got = index.vectors_for([ids[7], "ntrs:no-such-record"])
    assert list(got) == [ids[7]] and float(got[ids[7]] @ matrix[7]) > 0.999
    with pytest.raises(IndexError):
        index.vectors_at(np.array([len(ids)]))


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
    assert loaded is not None and loaded.version == "7"
    assert isinstance(loaded.ids, np.memmap)  # ids not copied to RAM
    np.testing.assert_array_equal(loaded.vectors_at(np.array([4, 0, 499])), built.vectors_at(np.array([4, 0, 499])))
    with pytest.raises(IndexError):
        loaded.vectors_at(np.array([500]))
    assert [r for r, _ in loaded.search(matrix[10], 5)] == [r for r, _ in built.search(matrix[10], 5)]
    # ids <-> keys through the sorted id array, and the graph gives the vectors back
    keys = loaded.keys_of([ids[3], ids[400], "ntrs:no-such-record", "x" * 300, ""])
    assert sorted(keys) == sorted([ids[3], ids[400]])
    assert loaded.ids_of([keys[ids[3]]]) == [ids[3]]
    vecs = loaded.vectors_for([ids[3], "ntrs:no-such-record"])
    assert list(vecs) == [ids[3]] and float(vecs[ids[3]] @ matrix[3]) > 0.999
    # saving again replaces the folder ann.json points at and removes the old one
    first = loaded.path
    built.save(tmp_path, version="9")
    assert HnswIndex.load(tmp_path).version == "9" and not first.exists()


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
    provider = VectorProvider(tmp_path / "no-vectors")
    assert isinstance(provider, ProviderProtocol)
    assert not provider.available()
    assert provider.query_candidates("turbine blade cooling", 10) == []
    service = SearchService(Settings().with_home(indexed_home), semantic=provider)
    resp = service.search(SearchRequest(q="turbine", mode="hybrid"))
    assert resp.mode == "lexical" and resp.total > 0


def test_provider_finds_records_by_meaning(sem_home: Path, records) -> None:
    provider = VectorProvider(Settings().with_home(sem_home).vectors_dir)
    assert provider.available() and provider.count() == len(load_bundle())
    hits = provider.query_candidates("spacecraft heat shield for atmospheric reentry", 10)
    assert len(hits) == 10
    assert [s for _, s in hits] == sorted((s for _, s in hits), reverse=True)
    text = " ".join(f"{records[r].title} {records[r].abstract or ''}".lower() for r, _ in hits)
    assert any(w in text for w in ("reentry", "re-entry", "entry", "heat shield", "ablat", "thermal protection"))


def test_hybrid_keeps_phrases_fields_and_filters_strict(sem_home: Path, records) -> None:
    settings = Settings().with_home(sem_home)
    service = SearchService(settings, semantic=VectorProvider(settings.vectors_dir))
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
    provider = VectorProvider(settings.vectors_dir)
    service = SearchService(settings, semantic=provider)
    resp = service.search(SearchRequest(q="solar panels on satellites", mode="semantic", per_page=10))
    assert resp.mode == "semantic"
    assert [h.id for h in resp.results] == [r for r, _ in provider.query_candidates("solar panels on satellites", 10)]


# -- the provider over a saved index (what homes above EXACT_BELOW vectors get): each test runs
# over both kinds, the HNSW graph and IVF-PQ ------------------------------------------------------

HNSW_BELOW = 1000  # the sample's 6,514 vectors then take the saved-index path, as 1M+ homes do


@pytest.fixture(scope="module", params=["hnsw", "ivfpq"])
def ann_kind(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture(scope="module")
def ann_home(ann_kind: str, sem_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the sample home's vectors whose provider serves a saved index of ``ann_kind``."""
    import shutil

    home = tmp_path_factory.mktemp(f"{ann_kind}_home")
    shutil.copy2(sem_home / "store.sqlite3", home / "store.sqlite3")
    (home / "index").symlink_to(sem_home / "index")
    src = VectorStore(sem_home / "vectors")
    (home / "vectors").mkdir()
    dst = __import__("sqlite3").connect(home / "vectors" / VectorStore.FILENAME)
    src.conn.backup(dst)
    dst.close()
    src.close()
    return home


def _reloading(vectors_dir: Path, kind: str, **kw) -> VectorProvider:
    return VectorProvider(vectors_dir, exact_below=HNSW_BELOW, index_kind=kind, **kw)


def _unit(v: np.ndarray) -> np.ndarray:
    return (v / np.linalg.norm(v)).astype(np.float32)


def test_saved_index_provider_matches_exact_search_without_holding_vectors(sem_home: Path, ann_kind: str,
                                                                         ann_home: Path) -> None:
    exact = VectorProvider(Settings().with_home(sem_home).vectors_dir)
    approx = _reloading(ann_home / "vectors", ann_kind)
    assert approx.count() == exact.count() == len(load_bundle())
    assert approx._exact is None and approx._ann is not None
    assert approx._ann.kind == ann_kind and isinstance(approx._ann.ids, np.memmap)
    # the graph is the only copy of the vectors; IVF-PQ keeps its int8 rows on disk, read per row
    rows = list((ann_home / "vectors").glob("ann-*/rows.npy"))
    assert (not rows) if ann_kind == "hnsw" else len(approx._ann.rows) == len(rows) * approx.count()
    overlap = []
    for q in ("spacecraft heat shield for atmospheric reentry", "wind tunnel noise", "nuclear reactor safety",
              "solar panels on satellites", "composite material fatigue"):
        want = exact.query_candidates(q, 20)
        got = approx.query_candidates(q, 20)
        overlap.append(len({r for r, _ in want} & {r for r, _ in got}) / len(want))
        want_sim = dict(want)
        for rid, sim in got:
            if rid in want_sim:
                assert abs(sim - want_sim[rid]) < 0.001  # float query against int8 vectors: within ~1e-4
    assert min(overlap) >= 0.9 and sum(overlap) / len(overlap) >= 0.97, overlap
    ids = [r for r, _ in exact.query_candidates("wind tunnel noise", 50)]
    ev, av = exact.vectors_for(ids), approx.vectors_for(ids + ["ntrs:no-such-record"])
    assert list(av) == ids
    assert min(float(ev[r] @ av[r]) for r in ids) > 0.999
    # a second process opens the saved index instead of building it again
    again = _reloading(ann_home / "vectors", ann_kind)
    assert again.count() == approx.count() and again._ann.path == approx._ann.path


def test_hybrid_and_related_are_the_same_over_the_saved_index(sem_home: Path, ann_kind: str,
                                                             ann_home: Path) -> None:
    from searchnasa.search.related import find_related

    exact_service = SearchService(Settings().with_home(sem_home),
                                  semantic=VectorProvider(Settings().with_home(sem_home).vectors_dir))
    hnsw_service = SearchService(Settings().with_home(ann_home),
                                 semantic=_reloading(ann_home / "vectors", ann_kind))
    same = 0
    queries = ["heat shield reentry", "turbine blade cooling", "lunar regolith", "rocket engine combustion",
               "radiation shielding for astronauts"]
    for q in queries:
        a = [h.id for h in exact_service.search(SearchRequest(q=q, mode="hybrid", per_page=10)).results]
        b = [h.id for h in hnsw_service.search(SearchRequest(q=q, mode="hybrid", per_page=10)).results]
        assert len(set(a) & set(b)) >= 9, (q, a, b)
        same += a == b
    assert same >= 3
    seed = exact_service.search(SearchRequest(q="heat shield reentry", mode="lexical", per_page=1)).results[0].id
    a = [r.id for r in find_related(exact_service, [seed], [], 10)]
    b = [r.id for r in find_related(hnsw_service, [seed], [], 10)]
    assert len(set(a) & set(b)) >= 9, (a, b)


def test_saved_index_provider_finds_vectors_written_after_the_index(ann_kind: str, ann_home: Path, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    import searchnasa.semantic.provider as provider_mod

    monkeypatch.setattr(provider_mod, "RELOAD_CHECK_SECONDS", 0.0)
    vdir = tmp_path / "vectors"
    vdir.mkdir()
    dst = __import__("sqlite3").connect(vdir / VectorStore.FILENAME)
    src = __import__("sqlite3").connect(ann_home / "vectors" / VectorStore.FILENAME)
    src.backup(dst)
    src.close()
    dst.close()
    provider = _reloading(vdir, ann_kind)
    n = provider.count()
    built = provider._ann.path
    rng = np.random.default_rng(3)
    fresh = _unit(rng.normal(size=384))
    vs = VectorStore(vdir)
    moved_id = provider.nearest(_unit(rng.normal(size=384)), 1)[0][0]
    old_vec = provider.vectors_for([moved_id])[moved_id]
    moved_to = _unit(rng.normal(size=384))
    vs.put_many([("ntrs:brand-new", "k-new", fresh), (moved_id, "k-moved", moved_to)])
    # a new record is found at once; a changed one is found by its new vector, not its old one
    assert provider.count() == n + 1
    assert provider.nearest(fresh, 3)[0] == ("ntrs:brand-new", pytest.approx(1.0, abs=1e-3))
    assert provider.nearest(moved_to, 1)[0][0] == moved_id
    assert moved_id not in [r for r, _ in provider.nearest(old_vec, 20)]
    assert float(provider.vectors_for([moved_id])[moved_id] @ moved_to) > 0.999
    assert provider._ann.path == built and len(provider._delta) == 2  # served, not rebuilt
    # past the delta limit the index is rebuilt (streaming) and saved, and the delta empties
    eager = _reloading(vdir, ann_kind, delta_limit=1)
    assert eager.count() == n + 1
    assert eager._ann.path != built and len(eager._delta) == 0
    assert eager.nearest(fresh, 1)[0][0] == "ntrs:brand-new"
    assert eager.nearest(moved_to, 1)[0][0] == moved_id
    # the first provider picks the rebuilt index up on its next reload
    vs.put_many([("ntrs:another", "k-another", _unit(rng.normal(size=384)))])
    vs.close()
    assert provider.count() == n + 2
    assert provider._ann.path == eager._ann.path and len(provider._delta) == 1


def test_an_index_from_another_vector_store_is_not_served(ann_kind: str, ann_home: Path, tmp_path: Path) -> None:
    import shutil

    provider = _reloading(ann_home / "vectors", ann_kind)
    assert provider.count() > HNSW_BELOW
    # the same folder layout, but a re-created vector store (new identity) with 1,200 vectors
    vdir = tmp_path / "vectors"
    shutil.copytree(provider._ann.path, vdir / provider._ann.path.name)
    shutil.copy2(ann_home / "vectors" / "ann.json", vdir / "ann.json")
    bundle = load_bundle()
    vs = VectorStore(vdir)
    vs.put_many([(rid, f"k{i}", bundle.matrix[i]) for i, rid in enumerate(bundle.ids[:1200])])
    vs.close()
    other = _reloading(vdir, ann_kind)
    assert other.count() == 1200
    assert other.nearest(bundle.matrix[5], 1)[0][0] == bundle.ids[5]


def test_embed_leaves_the_serving_index_built(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``searchnasa embed`` builds the HNSW index a server would otherwise build on its first query
    (minutes at millions of vectors), and a rerun with nothing new reuses it."""
    from typer.testing import CliRunner

    import searchnasa.cli  # noqa: F401  (registers every command)
    from searchnasa.cli.app import app
    from searchnasa.semantic import exact

    home = tmp_path / "home"
    runner = CliRunner()
    assert runner.invoke(app, ["load-sample", "--home", str(home)]).exit_code == 0
    monkeypatch.setattr(exact, "EXACT_BELOW", 1000)  # the sample (6,514) counts as "large" here
    first = runner.invoke(app, ["embed", "--no-cache", "--home", str(home)], catch_exceptions=False)
    assert first.exit_code == 0, first.output
    assert "HNSW index ready" in first.output
    vdir = Settings().with_home(home).vectors_dir
    built = sorted(p.name for p in vdir.glob("ann-*"))
    assert len(built) == 1
    index = HnswIndex.load(vdir)
    assert index is not None and len(index) == VectorStore(vdir).count()
    again = runner.invoke(app, ["embed", "--no-cache", "--home", str(home)], catch_exceptions=False)
    assert again.exit_code == 0 and "HNSW index ready" in again.output
    assert sorted(p.name for p in vdir.glob("ann-*")) == built  # reused, not rebuilt
    # the compact kind on request; later runs (and servers) keep serving the kind last built
    import subprocess
    import sys

    bad = subprocess.run([str(Path(sys.executable).parent / "searchnasa"), "embed", "--vector-index", "annoy",
                          "--home", str(home)], capture_output=True, text=True, timeout=120)
    assert bad.returncode != 0 and "unknown vector index 'annoy'" in bad.stderr and "Traceback" not in bad.stderr
    compact = runner.invoke(app, ["embed", "--no-cache", "--vector-index", "ivfpq", "--home", str(home)],
                            catch_exceptions=False)
    assert compact.exit_code == 0 and "IVF-PQ index ready" in compact.output, compact.output
    built = sorted(p.name for p in vdir.glob("ann-*"))
    assert len(built) == 1 and (vdir / built[0] / "ivfpq.faiss").is_file()
    again = runner.invoke(app, ["embed", "--no-cache", "--home", str(home)], catch_exceptions=False)
    assert "IVF-PQ index ready" in again.output and sorted(p.name for p in vdir.glob("ann-*")) == built
    served = VectorProvider(vdir, exact_below=1000)
    assert served.count() == len(index) and served._ann.kind == "ivfpq"

    fresh = tmp_path / "small"  # below the threshold nothing is built: exact search in RAM
    monkeypatch.setattr(exact, "EXACT_BELOW", 50_000)
    assert runner.invoke(app, ["load-sample", "--home", str(fresh)]).exit_code == 0
    small = runner.invoke(app, ["embed", "--no-cache", "--home", str(fresh)], catch_exceptions=False)
    assert "searched exactly" in small.output
    assert not list(Settings().with_home(fresh).vectors_dir.glob("ann-*"))


def test_vectors_written_since_a_version_come_in_id_order_through_the_version_index(tmp_path: Path) -> None:
    """``load_since`` is what a serving process reads on every load: the newer vectors only, found
    through the version index (a plan walking the table in id order read 6.2 GB at 4M vectors)."""
    vs = VectorStore(tmp_path / "vectors")
    rng = np.random.default_rng(3)
    vs.put_many([(f"osti:{i}", f"k{i}", _unit(rng.standard_normal(384))) for i in (5, 1, 3)])
    version = vs.version()
    newer = {f"ntrs:{i}": _unit(rng.standard_normal(384)) for i in (9, 2)}
    vs.put_many([(rid, f"k-{rid}", vec) for rid, vec in newer.items()])
    ids, matrix = vs.load_since(version)
    assert ids == ["ntrs:2", "ntrs:9"]
    for rid, row in zip(ids, matrix):
        assert float(row @ newer[rid]) > 0.999
    assert vs.load_since(vs.version())[0] == []
    plan = " ".join(str(r) for r in vs.conn.execute(
        "EXPLAIN QUERY PLAN SELECT id, vec FROM vectors INDEXED BY vectors_by_version WHERE version > 0"))
    assert "vectors_by_version" in plan
    vs.close()


def test_vectors_and_similarities_by_id_hash_match_those_by_id(sem_home: Path, ann_kind: str, ann_home: Path,
                                                               tmp_path: Path) -> None:
    """The lexical index's ``key`` fast field (``id_key``) names a record's vector as well as its id
    does, in the exact provider and the saved HNSW index (keys.npy)."""
    from searchnasa.index.schema import id_key

    exact = VectorProvider(Settings().with_home(sem_home).vectors_dir)
    approx = _reloading(ann_home / "vectors", ann_kind)
    ids = [r for r, _ in exact.query_candidates("wind tunnel noise", 30)]
    keys = [id_key(r) for r in ids] + [12345]  # one hash no record has
    text = "wind tunnel noise"
    for provider in (exact, approx):
        by_id = provider.similarities(text, ids)
        by_key = provider.similarities_by_key(text, keys)
        assert sorted(by_key) == sorted(id_key(r) for r in by_id)
        for rid, sim in by_id.items():
            assert by_key[id_key(rid)] == pytest.approx(sim, abs=1e-6)
    # a saved index round-trips its hash lookup
    built = HnswIndex.build(ids, np.stack([exact.vectors_for([r])[r] for r in ids]))
    built.save(tmp_path, version="1")
    loaded = HnswIndex.load(tmp_path, version="1")
    assert loaded is not None and isinstance(loaded.keys, np.memmap)
    got = loaded.vectors_for_keys(keys)
    assert len(got) == len(ids) and 12345 not in got
    for rid in ids:
        assert float(got[id_key(rid)] @ loaded.vectors_for([rid])[rid]) > 0.9999


def test_hybrid_ranks_the_same_whether_lexical_hits_are_scored_by_id_or_by_hash(sem_home: Path) -> None:
    """``similarities_by_key`` spares the stored-document reads; it must not change the ranking."""

    class ByIdOnly:  # a provider without the hash method: the service fetches ids
        def __init__(self, inner: VectorProvider) -> None:
            self.inner = inner

        def available(self) -> bool:
            return self.inner.available()

        def query_candidates(self, text: str, k: int, **kw) -> list[tuple[str, float]]:
            return self.inner.query_candidates(text, k, **kw)

        def similarities(self, text: str, ids: list[str]) -> dict[str, float]:
            return self.inner.similarities(text, ids)

        def similarities_by_key(self, text: str, keys: list[int]) -> None:
            return None  # cannot look keys up

    settings = Settings().with_home(sem_home)
    provider = VectorProvider(settings.vectors_dir)
    with_hash = SearchService(settings, semantic=provider)
    by_id = SearchService(settings, semantic=ByIdOnly(provider))
    for q in ("heat shield reentry", "turbine blade cooling", "lunar regolith", "composite fatigue"):
        a = with_hash.search(SearchRequest(q=q, mode="hybrid", per_page=20))
        b = by_id.search(SearchRequest(q=q, mode="hybrid", per_page=20))
        assert a.mode == b.mode == "hybrid"
        assert [h.id for h in a.results] == [h.id for h in b.results] and a.results, q
