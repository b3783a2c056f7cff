"""Queries read as people type them (search/reading.py), on the bundled sample: stop words are not
required, long questions need only some of their words, and everything strict stays strict."""

from __future__ import annotations

from pathlib import Path

import pytest

from searchnasa.records import Record
from searchnasa.search.query import parse
from searchnasa.search.query_tree import Nearby, Or, describe
from searchnasa.search.reading import RARE_SHARE, STOP_WORDS, rare_words_alone, required_words
from searchnasa.search.schemas import SearchRequest
from searchnasa.search.service import SearchService
from searchnasa.settings import Settings

from search_util import contains_phrase, contains_word, load_records

QUESTION = "what is the effect of the heat flux on the thermal protection of a reentry vehicle"
CONTENT = ["effect", "heat", "flux", "thermal", "protection", "reentry", "vehicle"]


@pytest.fixture(scope="module")
def service(indexed_home: Path) -> SearchService:
    return SearchService(Settings().with_home(indexed_home))


@pytest.fixture(scope="module")
def records(indexed_home: Path) -> dict[str, Record]:
    return load_records(indexed_home)


def every_id(service: SearchService, q: str, mode: str = "lexical") -> tuple[list[str], int]:
    ids, page = [], 1
    while True:
        resp = service.search(SearchRequest(q=q, mode=mode, page=page, per_page=100), fold_copies=False)
        ids.extend(h.id for h in resp.results)
        if len(resp.results) < 100:
            return ids, resp.total
        page += 1


def test_short_queries_keep_every_word_required() -> None:
    assert [required_words(n) for n in (1, 2, 3)] == [1, 2, 3]
    assert describe(parse("supersonic nozzle flow").tree) == "supersonic AND nozzle AND flow"


def test_long_queries_need_a_share_of_their_words_never_fewer_than_two() -> None:
    need = [required_words(n) for n in range(4, 21)]
    assert all(2 <= m < n for m, n in zip(need, range(4, 21)))
    assert need == sorted(need)  # more words never need fewer of them


def test_stop_words_are_not_required_but_the_model_reads_them() -> None:
    parsed = parse(QUESTION)
    group, nearby = parsed.tree.children  # the words a record needs, and their order as typed
    assert isinstance(group, Or) and group.minimum == required_words(len(CONTENT))
    assert [c.text for c in group.children] == CONTENT
    assert isinstance(nearby, Nearby) and nearby.words == tuple(QUESTION.split())
    assert parsed.interpreted.startswith(f"at least {required_words(len(CONTENT))} of (effect, heat")
    assert parsed.typed_words == QUESTION.split()
    assert not {c.text for c in group.children} & STOP_WORDS


def test_a_query_of_stop_words_only_keeps_them() -> None:
    assert describe(parse("the").tree) == "the"
    assert describe(parse("to be or not").tree) != "all records"


def rare_words(records: dict[str, Record], words: list[str]) -> list[str]:
    """The words held by at least one record and at most RARE_SHARE of them (checked on the
    stored records, not the index)."""
    held = {w: sum(contains_word(rec, w) for rec in records.values()) for w in words}
    return [w for w in words if 0 < held[w] <= RARE_SHARE * len(records)]


def test_a_long_question_finds_the_records_holding_enough_of_its_words(service, records) -> None:
    ids, total = every_id(service, QUESTION)
    assert ids and total == len(ids)
    need = required_words(len(CONTENT))
    rare = rare_words(records, CONTENT)
    holding = {rid for rid, rec in records.items()
               if sum(contains_word(rec, w) for w in CONTENT) >= need or any(contains_word(rec, w) for w in rare)}
    assert set(ids) == holding  # counted and listed: exactly the records holding enough words, or a rare one
    # an explicit AND requires every word (stop words too), as every query did before: few match
    assert describe(parse(" AND ".join(QUESTION.split())).tree).count(" AND ") == len(QUESTION.split()) - 1
    strict, _ = every_id(service, " AND ".join(QUESTION.split()))
    assert len(strict) < len(ids) / 10
    # BM25 ranks records holding more of the words first
    held = [sum(contains_word(records[rid], w) for w in CONTENT) for rid in ids[:10]]
    assert max(held) == max(sum(contains_word(rec, w) for w in CONTENT) for rec in records.values())
    assert sum(held) / len(held) > need + 1


