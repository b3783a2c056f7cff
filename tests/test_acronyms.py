"""Acronyms mined from the collection and expanded in queries (index/acronyms.py, acronym_table.py,
acronym_lexicon.py; search/acronyms.py).

The miner on sentences written here; the counts kept incrementally in a real store (records marked
SYNTHETIC); the query tree with a lexicon built here; then the whole path on the bundled sample:
the real store, the mined lexicon, the real index on disk, the search service.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from searchnasa.index.acronym_lexicon import (Meaning, build_lexicon, decide, lexicon_path, read_lexicon)
from searchnasa.index.acronym_table import count_definitions, lexicon_of, update_acronyms
from searchnasa.index.acronyms import find_definitions, record_definitions
from searchnasa.ingest.sample import sample_path
from searchnasa.records import Record
from searchnasa.search.query import parse
from searchnasa.search.query_tree import Expanded, Or, Phrase, Term
from searchnasa.search.reading import required_words
from searchnasa.search.schemas import SearchRequest
from searchnasa.search.service import SearchService
from searchnasa.settings import Settings
from searchnasa.store import Store, StoredItem, open_store


def pairs(text: str) -> list[tuple[str, str]]:
    return [(d.acronym, d.form) for d in find_definitions(text)]


# -- the miner ------------------------------------------------------------------------------------

def test_definitions_are_found_both_ways_round() -> None:
    assert pairs("Plasma sprayed thermal barrier coatings (TBCs) protect blades.") == [
        ("TBC", "thermal barrier coatings")]
    assert pairs("TBC (thermal barrier coating) life was measured.") == [("TBC", "thermal barrier coating")]
    # the long form stops where its letters do, not at the start of the sentence
    assert pairs("We tested a new and improved solid oxide fuel cell (SOFC) stack.") == [
        ("SOFC", "solid oxide fuel cell")]


def test_initials_give_the_whole_long_form_and_possessives_are_dropped() -> None:
    assert pairs("the National Nuclear Security Administration (NNSA) funds it") == [
        ("NNSA", "national nuclear security administration")]
    assert pairs("the Department of Energy's (DOE) laboratories") == [("DOE", "department of energy")]
    assert pairs("coefficient of thermal expansion (CTE) mismatch") == [("CTE", "coefficient of thermal expansion")]


@pytest.mark.parametrize("text", [
    "as shown before (Fig. 2) the flow separates",   # one capital: not an acronym
    "the results (see above) hold",                    # no capitals
    "many unrelated words were measured here (TBC)",   # letters do not spell it
    "the flow (1990) was laminar",                     # a year
    "results for engines (NASA)",                      # too short a long form for its letters
    "TBC (tested between 1990 and 2000)",              # the parenthesis is not its long form
])
def test_what_is_not_a_definition(text: str) -> None:
    assert pairs(text) == []


def test_a_record_counts_each_meaning_once() -> None:
    found = record_definitions(["Thermal barrier coatings (TBCs)", "thermal barrier coating (TBC) and TBC "
                                "(thermal barrier coatings)"])
    assert {(d.acronym, d.key) for d in found} == {("TBC", "thermal barrier coat")}


# -- the rule -------------------------------------------------------------------------------------

def m(form: str, records: int) -> Meaning:
    return Meaning(form, form, records)


def test_a_dominating_meaning_is_expanded_and_the_others_kept_for_the_notice() -> None:
    entry = decide("SAR", [m("synthetic aperture radar", 7), m("search and rescue", 1), m("stable auroral red", 1)])
    assert entry is not None and [x.form for x in entry.expand] == ["synthetic aperture radar"]
    assert {x.form for x in entry.others} == {"search and rescue", "stable auroral red"} and entry.ambiguous
    assert entry.definitions == 9


def test_scattered_meanings_expand_to_none_and_rare_ones_are_left_out() -> None:
    scattered = decide("CC", [m("circulation control", 2), m("calcined clay", 2), m("cnc cluster", 1),
                              m("core charge", 1), m("cold cathode", 1), m("carbon cycle", 1)])
    assert scattered is not None and scattered.expand == () and len(scattered.others) == 6
    assert decide("NBS", [m("national bureau of standards", 1), m("nature based solutions", 1)]) is None
    two = decide("AMD", [m("acid mine drainage", 3), m("abandoned coal mine drainage", 3)])
    assert two is not None and {x.form for x in two.expand} == {"acid mine drainage", "abandoned coal mine drainage"}


def test_the_commonest_written_form_names_a_meaning() -> None:
    lex = build_lexicon([("TBC", "thermal barrier coat", "thermal barrier coatings", 3),
                         ("TBC", "thermal barrier coat", "thermal barrier coating", 1)], 10)
    entry = lex.lookup("TBC")
    assert entry is not None and [(x.form, x.records) for x in entry.expand] == [("thermal barrier coatings", 4)]
    assert lex.lookup("TBCs") is entry and lex.lookup("tbc") is None


# -- counts kept by store seq -----------------------------------------------------------------------

def synthetic(rid: str, abstract: str) -> StoredItem:
    record = Record(id=f"osti:{rid}", source="osti", source_id=rid, title=f"SYNTHETIC test record {rid}",
                    abstract=abstract)
    return StoredItem(record=record, raw_format="synthetic", raw={"id": rid})


def counts(store: Store) -> dict[tuple[str, str], int]:
    with store.reading() as conn:
        return {(a, f): n for a, f, n in conn.execute("SELECT acronym, form, records FROM acronym_counts")}


def test_counts_follow_the_store_incrementally(tmp_store: Store, tmp_path: Path) -> None:
    index_dir = tmp_path / "index"
    tmp_store.upsert([synthetic("9990000101", "A thermal barrier coating (TBC) was sprayed."),
                      synthetic("9990000102", "TBC (thermal barrier coating) spallation."),
                      synthetic("9990000103", "A thin bond coat (TBC) layer.")])
    first = update_acronyms(tmp_store, index_dir)
    assert first.records == 3 and first.acronyms == 1
    assert counts(tmp_store) == {("TBC", "thermal barrier coating"): 2, ("TBC", "thin bond coat"): 1}
    entry = read_lexicon(index_dir).lookup("TBC")
    assert entry is not None and [x.form for x in entry.expand] == ["thermal barrier coating"]
    assert [(x.form, x.records) for x in entry.others] == [("thin bond coat", 1)]

    stamp = lexicon_path(index_dir).stat().st_mtime_ns
    assert update_acronyms(tmp_store, index_dir).records == 0  # nothing changed: nothing read or written
    assert lexicon_path(index_dir).stat().st_mtime_ns == stamp

    # a changed record takes its old definition off the counts; a new one adds its own
    tmp_store.upsert([synthetic("9990000102", "No acronyms here any more."),
                      synthetic("9990000104", "Thin bond coats (TBCs) again.")])
    assert count_definitions(tmp_store) == 2
    assert counts(tmp_store) == {("TBC", "thermal barrier coating"): 1, ("TBC", "thin bond coats"): 1,
                                 ("TBC", "thin bond coat"): 1}
    entry = lexicon_of(tmp_store).lookup("TBC")
    assert entry is not None and [(x.form, x.records) for x in entry.expand] == [("thin bond coat", 2)]

    assert count_definitions(tmp_store, rebuild=True) == 4  # a rebuild counts everything again
    assert sum(counts(tmp_store).values()) == 3


# -- the query tree ---------------------------------------------------------------------------------

LEXICON = build_lexicon([("TBC", "thermal barrier coat", "thermal barrier coated", 2),
                         ("SAR", "synthet apertur radar", "synthetic aperture radar", 7),
                         ("SAR", "search and rescu", "search and rescue", 1),
                         ("CC", "a", "circulation control", 2), ("CC", "b", "calcined clay", 2),
                         ("CC", "c", "cnc cluster", 1), ("CC", "d", "core charge", 1),
                         ("CC", "e", "cold cathode", 1), ("CC", "f", "carbon cycle", 1)], 100)


def test_a_bare_acronym_becomes_one_or_group_with_its_meanings() -> None:
    parsed = parse("TBC spallation", LEXICON)
    group = parsed.tree.children[0]
    assert isinstance(group, Expanded) and isinstance(group, Or) and group.acronym == "TBC"
    assert group.children == (Term("TBC"), Phrase("thermal barrier coated", stemmed=True))
    assert parsed.interpreted == "(TBC OR “thermal barrier coated”) AND spallation"
    [note] = parsed.acronyms
    assert note.expanded_to == ["thermal barrier coated"] and note.only_query == "=TBC spallation"
    assert note.message == "TBC also searched as thermal barrier coated"
    assert parsed.typed_words == ["TBC", "spallation"]  # the semantic model reads what was typed


@pytest.mark.parametrize("query", ['=TBC spallation', '"TBC" spallation', 'title:TBC spallation',
                                   'tbc spallation', 'spallation -TBC', 'title:(TBC spallation)'])
def test_acronyms_left_exactly_as_typed(query: str) -> None:
    parsed = parse(query, LEXICON)
    assert parsed.acronyms == []
    assert parsed.tree == parse(query).tree and "thermal barrier" not in parsed.interpreted


def test_a_query_typed_in_capitals_is_not_read_for_acronyms() -> None:
    assert parse("SAR TBC", LEXICON).acronyms != []  # two acronyms typed together are acronyms
    capitals = parse("MEASUREMENT OF TBC LIFE", LEXICON)
    assert capitals.acronyms == [] and capitals.tree == parse("MEASUREMENT OF TBC LIFE").tree


def test_search_only_link_marks_every_occurrence() -> None:
    parsed = parse("TBC OR (SAR and TBC)", LEXICON)
    assert {n.acronym: n.only_query for n in parsed.acronyms} == {
        "TBC": "=TBC OR (SAR and =TBC)", "SAR": "TBC OR (=SAR and TBC)"}


def test_an_ambiguous_acronym_says_which_meaning_it_searched() -> None:
    [sar] = parse("SAR", LEXICON).acronyms
    assert sar.expanded_to == ["synthetic aperture radar"] and sar.other_meanings == ["search and rescue"]
    assert "commonest meaning" in sar.message and "search and rescue" in sar.message
    parsed = parse("CC", LEXICON)
    [cc] = parsed.acronyms
    assert cc.expanded_to == [] and cc.only_query is None and "searched only as typed" in cc.message
    assert parsed.tree == Term("CC")


def test_an_expanded_acronym_counts_as_one_word_of_a_long_question() -> None:
    words = "effect of TBC on turbine blade life in jet engines".split()
    content = [w for w in words if w not in ("of", "on", "in")]
    parsed = parse(" ".join(words), LEXICON)
    group = parsed.tree.children[0]
    assert isinstance(group, Or) and group.minimum == required_words(len(content))
    assert len(group.children) == len(content)
    assert sum(isinstance(c, Expanded) for c in group.children) == 1


# -- the bundled sample, end to end -------------------------------------------------------------------

@pytest.fixture(scope="module")
def acronym_home(indexed_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The indexed sample with its acronyms mined, as ``searchnasa index`` leaves a home."""
    home = tmp_path_factory.mktemp("acronym_home")
    shutil.copy2(indexed_home / "store.sqlite3", home / "store.sqlite3")
    shutil.copytree(indexed_home / "index", home / "index")
    store = open_store(home)
    update_acronyms(store, Settings().with_home(home).index_dir)
    store.close()
    return home


