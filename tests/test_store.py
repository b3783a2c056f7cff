"""The store on real SQLite files: upsert counts, sequence numbers, richer copies kept, batches and
checkpoints that commit together or not at all, raw payloads kept, clear errors on a bad file."""

from __future__ import annotations

import copy
import json
import sqlite3
from pathlib import Path

import pytest

from searchnasa.errors import NotFound, StoreError
from searchnasa.records import FIDELITY, Record
from searchnasa.ingest.formats import map_item
from searchnasa.store import Store, StoredItem, open_store


@pytest.fixture(scope="module")
def tacoma(raw_dir: Path) -> list[dict]:
    return json.loads((raw_dir / "ntrs-spaceapps-tacoma" / "query-result.json").read_text(encoding="utf-8"))[0]


@pytest.fixture(scope="module")
def hepcrawl(raw_dir: Path) -> list[dict]:
    return [json.loads(p.read_text(encoding="utf-8"))[0] for p in sorted((raw_dir / "osti-hepcrawl").glob("*.json"))]


def item(fmt: str, payload: dict) -> StoredItem:
    return StoredItem(map_item(fmt, payload), fmt, payload, FIDELITY[fmt])


def test_upsert_counts_and_sequence(tmp_store: Store, hepcrawl: list[dict]) -> None:
    first = tmp_store.upsert([item("osti-api", p) for p in hepcrawl])
    assert (first.new, first.changed, first.unchanged) == (5, 0, 0)
    assert tmp_store.max_seq() == 5
    again = tmp_store.upsert([item("osti-api", p) for p in hepcrawl])
    assert (again.new, again.changed, again.unchanged) == (0, 0, 5)
    assert tmp_store.max_seq() == 5 and again.changed_ids == []
    # A real change (the source fixed a title) is one changed record with the next seq number.
    edited = copy.deepcopy(hepcrawl[0])
    edited["title"] = edited["title"] + " (corrected)"
    changed = tmp_store.upsert([item("osti-api", edited)])
    assert (changed.new, changed.changed, changed.changed_ids) == (0, 1, [f"osti:{edited['osti_id']}"])
    assert tmp_store.max_seq() == 6
    assert [(seq, rec.id) for seq, rec in tmp_store.iter_records(since_seq=5)] == [(6, f"osti:{edited['osti_id']}")]
    assert tmp_store.get(f"osti:{edited['osti_id']}").title.endswith("(corrected)")
    assert tmp_store.count() == 5


def test_iter_records_pages_in_seq_order(tmp_store: Store, hepcrawl: list[dict]) -> None:
    for p in hepcrawl:  # one batch each: seq 1..5
        tmp_store.upsert([item("osti-api", p)])
    seen = list(tmp_store.iter_records(batch_size=2))
    assert [s for s, _ in seen] == [1, 2, 3, 4, 5]
    assert [r.source_id for _, r in seen] == [str(p["osti_id"]) for p in hepcrawl]
    assert list(tmp_store.iter_records(since_seq=5)) == []


def test_same_id_twice_in_a_batch_last_copy_wins(tmp_store: Store, hepcrawl: list[dict]) -> None:
    edited = copy.deepcopy(hepcrawl[1])
    edited["title"] = "second copy"
    counts = tmp_store.upsert([item("osti-api", hepcrawl[1]), item("osti-api", edited)])
    assert counts.new == 1 and tmp_store.count() == 1
    assert tmp_store.get(f"osti:{edited['osti_id']}").title == "second copy"


def test_poorer_copy_never_replaces_richer(tmp_store: Store, tacoma: list[dict]) -> None:
    api = tacoma[0]
    # Edited copy: the flattened CSV row a harvester would have written for this real citation.
    row = {"document_id": str(api["id"]), "subjectCategories": api["subjectCategories"][0],
           "title": api["title"], "abstract": api["abstract"], "createDate": api["created"][:10],
           "publicationDate": api["publications"][0]["publicationDate"][:10], "downloads_pdf_url": "",
           "downloads_text_url": "", "center": "CDMS", "copyright": "OTHER", "related": ""}
    tmp_store.upsert([item("ntrs-api", api)])
    rich = tmp_store.get("ntrs:19840031406")
    counts = tmp_store.upsert([item("ntrs-csv", row)])
    assert counts.kept_richer == 1 and counts.changed == 0
    assert tmp_store.get("ntrs:19840031406") == rich
    assert rich.authors  # the API copy has authors, the CSV copy has none
    # The other way round, the richer copy replaces the poorer one.
    other = tmp_store.upsert([item("ntrs-csv", {**row, "document_id": "19870036046"})])
    assert other.new == 1
    assert tmp_store.upsert([item("ntrs-api", tacoma[1])]).changed == 1
    assert tmp_store.get("ntrs:19870036046").authors


def test_raw_payload_kept_compressed(tmp_store: Store, hepcrawl: list[dict]) -> None:
    tmp_store.upsert([item("osti-api", p) for p in hepcrawl])
    raws = {rid: (fmt, raw) for rid, fmt, raw in tmp_store.iter_raw(batch_size=2)}
    assert len(raws) == 5
    for p in hepcrawl:
        assert raws[f"osti:{p['osti_id']}"] == ("osti-api", p)
    stored = tmp_store.conn.execute("SELECT length(raw) FROM records WHERE id = 'osti:1502988'").fetchone()[0]
    big = next(p for p in hepcrawl if p["osti_id"] == "1502988")
    assert stored < len(json.dumps(big, ensure_ascii=False).encode()) / 2  # compressed, not stored as-is


