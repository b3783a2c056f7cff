"""The optional embedding rule, with SYNTHETIC vectors written through the semantic stage's own
vector store (the rule's logic is under test, not the model): near-identical vectors merge records
that both have real abstracts, and nothing else."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from searchnasa.dedup import cluster_of, parse_config, run_dedup
from searchnasa.ingest.importer import import_paths
from searchnasa.records import Record
from searchnasa.semantic.model import DIM
from searchnasa.semantic.vectors import open_vectors
from searchnasa.store import Store, StoredItem

FIXTURE = Path(__file__).parent / "fixtures" / "crosslisted"


def _unit(seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal(DIM).astype(np.float32)
    return v / np.linalg.norm(v)


def _synthetic(rid: str, title: str, abstract: str, year: int | None = 1999) -> Record:
    return Record(id=rid, source=rid.split(":")[0], source_id=rid.split(":")[1],  # type: ignore[arg-type]
                  title=title, abstract=abstract, year=year)


LONG = "SYNTHETIC abstract. " + "Measurements of a boundary layer over a flat plate at several Mach numbers. " * 4


@pytest.fixture
def store_with_vectors(tmp_store: Store, tmp_home: Path) -> tuple[Store, Path]:
    """SYNTHETIC records and vectors: the rule's logic is under test, not the model."""
    import_paths(tmp_store, [FIXTURE / "osti_api.json"], "osti-api")
    records = [
        _synthetic("ntrs:synthetic-a", "SYNTHETIC boundary layer report", LONG),
        _synthetic("osti:synthetic-b", "SYNTHETIC flat plate boundary layer study", LONG, year=2000),
        _synthetic("osti:synthetic-short", "SYNTHETIC record with a short abstract", "Too short to judge."),
        _synthetic("osti:synthetic-late", "SYNTHETIC boundary layer report, revisited", LONG, year=2009),
    ]
    tmp_store.upsert([StoredItem(r, "records-jsonl", r.model_dump(mode="json")) for r in records])
    base = _unit(1)
    near = base + 0.1 * _unit(2)
    near /= np.linalg.norm(near)
    vectors_dir = tmp_home / "vectors"
    vs = open_vectors(vectors_dir)
    vs.put_many([
        ("ntrs:synthetic-a", "k1", base),
        ("osti:synthetic-b", "k2", near),           # cosine ~0.995 with a, one year later
        ("osti:synthetic-short", "k3", base),       # identical vector, but no real abstract
        ("osti:synthetic-late", "k4", base),        # identical vector, ten years later
        ("osti:1442479", "k5", _unit(3)),           # unrelated
    ])
    vs.close()
    return tmp_store, vectors_dir


def test_near_identical_embeddings_merge(store_with_vectors: tuple[Store, Path]) -> None:
    store, vectors_dir = store_with_vectors
    report = run_dedup(store, vectors_dir=vectors_dir)
    assert report.embeddings_used
    cluster = cluster_of(store, "ntrs:synthetic-a")
    assert cluster is not None and set(cluster.member_ids) == {"ntrs:synthetic-a", "osti:synthetic-b"}
    assert cluster.reasons[0].rule == "embedding"
    assert cluster.reasons[0].text.startswith("near-identical abstracts (cosine 0.99")
    assert cluster_of(store, "osti:synthetic-short") is None
    assert cluster_of(store, "osti:synthetic-late") is None
    assert cluster_of(store, "osti:1442479") is None


def test_embedding_rule_can_be_switched_off(store_with_vectors: tuple[Store, Path]) -> None:
    store, vectors_dir = store_with_vectors
    report = run_dedup(store, parse_config("[embeddings]\nenabled = false\n"), vectors_dir=vectors_dir)
    assert not report.embeddings_used
    assert cluster_of(store, "ntrs:synthetic-a") is None


def test_threshold_is_honoured(store_with_vectors: tuple[Store, Path]) -> None:
    store, vectors_dir = store_with_vectors
    run_dedup(store, parse_config("[embeddings]\nthreshold = 1.0\n"), vectors_dir=vectors_dir)
    assert cluster_of(store, "ntrs:synthetic-a") is None


def test_without_vectors_the_rule_is_skipped(tmp_store: Store, tmp_home: Path) -> None:
    import_paths(tmp_store, [FIXTURE / "osti_api.json"], "osti-api")
    report = run_dedup(tmp_store, vectors_dir=tmp_home / "vectors")
    assert not report.embeddings_used
    assert not (tmp_home / "vectors").exists()  # dedup never creates an empty vector store


# -- the guards, on real titles from the sample ------------------------------------------------
@pytest.mark.parametrize("a, b", [
    ("The Nimbus 6 data catalog. Volume 10: 1 January - 28 February 1977, data orbits 7620-8409",
     "The Nimbus 6 data catalog. Volume 11: 1 March - 30 April 1977, data orbits 8410 through 9226"),
    ("Laboratory Directed Research & Development: FY23 Annual Report",
     "RESEARCH Laboratory Directed Research & Development FY24 Annual Report"),
    ("Scale-4 Analysis of Pressurized Water Reactor Critical Configurations: Volume 3-Surry Unit 1 Cycle 2",
     "Scale-4 Analysis of Pressurized Water Reactor Critical Configurations: Volume 2-Sequoyah Unit 2 Cycle 3"),
])
def test_series_titles_are_recognized(a: str, b: str) -> None:
    from searchnasa.dedup.vectors_rule import series_titles

    assert series_titles(a, b)


@pytest.mark.parametrize("a, b", [
    ("An active nutation damper for spacecraft", "An active nutation damper for spacecraft"),
    ("Advanced Fabrication Techniques of Metal Hydrides for Science and Technology Applications (Abbreviated Final Report)",
     "Advanced Fabrication Techniques of Metal Hydrides for Science and Technology Applications (Full Technical Report)"),
])
def test_one_work_titles_are_not_a_series(a: str, b: str) -> None:
    from searchnasa.dedup.vectors_rule import series_titles

    assert not series_titles(a, b)


def test_real_sample_vectors(sample_home: Path, tmp_path: Path) -> None:
    """The bundled sample's real embeddings: the guards keep series issues apart at the default
    threshold, and a pair only embeddings can see (no authors, no identifiers) is merged."""
    import shutil

    from searchnasa.semantic import seed_from_bundle
    from searchnasa.settings import Settings
    from searchnasa.store import open_store

    shutil.copy2(sample_home / "store.sqlite3", tmp_path / "store.sqlite3")
    settings = Settings().with_home(tmp_path)
    assert seed_from_bundle(settings) > 6000
    store = open_store(tmp_path)
    report = run_dedup(store, vectors_dir=settings.vectors_dir)
    assert report.embeddings_used
    twice = cluster_of(store, "ntrs:19780007200")  # "An active nutation damper for spacecraft", 1977, twice
    assert twice is not None and "ntrs:19780011096" in twice.member_ids
    assert twice.reasons[0].rule == "embedding"
    for series in ("ntrs:19780011788",   # Nimbus 6 data catalog vol. 10 (vol. 11: cosine 0.991)
                   "osti:2203070",       # 2022 Annual Site Environmental Report (2023, 2024 editions: 0.998)
                   "osti:885646",        # Scale-4 analysis vol. 3 (vol. 2: 0.985, other report number)
                   "osti:1898347"):      # DARHT capabilities 2022 (2025 edition, same title)
        cluster = cluster_of(store, series)
        assert cluster is None or all(r.rule != "embedding" for r in cluster.reasons), series
    store.close()