def test_a_quoted_phrase_in_a_long_query_stays_strict(service, records) -> None:
    q = 'measured "heat transfer" coefficients of the turbine blade cooling passages at high speed'
    ids, _ = every_id(service, q)
    assert ids
    assert all(contains_phrase(records[rid], "heat transfer") for rid in ids)
    hybrid, _ = every_id(service, q, mode="hybrid")
    assert all(contains_phrase(records[rid], "heat transfer") for rid in hybrid)


def test_exclusions_and_fields_in_a_long_query_stay_strict(service, records) -> None:
    ids, _ = every_id(service, "effect of heat flux on thermal protection of reentry vehicles -ablation")
    assert ids and not any(contains_word(records[rid], "ablation") for rid in ids)
    titled, _ = every_id(service, "title:nozzle design of a supersonic wind tunnel for flow studies")
    assert titled and all(contains_word(Record(id=r.id, source=r.source, source_id=r.source_id, title=r.title),
                                        "nozzle") for r in (records[rid] for rid in titled))


def test_stop_words_are_not_highlighted(service) -> None:
    resp = service.search(SearchRequest(q="the effect of heat flux on the thermal protection", mode="lexical"))
    marked = " ".join(h.snippet_html or "" for h in resp.results) + " ".join(h.title_html or "" for h in resp.results)
    assert "<mark>" in marked
    for stop in ("the", "of", "on", "The", "Of", "On"):
        assert f"<mark>{stop}</mark>" not in marked


def test_the_lexical_arm_of_a_long_hybrid_query_is_not_empty(service) -> None:
    resp = service.search(SearchRequest(q=QUESTION, mode="hybrid"))
    assert resp.total > 0 and resp.results
    assert "at least" in resp.interpreted
    assert "No record contains these words" not in " ".join(resp.notices)


def test_a_rare_word_matches_a_long_question_alone_and_the_page_says_so(service, records) -> None:
    rare = rare_words(records, CONTENT)
    common = [w for w in CONTENT if w not in rare]
    assert rare and common  # the sample has both kinds among the question's words
    resp = service.search(SearchRequest(q=QUESTION, mode="lexical", per_page=5))
    assert resp.interpreted.endswith(f"or a rare one alone ({', '.join(rare)})")
    ids, _ = every_id(service, QUESTION)

    def only(word: str) -> set[str]:  # records holding this one of the question's words and no other
        return {rid for rid, rec in records.items()
                if contains_word(rec, word) and not any(contains_word(rec, w) for w in CONTENT if w != word)}

    alone = set().union(*(only(w) for w in rare))
    assert alone and alone <= set(ids)
    assert not set().union(*(only(w) for w in common)) & set(ids)  # a common word alone is not enough


def test_a_rare_word_alone_is_scored_once(service, records) -> None:
    """Counted as the whole requirement, but its BM25 is what the same record gets when any word will do."""
    rare = rare_words(records, CONTENT)
    words = " ".join(CONTENT)
    long_scores = {h.id: h.score for h in service.search(SearchRequest(q=words, mode="lexical", per_page=100),
                                                         fold_copies=False).results}
    any_scores = {h.id: h.score for h in service.search(SearchRequest(q=" OR ".join(CONTENT), mode="lexical",
                                                                      per_page=100), fold_copies=False).results}
    lone = [rid for rid in long_scores if rid in any_scores
            and sum(contains_word(records[rid], w) for w in CONTENT) == 1 and any(contains_word(records[rid], w) for w in rare)]
    assert lone
    for rid in lone:
        assert long_scores[rid] == pytest.approx(any_scores[rid], rel=1e-5)


def test_rare_words_are_told_only_to_long_groups() -> None:
    long_group = parse(QUESTION).tree
    counts = {"reentry": 3, "flux": int(RARE_SHARE * 1000), "heat": int(RARE_SHARE * 1000) + 1}
    marked = rare_words_alone(long_group, lambda t: counts.get(t.text, 500), 1000)
    group = marked.children[0]
    assert [c.text for c in group.alone] == ["flux", "reentry"]  # at most RARE_SHARE of the records, in typed order
    assert rare_words_alone(parse("reentry flux").tree, lambda t: 1, 1000) == parse("reentry flux").tree
    assert rare_words_alone(long_group, lambda t: 0, 1000) is long_group  # a word no record holds is not "rare"
    passage = parse(" ".join(f"word{i}" for i in range(40))).tree  # a pasted passage: at least 4 of 40
    assert passage.children[0].minimum > 2
    assert rare_words_alone(passage, lambda t: 1, 1000) is passage
