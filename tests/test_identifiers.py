"""Identifier-aware lookup on real report and contract numbers from the bundled sample."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from searchnasa.store import identifiers
from searchnasa.store.identifiers import build_identifier_table, lookup, normalize_number, recognize
from searchnasa.ingest.importer import import_paths
from searchnasa.store import Store, open_store

FIXTURE = Path(__file__).parent / "fixtures" / "crosslisted"


@pytest.fixture(scope="module")
def store(sample_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Store:
    home = tmp_path_factory.mktemp("ident_home")
    shutil.copy2(sample_home / "store.sqlite3", home / "store.sqlite3")
    s = open_store(home)
    assert build_identifier_table(s) == s.count()
    yield s
    s.close()


@pytest.mark.parametrize("typed, kind, expected", [
    ("ORNL/TM-2005/102", "report", "osti:885982"),
    ("ornl tm 2005 102", "report", "osti:885982"),
    ("ORNL-TM-2005-102", "report", "osti:885982"),
    ("NACA-RM-L6L09", "report", "ntrs:19930085761"),
    ("naca rm l6l09", "report", "ntrs:19930085761"),
    ("SLAC-PUB-10931", "report", "osti:1442479"),
    ("10.1103/PhysRevD.72.023002", "doi", "osti:1442457"),
    ("https://doi.org/10.1103/physrevd.72.023002", "doi", "osti:1442457"),
    ("osti:885982", "id", "osti:885982"),
    ("https://ntrs.nasa.gov/citations/19930085761", "id", "ntrs:19930085761"),
    ("19930085761", "id", "ntrs:19930085761"),
])
def test_lookup_real_identifiers(store: Store, typed: str, kind: str, expected: str) -> None:
    match = lookup(store, typed)
    assert match is not None and match.kind == kind
    assert expected in match.record_ids


def test_contract_number_finds_all_records(store: Store) -> None:
    match = lookup(store, "DE-AC05-00OR22725")
    assert match is not None and match.kind == "contract"
    holders = [r.id for _, r in store.iter_records() if "DE-AC05-00OR22725" in r.identifiers.contract_numbers]
    assert len(holders) > 5 and sorted(match.record_ids) == sorted(holders)
    assert match.label == "contract number DE-AC05-00OR22725"


@pytest.mark.parametrize("text", ["heat transfer", "mars", "F-16 wing flutter", "", "x" * 200, "1984",
                                  "NASA-TM-0000000-nonexistent", "ntrs:1"])
def test_ordinary_text_and_unknown_numbers_find_nothing(store: Store, text: str) -> None:
    assert lookup(store, text) is None


def test_packed_contract_numbers_are_split(store: Store) -> None:
    """osti:1562041 holds "AC02-09CH11466, SC0011810" in one field: both numbers find it."""
    for number in ("AC02-09CH11466", "SC0011810"):
        match = lookup(store, number)
        assert match is not None and "osti:1562041" in match.record_ids


def test_recognize_shapes() -> None:
    assert recognize("NASA TM 2005 213456").kind == "number"  # known prefix with spaces
    assert recognize("Apollo 11 mission") is None  # spaces without a report prefix: text
    assert recognize("SAND2019-1234").norm == "SAND20191234"
    assert recognize("LA-UR-19-12345").norm == "LAUR1912345"
    assert recognize("doi:10.2172/9893").kind == "doi"
    assert recognize("OSTI:9893").value == "osti:9893"
    assert normalize_number("ORNL/TM--2005/102") == normalize_number("ornl tm 2005 102")


def test_table_is_incremental(tmp_store: Store) -> None:
    import_paths(tmp_store, [FIXTURE / "osti_api.json"], "osti-api")
    assert build_identifier_table(tmp_store) == 3
    assert build_identifier_table(tmp_store) == 0
    assert lookup(tmp_store, "SLAC AP 118") is None or lookup(tmp_store, "SLAC AP 118").record_ids == ["osti:9893"]
    assert lookup(tmp_store, "SLAC-AP-118").record_ids == ["osti:9893"]
    import_paths(tmp_store, [FIXTURE / "ntrs_api_copies.json"], "ntrs-api")
    assert build_identifier_table(tmp_store) == 3
    assert lookup(tmp_store, "SLAC-AP-118").record_ids == ["ntrs:99000000002", "osti:9893"]


def test_store_without_table_finds_no_numbers(tmp_store: Store) -> None:
    import_paths(tmp_store, [FIXTURE / "osti_api.json"], "osti-api")
    assert not identifiers.table_exists(tmp_store)
    assert lookup(tmp_store, "SLAC-AP-118") is None
    assert lookup(tmp_store, "osti:9893").record_ids == ["osti:9893"]
