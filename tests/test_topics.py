"""The topic crosswalk (src/searchnasa/data/topics.toml): it covers every category the real records
carry, reads each source's spellings alike, and refuses a data file that contradicts itself."""

from __future__ import annotations

import gzip
import tomllib
from collections import Counter

import orjson
import pytest

from searchnasa.ingest.sample import sample_path
from searchnasa.topics import (
    CROSSWALK_PATH,
    category_topics,
    crosswalk,
    parse_crosswalk,
    resolve_topic,
    topic_label,
    topic_slugs,
    topics,
    topics_of,
)


@pytest.fixture(scope="module")
def sample_categories() -> Counter[tuple[str, str]]:
    """(source, category) -> records carrying it, over the bundled sample (real NTRS and OSTI records)."""
    seen: Counter[tuple[str, str]] = Counter()
    with gzip.open(sample_path(), "rb") as fh:
        for line in fh:
            rec = orjson.loads(line)
            seen.update((rec["source"], s) for s in rec.get("subjects") or [])
    return seen


def test_a_small_set_of_named_topics() -> None:
    assert 10 <= len(topics()) <= 16
    assert len(set(topic_slugs())) == len(topics())
    assert all(t.label and t.label != t.slug for t in topics())
    assert "propulsion" in topic_slugs() and topic_label("propulsion") == "Propulsion"


def test_every_sample_category_is_mapped_or_explicitly_unmapped(sample_categories: Counter) -> None:
    unknown = sorted(key for key in sample_categories if category_topics(*key) is None)
    assert unknown == [], f"categories the crosswalk neither maps nor lists as unmapped: {unknown}"
    assert {source for source, _ in sample_categories} == {"ntrs", "osti"}


def test_most_of_the_sample_gets_a_topic(sample_categories: Counter) -> None:
    """Unmapped is the exception: over nine in ten category uses of each source map to a topic."""
    for source in ("ntrs", "osti"):
        uses = {k: n for k, n in sample_categories.items() if k[0] == source}
        mapped = sum(n for k, n in uses.items() if category_topics(*k))
        assert mapped / sum(uses.values()) > 0.9, source


def test_every_topic_is_reached_and_propulsion_from_both_sources(sample_categories: Counter) -> None:
    reached: dict[str, set[str]] = {}
    for source, category in sample_categories:
        for slug in category_topics(source, category) or ():
            reached.setdefault(slug, set()).add(source)
    assert set(reached) == set(topic_slugs())
    assert reached["propulsion"] == {"ntrs", "osti"}
    both = [slug for slug, sources in reached.items() if sources == {"ntrs", "osti"}]
    assert len(both) >= 10, both  # most topics join the two sources, which is the point


@pytest.mark.parametrize(("source", "category", "expected"), [
    ("ntrs", "AIRCRAFT PROPULSION AND POWER", ("propulsion",)),
    ("ntrs", "Spacecraft Propulsion and Power", ("propulsion",)),  # NTRS spells some in title case
    ("ntrs", "  aerodynamics ", ("aeronautics",)),
    ("osti", "33 ADVANCED PROPULSION SYSTEMS", ("propulsion",)),
    ("osti", "42 - ENGINEERING", ("engineering",)),  # OSTI's two spellings of one number
    ("osti", "42 ENGINEERING", ("engineering",)),
    ("osti", "29 ENERGY PLANNING, POLICY AND ECONOMY", ("fuels-energy-policy",)),
    ("osti", "08 - HYDROGEN", ("energy-storage",)),
    ("osti", "99 GENERAL AND MISCELLANEOUS//MATHEMATICS, COMPUTING, AND INFORMATION SCIENCE", ("computing",)),
    ("osti", "99 - GENERAL AND MISCELLANEOUS", ()),  # listed as unmapped
    ("ntrs", "unknown", ()),
    ("ntrs", "NOT A CATEGORY", None),
    ("osti", "free keyword", None),
])
def test_category_lookup(source: str, category: str, expected: tuple[str, ...] | None) -> None:
    assert category_topics(source, category) == expected


def test_a_record_gets_each_topic_once_in_crosswalk_order() -> None:
    got = topics_of("ntrs", ["AUXILIARY SYSTEMS", "ENERGY PRODUCTION AND CONVERSION", "unknown", "PROPELLANTS"])
    assert got == ["propulsion", "energy-storage", "power-systems"]
    assert topics_of("osti", []) == []


def test_the_data_file_lists_what_the_module_maps() -> None:
    """Read the data file on its own: every listed NTRS name maps to exactly the topics naming it."""
    doc = tomllib.loads(CROSSWALK_PATH.read_text(encoding="utf-8"))
    named: dict[str, set[str]] = {}
    for entry in doc["topic"]:
        for name in entry.get("ntrs", []):
            named.setdefault(name, set()).add(entry["slug"])
    for name, slugs in named.items():
        assert set(category_topics("ntrs", name) or ()) == slugs, name
    for name in doc["unmapped"]["ntrs"]:
        assert category_topics("ntrs", name) == ()


@pytest.mark.parametrize(("text", "slug"), [
    ("propulsion", "propulsion"), ("Propulsion", "propulsion"), ("heat transfer", "fluids-heat-transfer"),
    ("Heat transfer and fluids", "fluids-heat-transfer"), ("fluids-heat-transfer", "fluids-heat-transfer"),
    ("batteries", "energy-storage"), ("ENERGY_STORAGE", "energy-storage"), ("nothing like it", None), ("", None),
])
def test_resolve_topic(text: str, slug: str | None) -> None:
    assert resolve_topic(text) == slug


BASE = b'[[topic]]\nslug = "a"\nlabel = "A"\nntrs = ["X"]\nosti = ["01"]\n'


@pytest.mark.parametrize(("extra", "message"), [
    (b'[unmapped]\nntrs = ["x"]\n', "both mapped and unmapped"),
    (b'[unmapped]\nosti = ["1"]\n', "both mapped and unmapped"),
    (b'[[topic]]\nslug = "a"\nlabel = "B"\n', "repeated topic slug"),
    (b'[[topic]]\nslug = "Bad Slug"\nlabel = "B"\n', "bad or repeated"),
    (b'[[topic]]\nslug = "b"\nlabel = "A"\n', "names both"),
])
def test_a_contradictory_data_file_is_refused(extra: bytes, message: str) -> None:
    assert parse_crosswalk(BASE).topics[0].slug == "a"
    with pytest.raises(ValueError, match=message):
        parse_crosswalk(BASE + extra)


def test_the_digest_follows_the_file() -> None:
    assert parse_crosswalk(BASE).digest != parse_crosswalk(BASE + b"# a reviewed change\n").digest
    assert crosswalk().digest == parse_crosswalk(CROSSWALK_PATH.read_bytes()).digest
