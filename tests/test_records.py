"""The Record model: canonical JSON, content hash, strict fields, the link to the original."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import orjson
import pytest
from pydantic import ValidationError

from searchnasa.records import SOURCE_LABELS, Record, RecordDate, hash_json, make_id
from searchnasa.ingest.sample import sample_path
from searchnasa.ingest.formats import map_item


@pytest.fixture(scope="module")
def osti_record(raw_dir: Path) -> Record:
    raw = json.loads((raw_dir / "osti-hepcrawl" / "sample_osti_record1.json").read_text(encoding="utf-8"))[0]
    return map_item("osti-api", raw)


def test_json_is_compact_sorted_and_round_trips(osti_record: Record) -> None:
    blob = osti_record.to_json()
    doc = orjson.loads(blob)
    assert blob == orjson.dumps(doc, option=orjson.OPT_SORT_KEYS)  # compact, keys sorted
    assert list(doc) == sorted(doc)
    assert Record.from_json(blob) == osti_record
    assert Record.from_json(blob.decode()) == osti_record
    assert Record.from_json(blob).to_json() == blob


def test_content_hash_tracks_content(osti_record: Record) -> None:
    same = Record.from_json(osti_record.to_json())
    assert same.content_hash() == osti_record.content_hash() == hash_json(osti_record.to_json())
    changed = osti_record.model_copy(deep=True)
    changed.authors[0].orcid = "0000-0002-4982-0865"
    assert changed.content_hash() != osti_record.content_hash()
    assert len(osti_record.content_hash()) == 32


def test_unknown_fields_and_bad_values_rejected(osti_record: Record) -> None:
    doc = orjson.loads(osti_record.to_json())
    with pytest.raises(ValidationError):
        Record.model_validate({**doc, "surprise": 1})
    with pytest.raises(ValidationError):
        Record.model_validate({**doc, "source": "arxiv"})
    with pytest.raises(ValidationError):
        Record.model_validate({**doc, "date": {"value": "1973", "kind": "guessed", "precision": "year"}})
    with pytest.raises(ValidationError):
        Record.model_validate({k: v for k, v in doc.items() if k != "title"})


def test_url_prefers_landing_then_files() -> None:
    rec = Record(id=make_id("ntrs", "1"), source="ntrs", source_id="1", title="t")
    assert rec.url is None and rec.year is None and rec.source_label == SOURCE_LABELS["ntrs"] == "NASA NTRS"
    rec.links.fulltext = "https://ntrs.nasa.gov/api/citations/1/downloads/1.txt"
    assert rec.url == rec.links.fulltext
    rec.links.pdf = "https://ntrs.nasa.gov/api/citations/1/downloads/1.pdf"
    assert rec.url == rec.links.pdf
    rec.links.landing = "https://ntrs.nasa.gov/citations/1"
    assert rec.url == rec.links.landing


def test_record_date_year() -> None:
    assert RecordDate(value="1973-11", kind="issued", precision="month").year == 1973
    assert make_id("osti", "1442851") == "osti:1442851"


def test_every_sample_record_has_a_link_or_is_an_export() -> None:
    for line in gzip.decompress(sample_path().read_bytes()).splitlines():
        rec = Record.from_json(line)
        if rec.kind == "export":
            assert rec.url is None  # the STI export has no id or link; nothing is made up
        else:
            assert rec.url and rec.url.startswith("https://"), rec.id