@pytest.fixture(scope="module")
def service(acronym_home: Path) -> SearchService:
    return SearchService(Settings().with_home(acronym_home))


def sample_ids(pattern: str, flags: int = 0) -> set[str]:
    """Ids of the sample records whose text (any field) matches ``pattern``: worked out apart from
    the index, from the bundled file itself."""
    import gzip

    found = set()
    with gzip.open(sample_path(), "rt", encoding="utf-8") as fh:
        for line in fh:
            data = json.loads(line)
            if re.search(pattern, json.dumps(data, ensure_ascii=False), flags):
                found.add(data["id"])
    return found


def all_ids(service: SearchService, q: str) -> tuple[set[str], object]:
    resp = service.search(SearchRequest(q=q, mode="lexical", per_page=100), fold_copies=False)
    assert resp.total <= 100
    return {h.id for h in resp.results}, resp


def test_tbc_finds_every_record_holding_tbc_or_its_meaning(service: SearchService) -> None:
    acronym = sample_ids(r"\bTBCs?\b")
    spelled = sample_ids(r"thermal[\s-]+barrier[\s-]+coat(ed|ing|ings)\b", re.IGNORECASE)
    assert acronym and spelled - acronym  # the sample holds both kinds
    found, resp = all_ids(service, "TBC")
    assert found == acronym | spelled
    assert resp.total == len(acronym | spelled)
    [note] = resp.acronyms
    assert note.acronym == "TBC" and note.expanded_to and note.only_query == "=TBC"
    assert note.message.startswith("TBC also searched as thermal barrier")
    assert "TBC OR “thermal barrier" in resp.interpreted
    only, only_resp = all_ids(service, note.only_query)
    assert only == acronym and only_resp.acronyms == []


