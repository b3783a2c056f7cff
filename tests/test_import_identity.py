"""An import never mislabels a record: format detection reads a first line however long, every
mapped id is ``source:native-id`` with a known source and no nested prefix, and a record whose
id or source does not fit is refused with its ``path:line`` (the import exits non-zero), never
renamed (issue 18, finding 3)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from searchnasa.errors import FormatError
from searchnasa.ingest.formats import check_identity, detect_format, map_item, read_file
from searchnasa.records import Record
from searchnasa.store import open_store

CLI = str(Path(sys.executable).with_name("searchnasa"))


def run_cli(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SEARCHNASA_HOME": str(home), "COLUMNS": "300"}
    return subprocess.run([CLI, *args], capture_output=True, text=True, env=env, timeout=120)


def stored(home: Path) -> dict[str, str]:
    store = open_store(home)
    try:
        return dict(store.conn.execute("SELECT id, source FROM records"))
    finally:
        store.close()


def record_line(source: str, native: str, abstract: str = "An abstract.") -> bytes:
    rec = Record(id=f"{source}:{native}", source=source, source_id=native, title=f"Report {native}",
                 abstract=abstract)  # type: ignore[arg-type]
    return rec.to_json()


def test_record_jsonl_with_a_first_line_over_one_mib_keeps_its_ids(tmp_path: Path) -> None:
    path = tmp_path / "long.jsonl"
    first = record_line("osti", "987000002", abstract="plasma " * 200_000)  # ~1.4 MB on one line
    assert len(first) > 1 << 20
    path.write_bytes(first + b"\n" + record_line("ntrs", "19720012345") + b"\n")
    assert detect_format(path, path.read_bytes()) == "records-jsonl"
    done = run_cli("import", str(path), home=tmp_path / "home")
    assert done.returncode == 0, done.stderr
    assert stored(tmp_path / "home") == {"osti:987000002": "osti", "ntrs:19720012345": "ntrs"}


def test_a_bare_prefixed_id_never_becomes_a_nested_id(tmp_path: Path) -> None:
    path = tmp_path / "one.jsonl"
    path.write_text('{"id":"ntrs:5","title":"x"}', encoding="utf-8")
    done = run_cli("import", str(path), home=tmp_path / "home")
    assert done.returncode != 0
    assert f"{path}:1" in done.stderr.replace("\n", "")
    assert "Traceback" not in done.stderr
    assert stored(tmp_path / "home") == {}


def test_forcing_ntrs_api_on_record_jsonl_is_refused_with_path_and_line(tmp_path: Path) -> None:
    path = tmp_path / "records.jsonl"
    path.write_bytes(record_line("osti", "987000002") + b"\n" + record_line("ntrs", "5") + b"\n")
    done = run_cli("import", "--format", "ntrs-api", str(path), home=tmp_path / "home")
    assert done.returncode != 0
    err = done.stderr.replace("\n", "")
    assert f"{path}:1" in err and f"{path}:2" in err
    assert "already carries a source prefix" in err
    assert "0 new" in done.stdout and "2 skipped" in done.stdout
    assert stored(tmp_path / "home") == {}


@pytest.mark.parametrize("payload", [
    {"id": "ntrs:5", "source": "osti", "source_id": "5", "title": "x"},  # id disagrees with source
    {"id": "ntrs:ntrs:5", "source": "ntrs", "source_id": "ntrs:5", "title": "x"},  # nested prefix
    {"id": "osti: 9", "source": "osti", "source_id": " 9", "title": "x"},  # padded native id
    {"id": "nasa:5", "source": "nasa", "source_id": "5", "title": "x"},  # unknown source
])
def test_record_jsonl_with_a_malformed_identity_is_refused(payload: dict[str, str]) -> None:
    with pytest.raises(FormatError):
        map_item("records-jsonl", payload)


def test_a_record_whose_source_disagrees_with_the_format_is_refused() -> None:
    record = Record(id="ntrs:5", source="ntrs", source_id="5", title="x")
    check_identity(record, "ntrs-api")
    check_identity(record, "records-jsonl")
    with pytest.raises(FormatError, match="osti records only"):
        check_identity(record, "osti-api")


def test_ntrs_citation_with_a_prefixed_id_is_refused() -> None:
    with pytest.raises(FormatError, match="source prefix"):
        map_item("ntrs-api", {"id": "osti:9", "title": "x"})
    assert map_item("ntrs-api", {"id": 19720012345, "title": "x"}).id == "ntrs:19720012345"


def test_a_first_line_over_the_detection_limit_asks_for_format(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    import searchnasa.ingest.formats as formats

    monkeypatch.setattr(formats, "_MAX_DETECT_LINE", 1000)
    path = tmp_path / "huge.jsonl"
    path.write_bytes(record_line("osti", "1", abstract="x" * 2000) + b"\n")
    with pytest.raises(FormatError, match="pass --format"):
        list(read_file(path))
    assert [r.payload["id"] for r in read_file(path, "records-jsonl")] == ["osti:1"]  # type: ignore[union-attr]


# -- field size limits (issue 18, finding 5) ---------------------------------------------------


def test_an_oversize_abstract_is_cut_with_a_visible_mark_and_stays_cut_alike(tmp_path: Path) -> None:
    from searchnasa.limits import ABSTRACT_CUT_MARK, MAX_ABSTRACT_CHARS

    raw = {"osti_id": "987000003", "title": "Long", "description": "word " * 5_000_000}  # 25 MB
    rec = map_item("osti-api", raw)
    mark = ABSTRACT_CUT_MARK.format(limit=MAX_ABSTRACT_CHARS)
    assert rec.abstract is not None and rec.abstract.endswith(mark)
    assert "abstract cut at 50,000 characters on import" in rec.abstract
    assert len(rec.abstract) <= MAX_ABSTRACT_CHARS + len(mark)
    assert rec.abstract.startswith("word word")
    again = map_item("records-jsonl", orjson.loads(rec.to_json()))  # an export re-imported
    assert again.abstract == rec.abstract
    short = map_item("osti-api", {"osti_id": "987000004", "title": "Short", "description": "word " * 100})
    assert short.abstract == ("word " * 100).strip()


def test_oversize_titles_and_lists_are_refused_with_path_and_line(tmp_path: Path) -> None:
    from searchnasa.limits import MAX_AUTHORS, MAX_KEYWORDS, MAX_TITLE_CHARS

    lines = [
        {"osti_id": "1", "title": "t" * (MAX_TITLE_CHARS + 1)},
        {"osti_id": "2", "title": "ok", "authors": [f"Author{i}, A." for i in range(MAX_AUTHORS + 1)]},
        {"osti_id": "3", "title": "ok", "subjects": [f"kw{i}" for i in range(MAX_KEYWORDS + 1)]},
        {"osti_id": "4", "title": "ok", "authors": ["A" * 5000 + ", B."]},
        {"osti_id": "5", "title": "a fine record", "description": "x " * 60_000},
    ]
    path = tmp_path / "osti.jsonl"
    path.write_bytes(b"\n".join(orjson.dumps(line) for line in lines) + b"\n")
    done = run_cli("import", "--format", "osti-api", str(path), home=tmp_path / "home")
    assert done.returncode != 0
    err = done.stderr.replace("\n", "")
    assert f"{path}:1: title of 2,001 characters (limit 2,000)" in err
    assert f"{path}:2: 10,001 authors (limit 10,000)" in err
    assert f"{path}:3: " in err and "(limit 2,000)" in err
    assert f"{path}:4: an author, keyword or subject of" in err
    assert f"{path}:5" not in err
    assert "1 new" in done.stdout and "4 skipped" in done.stdout
    assert stored(tmp_path / "home") == {"osti:5": "osti"}
