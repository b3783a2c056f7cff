""""Did you mean": corrections offered for words the index does not hold, on the real sample's
index (its vocabulary is real NTRS/OSTI text), plus a SYNTHETIC index for the frequency rule."""

from __future__ import annotations

from pathlib import Path

import pytest

from searchnasa.index import build_index
from searchnasa.index.reader import IndexReader
from searchnasa.records import Record
from searchnasa.search import spelling
from searchnasa.search.schemas import SearchRequest
from searchnasa.search.service import SearchService
from searchnasa.settings import Settings
from searchnasa.store import StoredItem, open_store


@pytest.fixture(scope="module")
def service(indexed_home: Path) -> SearchService:
    return SearchService(Settings().with_home(indexed_home))


def suggestion(service: SearchService, q: str) -> str | None:
    return service.search(SearchRequest(q=q, mode="lexical")).suggestion


@pytest.mark.parametrize(("q", "expected"), [
    ("aerodynamcs", "aerodynamics"),  # a missing letter
    ("areodynamics", "aerodynamics"),  # two letters swapped, the second letter among them
    ("superconductng magnet", "superconducting magnet"),  # only the missing word changes
    ('"turbulant flow"', '"turbulent flow"'),  # phrases match exactly: "turbulant" is not there
    ("title:aerodynamcs", "title:aerodynamics"),  # field prefixes and quotes are kept
    ("Aerodynamcs -turbulence", "aerodynamics -turbulence"),
    ("kármán", "karman"),  # the sample writes it without accents
    ("heat sheld", "heat shield"),  # "shell" is as close and more frequent, but not with "heat"
    ("sheld", "shell"),  # alone, the more frequent of the equally close words
])
def test_misspelled_words_get_a_correction(service: SearchService, q: str, expected: str) -> None:
    assert service.search(SearchRequest(q=q, mode="lexical")).total == 0
    assert suggestion(service, q) == expected
    assert service.search(SearchRequest(q=expected, mode="lexical")).total > 0  # the fix finds records


@pytest.mark.parametrize("q", [
    "boundary layer",  # every word is there
    "turbulant",  # a bare word matches by its stem ("turbul"), as "turbulent" does: nothing to fix
    "computings",  # another inflection of an indexed word
    "wign",  # under five letters: too many neighbours to guess from
    "x15 NASA-TM-X-1234",  # identifiers and numbers are never corrected
    "boundary -aerodynamcs",  # an excluded word is not something the user is looking for
    "qwxzvbn",  # nothing close
    "",
])
def test_no_correction(service: SearchService, q: str) -> None:
    assert suggestion(service, q) is None


def test_identifier_lookups_are_not_corrected(service: SearchService) -> None:
    resp = service.search(SearchRequest(q="osti:1442851", mode="lexical"))
    assert resp.suggestion is None


# SYNTHETIC records written for this test: "magnetron" in 100 of them, the typo "magnetrom" in one.
def _home_with(tmp_home: Path, typo_count: int, word_count: int) -> SearchService:
    store = open_store(tmp_home)
    texts = ["magnetron sputtering of thin films"] * word_count + ["magnetrom sputtering of thin films"] * typo_count
    store.upsert([StoredItem(Record(id=f"osti:s{i}", source="osti", source_id=f"s{i}", title="Synthetic test record",
                                    abstract=text), "synthetic", {"_id": f"s{i}"}) for i, text in enumerate(texts)])
    settings = Settings().with_home(tmp_home)
    build_index(store, settings.index_dir)
    store.close()
    return SearchService(settings)


def test_a_typo_some_records_share_is_corrected_only_against_a_far_more_frequent_word(tmp_home: Path) -> None:
    service = _home_with(tmp_home, typo_count=1, word_count=spelling.MIN_RATIO)
    reader = IndexReader(Settings().with_home(tmp_home).index_dir)
    searcher = reader.searcher()
    # "magnetrom" and "magnetron" have different stems: the typo matches its one record only
    assert service.search(SearchRequest(q="magnetrom", mode="lexical")).total == 1
    assert spelling.correct_word(searcher, "magnetrom") == "magnetron"
    assert suggestion(service, "magnetrom sputtering") == "magnetron sputtering"


def test_a_word_as_common_as_its_neighbour_is_left_alone(tmp_home: Path) -> None:
    service = _home_with(tmp_home, typo_count=2, word_count=spelling.MIN_RATIO)  # 100 < 100 x 2
    assert service.search(SearchRequest(q="magnetrom", mode="lexical")).total == 2
    assert suggestion(service, "magnetrom") is None


def test_any_query_looks_up_a_bounded_number_of_words(service: SearchService, monkeypatch: pytest.MonkeyPatch) -> None:
    """A query of 140 made-up words walks the term dictionary at most MAX_SUSPECTS times."""
    walks: list[str] = []
    real = spelling._candidates
    monkeypatch.setattr(spelling, "_candidates", lambda searcher, word: walks.append(word) or real(searcher, word))
    q = " ".join(f"zq{chr(97 + i % 26)}{chr(97 + i // 26)}xw" for i in range(140))
    assert len(q) <= 1000
    resp = service.search(SearchRequest(q=q, mode="lexical"))
    assert resp.total == 0 and len(walks) == spelling.MAX_SUSPECTS
