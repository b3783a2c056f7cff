"""The query language: the tree each construct parses to, and degraded input never raising."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from searchnasa.search.query import parse
from searchnasa.search.query_tree import (
    And,
    MatchAll,
    Not,
    Or,
    Phrase,
    Prefix,
    SourceIs,
    Term,
    TopicIs,
    YearRange,
    describe,
    has_loose,
    positive_texts,
    strict_part,
)


def tree(q: str):
    return parse(q).tree


def test_bare_words_are_all_required() -> None:
    assert tree("wind tunnel") == And((Term("wind"), Term("tunnel")))


def test_quoted_phrase() -> None:
    assert tree('"wind tunnel" test') == And((Phrase("wind tunnel"), Term("test")))


def test_or_binds_tighter_than_implicit_and() -> None:
    assert tree("jet OR rocket engine") == And((Or((Term("jet"), Term("rocket"))), Term("engine")))


def test_not_and_minus() -> None:
    assert tree("solar NOT cell") == And((Term("solar"), Not(Term("cell"))))
    assert tree("solar -cell") == And((Term("solar"), Not(Term("cell"))))
    assert tree("X-15") == Term("X-15")  # a hyphen inside a word is not an exclusion


def test_parentheses_group() -> None:
    assert tree("(jet OR rocket) -noise") == And((Or((Term("jet"), Term("rocket"))), Not(Term("noise"))))


def test_field_prefixes() -> None:
    assert tree("title:tunnel") == Term("tunnel", "title")
    assert tree('author:"smith, j"') == Phrase("smith, j", "author")
    assert tree("subject:aerodynamics") == Term("aerodynamics", "subject")
    assert tree("title:(jet OR rocket)") == Or((Term("jet", "title"), Term("rocket", "title")))


@pytest.mark.parametrize("q, expected", [
    ("year:1990-2005", YearRange(1990, 2005)),
    ("year:1990", YearRange(1990, 1990)),
    ("year:1990-", YearRange(1990, None)),
    ("year:-2005", YearRange(None, 2005)),
    ("year:2005-1990", YearRange(1990, 2005)),
])
def test_year(q: str, expected: YearRange) -> None:
    assert tree(q) == expected


def test_source() -> None:
    assert tree("source:ntrs") == SourceIs("ntrs")
    assert tree("source:OSTI") == SourceIs("osti")


@pytest.mark.parametrize(("q", "expected"), [
    ("topic:propulsion", TopicIs("propulsion")),
    ('topic:"Heat transfer and fluids"', TopicIs("fluids-heat-transfer")),
    ("topics:(batteries)", TopicIs("energy-storage")),
    ("-topic:nuclear", Not(TopicIs("nuclear"))),
    ("engine topic:propulsion", And((Term("engine"), TopicIs("propulsion")))),
])
def test_topic(q: str, expected) -> None:
    parsed = parse(q)
    assert parsed.tree == expected and parsed.notices in ([], ["Only exclusions given: showing all records except those."])
    assert strict_part(parsed.tree) is not None  # a semantic candidate must be of the topic too


def test_unknown_topic_is_dropped_with_the_topics_named() -> None:
    parsed = parse("engine topic:warp")
    assert parsed.tree == Term("engine")
    assert parsed.notices and "Unknown topic “warp”" in parsed.notices[0] and "propulsion" in parsed.notices[0]


@pytest.mark.parametrize("q, expected_tree, notice_word", [
    ('"wind tunnel', Phrase("wind tunnel"), "quote"),
    ("(jet OR rocket", Or((Term("jet"), Term("rocket"))), "parenthesis"),
    ("jet) rocket", And((Term("jet"), Term("rocket"))), "parenthesis"),
    ("OR jet", Term("jet"), "OR"),
    ("jet OR", Term("jet"), "OR"),
    ("jet NOT", Term("jet"), "NOT"),
    ("title:", MatchAll(), "title:"),
    ("foo:bar", Term("foo bar"), "Unknown field"),
    ("year:abc jet", Term("jet"), "year"),
    ("source:mars jet", Term("jet"), "source"),
])
def test_degraded_queries_read_sensibly_with_a_notice(q: str, expected_tree, notice_word: str) -> None:
    parsed = parse(q)
    assert parsed.tree == expected_tree
    assert any(notice_word in n for n in parsed.notices), parsed.notices


def test_empty_query_is_match_all() -> None:
    assert tree("") == MatchAll()
    assert tree("   ") == MatchAll()
    assert parse("").interpreted == "all records"


def test_describe_reads_back() -> None:
    assert describe(tree('"wind tunnel" (jet OR rocket) -noise year:1990-2005')) == \
        "“wind tunnel” AND (jet OR rocket) AND NOT noise AND years 1990–2005"


def test_strict_and_loose_split() -> None:
    t = tree('jet "wind tunnel" title:engine -noise year:1990')
    assert has_loose(t)
    assert strict_part(t) == And((Phrase("wind tunnel"), Term("engine", "title"), Not(Term("noise")),
                                  YearRange(1990, 1990)))
    assert positive_texts(t) == ["jet", "wind tunnel", "engine"]
    assert not has_loose(tree('"wind tunnel" source:ntrs'))
    assert strict_part(tree("jet OR rocket")) is None


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list('ab "()-:ORNTDyeartil19 \u201c\u201d*\\')), max_size=40))
def test_parse_never_raises(q: str) -> None:
    parsed = parse(q)
    assert isinstance(parsed.interpreted, str)


@pytest.mark.parametrize("q", ["(" * 1000, "(" * 999 + "a", "title:(" * 166, "(-" * 500, "-(" * 500,
                               "(NOT " * 200 + "a", "(a OR " * 166, "NOT " * 250 + "a", ")" * 1000])
def test_deep_nesting_at_the_length_limit_never_recurses_out(q: str) -> None:
    parsed = parse(q)
    assert isinstance(parsed.interpreted, str)


@pytest.mark.parametrize(("q", "expected"), [
    ("turbo*", Prefix("turbo")),
    ("Turbo**", Prefix("turbo")),
    ("title:Aero*", Prefix("aero", "title")),
    ("engine -turbo*", And((Term("engine"), Not(Prefix("turbo"))))),
    ("turbo* engine", And((Prefix("turbo"), Term("engine")))),
    ("x15*", Prefix("x15")),
    ("aero*dynamic", Term("aero*dynamic")),  # a * inside a word is not a truncation
    ('"boundary lay*"', Phrase("boundary lay*")),  # nor inside a phrase
])
def test_truncated_words(q: str, expected) -> None:
    parsed = parse(q)
    assert parsed.tree == expected and parsed.notices == []


def test_truncation_needs_three_letters() -> None:
    parsed = parse("ab*")
    assert parsed.tree == Term("ab*")
    assert parsed.notices == ["“ab*”: a truncated word needs at least 3 letters before the *; searched “ab”."]


def test_truncated_words_read_back_and_split_like_words() -> None:
    tree = parse("turbo* title:aero* -thermo*").tree
    assert describe(tree) == "turbo* AND title:aero* AND NOT thermo*"
    assert has_loose(tree) and strict_part(tree) == And((Prefix("aero", "title"), Not(Prefix("thermo"))))
    assert positive_texts(tree) == ["turbo", "aero"]
