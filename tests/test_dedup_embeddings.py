"""The optional embedding rule, with SYNTHETIC vectors written through the semantic stage's own
vector store (the rule's logic is under test, not the model): near-identical vectors merge records
that both have real abstracts, and nothing else."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from searchnasa.dedup import cluster_of, parse_config, run_dedup
from searchnasa.importer import import_paths
from searchnasa.records import Record
from searchnasa.semantic.embedder import DIM
from searchnasa.semantic.vectors import open_vectors
from searchnasa.store import Store, StoredItem

FIXTURE = Path(__file__).parent / "fixtures" / "crosslisted"


def _unit(seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal(DIM).astype(np.float32)
    return v / np.linalg.norm(v)


@pytest.fixture
def store_with_vectors(tmp_store: Store, tmp_home: Path) -> tuple[Store, Path]:
    import_paths(tmp_store, [FIXTURE / "osti_api.json"], "osti-api")
    short = Record(id="osti:synthetic-short", source="osti", source_id="synthetic-short",
                   title="SYNTHETIC record with a short abstract", abstract="Too short to judge.", year=1999)
    tmp_store.upsert([StoredItem(short, "records-jsonl", short.model_dump(mode="json"))])
    base = _unit(1)
    near = base + 0.1 * _unit(2)
    near /= np.linalg.norm(near)
    vectors_dir = tmp_home / "vectors"
    vs = open_vectors(vectors_dir)
    vs.put_many([
        ("osti:9893", "k1", base),             # long abstract
        ("osti:1442457", "k2", near),          # long abstract, cosine ~0.995 with osti:9893
        ("osti:synthetic-short", "k3", base),  # identical vector, but no real abstract
        ("osti:1442479", "k4", _unit(3)),      # unrelated
    ])
    vs.close()
    return tmp_store, vectors_dir


def test_near_identical_embeddings_merge(store_with_vectors: tuple[Store, Path]) -> None:
    store, vectors_dir = store_with_vectors
    report = run_dedup(store, vectors_dir=vectors_dir)
    assert report.embeddings_used
    cluster = cluster_of(store, "osti:9893")
    assert cluster is not None and set(cluster.member_ids) == {"osti:9893", "osti:1442457"}
    assert cluster.reasons[0].rule == "embedding"
    assert cluster.reasons[0].text.startswith("near-identical abstracts (cosine 0.99")
    assert cluster_of(store, "osti:synthetic-short") is None
    assert cluster_of(store, "osti:1442479") is None


def test_embedding_rule_can_be_switched_off(store_with_vectors: tuple[Store, Path]) -> None:
    store, vectors_dir = store_with_vectors
    report = run_dedup(store, parse_config("[embeddings]\nenabled = false\n"), vectors_dir=vectors_dir)
    assert not report.embeddings_used
    assert cluster_of(store, "osti:9893") is None


def test_threshold_is_honoured(store_with_vectors: tuple[Store, Path]) -> None:
    store, vectors_dir = store_with_vectors
    run_dedup(store, parse_config("[embeddings]\nthreshold = 1.0\n"), vectors_dir=vectors_dir)
    assert cluster_of(store, "osti:9893") is None


def test_without_vectors_the_rule_is_skipped(tmp_store: Store, tmp_home: Path) -> None:
    import_paths(tmp_store, [FIXTURE / "osti_api.json"], "osti-api")
    report = run_dedup(tmp_store, vectors_dir=tmp_home / "vectors")
    assert not report.embeddings_used
    assert not (tmp_home / "vectors").exists()  # dedup never creates an empty vector store
