"""Atom 1.0 feeds parsed back by feedparser: well-formed (bozo false), entries complete, titles
and summaries with ``&`` and ``<`` round-trip as text."""

from __future__ import annotations

from pathlib import Path
from xml.etree import ElementTree as ET

import feedparser

from searchnasa.exports.atom import ATOM_NS, atom_feed, entry_id
from searchnasa.records import Record
from searchnasa.search.schemas import SearchHit
from searchnasa.store import open_store

SELF = "http://127.0.0.1:8000/search.atom?q=heat+%26+flux&sort=newest"


def _sample_records(sample_home: Path, ids: list[str]) -> list[Record]:
    store = open_store(sample_home, readonly=True)
    found = store.get_many(ids)
    store.close()
    return [found[i] for i in ids]


def test_feed_of_real_records_parses(sample_home: Path) -> None:
    ids = ["ntrs:sti-6c5ac36c993e6ecc", "osti:2587429", "osti:3002493", "ntrs:19930085761"]
    records = _sample_records(sample_home, ids)
    xml = atom_feed("R&D <accelerator>", records, SELF, html_url="http://127.0.0.1:8000/search?q=x",
                    base_url="http://127.0.0.1:8000/")
    parsed = feedparser.parse(xml)
    assert not parsed.bozo, parsed.get("bozo_exception")
    assert parsed.version == "atom10"
    assert parsed.feed.title == "Search NASA: R&D <accelerator>"
    assert parsed.feed.id.startswith("tag:searchnasa,")
    assert any(link.rel == "self" and link.href == SELF for link in parsed.feed.links)
    assert len(parsed.entries) == len(records)
    for entry, record in zip(parsed.entries, records):
        assert entry.id == entry_id(record.id)
        assert entry.title == record.title
        # the original when known; our record page for the one sample record without links
        assert entry.link == (record.url or f"http://127.0.0.1:8000/records/{record.id}")
        if record.year:
            assert entry.updated.startswith(str(record.year))
        assert entry.updated_parsed is not None
    assert parsed.entries[0].title == "R&D of Accelerator Structures at SLAC"
    assert parsed.entries[2].authors[-1].name == "Fernández-Domínguez, Antonio I."


def test_special_characters_round_trip_as_text() -> None:
    """SYNTHETIC record: markup-like text must stay text, not become markup."""
    rec = Record(id="osti:synthetic-feed", source="osti", source_id="synthetic-feed",
                 title="SYNTHETIC a < b & c > d <script>alert(1)</script>",
                 abstract="SYNTHETIC summary: x<y & \"quotes\" ]]> \x01control", year=2001)
    xml = atom_feed("a & b", [rec], SELF)
    parsed = feedparser.parse(xml)
    assert not parsed.bozo
    entry = parsed.entries[0]
    assert entry.title == rec.title
    assert entry.title_detail.type == "text/plain"
    assert entry.summary == 'SYNTHETIC summary: x<y & "quotes" ]]> control'
    assert not entry.get("links")  # no URL known and no base URL: no link invented
    # Atom's required elements are all present (checked on the XML itself, not via a parser's defaults)
    root = ET.fromstring(xml.encode())
    for tag in ("id", "title", "updated", "author"):
        assert root.find(f"{{{ATOM_NS}}}{tag}") is not None
    node = root.find(f"{{{ATOM_NS}}}entry")
    for tag in ("id", "title", "updated"):
        assert node.find(f"{{{ATOM_NS}}}{tag}") is not None


def test_feed_from_search_hits_and_empty_feed() -> None:
    hit = SearchHit(id="ntrs:1", source="ntrs", source_label="NASA NTRS", title="Hit & title", title_html="",
                    abstract=None, snippet_html="", year=None, date_label="", url="https://ntrs.nasa.gov/citations/1",
                    link_label="", authors=["Doe, Jane"])
    parsed = feedparser.parse(atom_feed("q", [hit], SELF))
    assert not parsed.bozo and parsed.entries[0].title == "Hit & title"
    assert parsed.entries[0].author == "Doe, Jane"
    empty = feedparser.parse(atom_feed("nothing matches", [], SELF))
    assert not empty.bozo and empty.entries == [] and empty.feed.updated


def test_only_web_links_leave_the_feed() -> None:
    """SYNTHETIC hostile record: a ``javascript:`` landing URL is never written as the entry link."""
    rec = Record(id="osti:synthetic-js", source="osti", source_id="synthetic-js", title="SYNTHETIC hostile link",
                 year=2020, links={"landing": "javascript:alert(1)"})
    parsed = feedparser.parse(atom_feed("q", [rec], SELF, base_url="http://127.0.0.1:8000"))
    assert not parsed.bozo
    assert parsed.entries[0].link == "http://127.0.0.1:8000/records/osti:synthetic-js"
    assert "javascript" not in atom_feed("q", [rec], SELF)