def test_failed_batch_commits_nothing_not_even_its_checkpoint(tmp_store: Store, hepcrawl: list[dict]) -> None:
    good = [item("osti-api", p) for p in hepcrawl[:3]]
    bad = item("osti-api", hepcrawl[3])
    bad.raw = {"not serializable": {1, 2}}  # fails while the batch's transaction is open
    with pytest.raises(TypeError):
        tmp_store.upsert([*good, bad], checkpoint=("osti", {"page": 7}))
    assert tmp_store.count() == 0 and tmp_store.max_seq() == 0
    assert tmp_store.get_checkpoint("osti") is None
    tmp_store.upsert(good, checkpoint=("osti", {"page": 7}))
    assert tmp_store.count() == 3 and tmp_store.get_checkpoint("osti") == {"page": 7}


def test_checkpoints_and_meta(tmp_store: Store) -> None:
    assert tmp_store.get_checkpoint("ntrs") is None
    tmp_store.set_checkpoint("ntrs", {"since": "2024-01-01", "from": 100})
    tmp_store.set_checkpoint("ntrs", {"since": "2024-01-01", "from": 200})
    assert tmp_store.get_checkpoint("ntrs") == {"since": "2024-01-01", "from": 200}
    assert tmp_store.upsert([], checkpoint=("osti", {"page": 2})).new == 0
    assert tmp_store.get_checkpoint("osti") == {"page": 2}
    tmp_store.set_meta("index_seq", "42")
    assert tmp_store.get_meta("index_seq") == "42" and tmp_store.get_meta("nope") is None


def test_get_many_and_not_found(tmp_store: Store, hepcrawl: list[dict]) -> None:
    tmp_store.upsert([item("osti-api", p) for p in hepcrawl])
    ids = [f"osti:{p['osti_id']}" for p in hepcrawl]
    got = tmp_store.get_many([*ids, "osti:0"])
    assert set(got) == set(ids) and all(isinstance(r, Record) for r in got.values())
    assert tmp_store.exists(ids[0]) and not tmp_store.exists("osti:0")
    with pytest.raises(NotFound, match="osti:0"):
        tmp_store.get("osti:0")


def test_wal_mode_and_reader_sees_committed_batches(tmp_home: Path, hepcrawl: list[dict]) -> None:
    writer = open_store(tmp_home)
    assert writer.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    reader = open_store(tmp_home, readonly=True)
    writer.upsert([item("osti-api", p) for p in hepcrawl[:2]])
    assert reader.count() == 2
    writer.upsert([item("osti-api", p) for p in hepcrawl[2:]])
    assert reader.count() == 5
    reader.close()
    writer.close()


def test_missing_and_corrupt_store_files_give_store_errors(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="no store at"):
        open_store(tmp_path / "empty", readonly=True).count()
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "store.sqlite3").write_bytes(b"this is not a database, just text" * 100)
    with pytest.raises(StoreError, match="store.sqlite3"):
        open_store(bad).count()


def test_stats_counts(tmp_store: Store, hepcrawl: list[dict], tacoma: list[dict]) -> None:
    tmp_store.upsert([item("osti-api", p) for p in hepcrawl] + [item("ntrs-api", p) for p in tacoma])
    stats = tmp_store.stats()
    assert stats["total"] == 7
    assert stats["by_source"] == {"ntrs": 2, "osti": 5}
    years = [map_item("osti-api", p).year for p in hepcrawl] + [1983, 1986]
    expected_decades: dict[str, int] = {}
    for y in years:
        key = f"{y // 10 * 10}s" if y else "unknown"
        expected_decades[key] = expected_decades.get(key, 0) + 1
    assert stats["by_decade"] == dict(sorted(expected_decades.items()))
    assert stats["year_null"] == stats["without_date"] == sum(1 for y in years if y is None)
    assert sum(stats["by_document_type"].values()) == 7
    assert stats["by_format"] == {"osti-api": 5, "ntrs-api": 2}


def test_store_survives_reopen(tmp_home: Path, hepcrawl: list[dict]) -> None:
    store = open_store(tmp_home)
    store.upsert([item("osti-api", p) for p in hepcrawl])
    before = {rid: rec for rid, rec in store.get_many([f"osti:{p['osti_id']}" for p in hepcrawl]).items()}
    store.close()
    again = open_store(tmp_home)
    assert again.get_many(list(before)) == before
    conn = sqlite3.connect(tmp_home / "store.sqlite3")
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.close()
    again.close()


def test_own_jsonl_records_keep_no_second_copy(tmp_store: Store, hepcrawl: list[dict]) -> None:
    rec = map_item("osti-api", hepcrawl[0])
    payload = json.loads(rec.to_json())
    tmp_store.upsert([StoredItem(map_item("records-jsonl", payload), "records-jsonl", payload)])
    assert tmp_store.conn.execute("SELECT raw FROM records").fetchone()[0] is None
    [(rid, fmt, raw)] = list(tmp_store.iter_raw())
    assert (rid, fmt) == (rec.id, "records-jsonl")
    assert map_item(fmt, raw) == rec
