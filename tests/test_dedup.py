"""Duplicate clusters on real cross-listed works (see tests/fixtures/crosslisted/README.md) and
on the bundled sample: merged with reasons, not merged on title alone across years, split rules
honoured, incremental runs pick up new records."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from searchnasa.dedup import (
    DedupConfig,
    cluster_of,
    clusters_for,
    load_config,
    parse_config,
    run_dedup,
)
from searchnasa.dedup.normalize import surname, title_key
from searchnasa.errors import BadInput
from searchnasa.ingest.importer import import_paths
from searchnasa.store import Store, open_store

FIXTURE = Path(__file__).parent / "fixtures" / "crosslisted"


def _import(store: Store, name: str, fmt: str) -> None:
    report = import_paths(store, [FIXTURE / name], fmt)
    assert report.skipped == 0, report.problems


@pytest.fixture
def crosslisted(tmp_store: Store) -> Store:
    _import(tmp_store, "osti_api.json", "osti-api")
    _import(tmp_store, "ntrs_api_copies.json", "ntrs-api")
    _import(tmp_store, "title_year_negative.jsonl", "records-jsonl")
    return tmp_store


def _texts(store: Store, rid: str) -> list[str]:
    cluster = cluster_of(store, rid)
    assert cluster is not None, f"{rid} should be in a cluster"
    return [r.text for r in cluster.reasons]


def test_crosslisted_pairs_merge_with_reasons(crosslisted: Store) -> None:
    report = run_dedup(crosslisted)
    assert report.clusters == 3 and report.records_in_clusters == 6
    by_doi = cluster_of(crosslisted, "osti:1442457")
    assert by_doi is not None and set(by_doi.member_ids) == {"osti:1442457", "ntrs:99000000001"}
    assert "same DOI 10.1103/physrevd.72.023002" in _texts(crosslisted, "osti:1442457")
    assert any(t.startswith("same report number SLAC") for t in _texts(crosslisted, "osti:9893"))
    assert set(cluster_of(crosslisted, "ntrs:99000000002").member_ids) == {"osti:9893", "ntrs:99000000002"}
    # no shared identifier: only the title + year + author rule can merge this pair
    title_only = cluster_of(crosslisted, "ntrs:99000000003")
    assert title_only is not None and set(title_only.member_ids) == {"osti:1442479", "ntrs:99000000003"}
    assert [r.rule for r in title_only.reasons] == ["title"]
    assert title_only.reasons[0].text == "same title, year 2005, author Gugliucci"
    also = title_only.also_in("osti:1442479")
    assert also == [{"id": "ntrs:99000000003", "source": "ntrs", "source_label": "NASA NTRS",
                     "url": "https://ntrs.nasa.gov/citations/99000000003"}]
    assert title_only.also_in("ntrs:99000000003")[0]["source_label"] == "DOE OSTI"


def test_alike_titles_with_different_years_do_not_merge(crosslisted: Store) -> None:
    run_dedup(crosslisted)
    a, b = crosslisted.get("osti:1898347"), crosslisted.get("osti:2566414")
    assert title_key(a.title) == title_key(b.title) and a.year != b.year  # the premise of the test
    assert {surname(x.name) for x in a.authors} & {surname(x.name) for x in b.authors}
    assert cluster_of(crosslisted, "osti:1898347") is None
    assert cluster_of(crosslisted, "osti:2566414") is None


def test_split_rule_is_honoured(crosslisted: Store, tmp_home: Path) -> None:
    run_dedup(crosslisted)
    assert cluster_of(crosslisted, "osti:9893") is not None
    (tmp_home / "dedup.toml").write_text(
        '[[split]]\nids = ["osti:9893", "ntrs:99000000002"]\nnote = "test: catalogued apart on purpose"\n')
    config = load_config(None, tmp_home)
    report = run_dedup(crosslisted, config)
    assert report.blocked_by_split >= 1
    assert cluster_of(crosslisted, "osti:9893") is None
    assert cluster_of(crosslisted, "ntrs:99000000002") is None
    assert cluster_of(crosslisted, "osti:1442457") is not None  # other clusters untouched


def test_split_rule_blocks_transitive_merges() -> None:
    """Three copies a-b (DOI) and b-c (title): splitting a from c must keep them apart even via b."""
    from searchnasa.dedup.clustering import _UnionFind

    uf = _UnionFind(parse_config('[[split]]\nids = ["x:a", "x:c"]\n'))
    assert uf.union("x:a", "x:b")
    assert not uf.union("x:b", "x:c")
    assert uf.find("x:a") == uf.find("x:b") != uf.find("x:c")


def test_incremental_run_picks_up_a_new_record(tmp_store: Store) -> None:
    _import(tmp_store, "osti_api.json", "osti-api")
    first = run_dedup(tmp_store)
    assert first.scanned == 3 and first.clusters == 0
    _import(tmp_store, "ntrs_api_copies.json", "ntrs-api")
    second = run_dedup(tmp_store)
    assert second.scanned == 3  # only the new NTRS records were read
    assert second.clusters == 3
    assert cluster_of(tmp_store, "osti:1442457") is not None
    third = run_dedup(tmp_store)
    assert third.scanned == 0 and third.clusters == 3


def test_changed_record_loses_its_old_merge(tmp_store: Store) -> None:
    """A record re-imported without its DOI no longer merges on it (keys and edges are replaced)."""
    import json

    _import(tmp_store, "osti_api.json", "osti-api")
    _import(tmp_store, "ntrs_api_copies.json", "ntrs-api")
    run_dedup(tmp_store)
    doc = json.loads((FIXTURE / "ntrs_api_copies.json").read_text())
    item = doc["results"][0]
    assert item["id"] == 99000000001
    item["publications"][0].pop("doi")
    item["title"] = "Changed title for this test (synthetic edit)"
    changed = tmp_store.path.parent / "changed.json"
    changed.write_text(json.dumps({"results": [item]}))
    import_paths(tmp_store, [changed], "ntrs-api")
    report = run_dedup(tmp_store)
    assert report.scanned == 1
    assert cluster_of(tmp_store, "osti:1442457") is None


def test_sample_clusters_and_bulk_lookup(sample_home: Path, tmp_path: Path) -> None:
    shutil.copy2(sample_home / "store.sqlite3", tmp_path / "store.sqlite3")
    store = open_store(tmp_path)
    report = run_dedup(store)
    assert report.scanned == store.count()
    # real same-DOI pair inside OSTI (journal copy and accepted manuscript)
    c = cluster_of(store, "osti:2001478")
    assert c is not None and "osti:2278635" in c.member_ids
    assert c.reasons[0].text == "same DOI 10.1109/iemdc55163.2023.10238895"
    # NTRS records with one title and year but no authors stay apart (the rule needs an author)
    assert cluster_of(store, "ntrs:19810016476") is None
    ids = [rid for rid, in store.conn.execute("SELECT id FROM records ORDER BY id LIMIT 100")]
    ids += ["osti:2001478", "osti:2278635"]
    bulk = clusters_for(store, ids)
    assert bulk["osti:2001478"].id == bulk["osti:2278635"].id
    assert all(rid in bulk for rid in ("osti:2001478", "osti:2278635"))
    assert clusters_for(store, []) == {}
    store.close()


def test_lookup_before_any_run_finds_nothing(tmp_store: Store) -> None:
    _import(tmp_store, "osti_api.json", "osti-api")
    assert cluster_of(tmp_store, "osti:9893") is None
    assert clusters_for(tmp_store, ["osti:9893"]) == {}


@pytest.mark.parametrize("text, message", [
    ("[[split]]\nids = ['osti:1']\n", "two or more record ids"),
    ("[embeddings]\nthreshold = 3\n", "between 0.5 and 1.0"),
    ("[nonsense]\n", "unknown section"),
    ("ids = [", "not valid TOML"),
])
def test_bad_config_is_a_clear_error(text: str, message: str) -> None:
    with pytest.raises(BadInput, match=message):
        parse_config(text)


def test_config_file_must_exist_when_named(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match="not found"):
        load_config(tmp_path / "missing.toml")
    assert load_config(None, tmp_path) == DedupConfig()


@pytest.mark.parametrize("name, expected", [
    ("Gorham, P. W.", "gorham"), ("Peter W. Gorham", "gorham"), ("Miočinović, P. [Univ. of Hawaii]", "miocinovic"),
    ("John Smith Jr.", "smith"), ("Zhao, Huan [ORNL] (ORCID:0000000249820865)", "zhao"),
])
def test_surnames(name: str, expected: str) -> None:
    assert surname(name) == expected


def test_generic_titles_form_no_key() -> None:
    assert title_key("Quarterly progress report") is None
    assert title_key("Annual Report FY 1985") is None
    assert title_key("Flux averaging devices for the infrared.") == "flux averaging devices for the infrared"


def test_collapse_hits_folds_copies_into_one_card(crosslisted: Store) -> None:
    from searchnasa.search.collapse import collapse_hits
    from searchnasa.search.schemas import SearchHit

    run_dedup(crosslisted)

    def hit(rid: str) -> SearchHit:
        rec = crosslisted.get(rid)
        return SearchHit(id=rid, source=rec.source, source_label=rec.source_label, title=rec.title,
                         title_html=rec.title, abstract=None, snippet_html="", year=rec.year, date_label="",
                         url=rec.url, link_label="")

    page = [hit(i) for i in ("ntrs:99000000001", "osti:1898347", "osti:1442457", "osti:9893")]
    cards, folded = collapse_hits(crosslisted, page)
    assert folded == 1
    assert [c.id for c in cards] == ["ntrs:99000000001", "osti:1898347", "osti:9893"]
    assert cards[0].also_in == [{"id": "osti:1442457", "source": "osti", "source_label": "DOE OSTI",
                                 "url": "https://www.osti.gov/biblio/1442457"}]
    assert cards[1].also_in == []
    assert [a["id"] for a in cards[2].also_in] == ["ntrs:99000000002"]  # the copy is not on this page


def test_dask_run_gives_the_same_clusters(sample_home: Path, tmp_path: Path) -> None:
    """Keys computed by a real local Dask cluster (one worker process) match the in-process run."""
    from searchnasa.batch.cluster import batch_client

    for name in ("local", "dask"):
        (tmp_path / name).mkdir()
        shutil.copy2(sample_home / "store.sqlite3", tmp_path / name / "store.sqlite3")
    local, dask = open_store(tmp_path / "local"), open_store(tmp_path / "dask")
    run_dedup(local)
    with batch_client("processes", workers=1) as client:
        report = run_dedup(dask, client=client, batch_size=1500)
    assert report.scanned == dask.count()
    query = "SELECT record_id, cluster_id, reasons FROM clusters ORDER BY record_id"
    assert dask.conn.execute(query).fetchall() == local.conn.execute(query).fetchall()
    query = "SELECT kind, value_norm, record_id FROM identifiers ORDER BY 1, 2, 3"
    assert dask.conn.execute(query).fetchall() == local.conn.execute(query).fetchall()
    assert int(dask.get_meta("dedup_seq")) == dask.max_seq()
    local.close()
    dask.close()