def test_the_meaning_is_highlighted_in_any_inflection(service: SearchService) -> None:
    resp = service.search(SearchRequest(q="TBC", mode="lexical", per_page=100), fold_copies=False)
    marked = " ".join(h.title_html + h.snippet_html for h in resp.results).lower()
    assert "<mark>thermal barrier coatings</mark>" in marked and "<mark>tbc</mark>" in marked


def test_an_ambiguous_sample_acronym_expands_to_its_dominating_meaning_only(service: SearchService,
                                                                          acronym_home: Path) -> None:
    lexicon = read_lexicon(Settings().with_home(acronym_home).index_dir)
    ambiguous = [e for e in lexicon.entries.values() if e.expand and e.others]
    scattered = [e for e in lexicon.entries.values() if not e.expand]
    assert ambiguous and scattered  # the sample has both kinds
    for entry in ambiguous[:5]:
        resp = service.search(SearchRequest(q=entry.acronym, mode="lexical", per_page=5), fold_copies=False)
        [note] = resp.acronyms
        assert note.expanded_to == [x.form for x in entry.expand]
        assert note.other_meanings == [x.form for x in entry.others]
        assert all(x.form not in resp.interpreted for x in entry.others)
        assert entry.others[0].form in note.message
    entry = scattered[0]
    resp = service.search(SearchRequest(q=entry.acronym, mode="lexical"), fold_copies=False)
    [note] = resp.acronyms
    assert note.expanded_to == [] and "searched only as typed" in note.message
    assert resp.interpreted == f"Read as: {entry.acronym}"


def test_a_home_without_a_lexicon_searches_as_typed(indexed_home: Path) -> None:
    plain = SearchService(Settings().with_home(indexed_home))
    resp = plain.search(SearchRequest(q="TBC", mode="lexical"), fold_copies=False)
    assert resp.acronyms == [] and resp.interpreted == "Read as: TBC"
    assert resp.total == len(sample_ids(r"\bTBCs?\b"))
