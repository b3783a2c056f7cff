"""Snippets: what gets marked, what gets escaped, where long text is cut."""

from __future__ import annotations

from searchnasa.search.query import parse
from searchnasa.search.snippets import highlight_for, highlight_html, snippet_html


def hl(q: str):
    return highlight_for(parse(q).tree)


def test_stemmed_variants_are_marked() -> None:
    html = snippet_html("Tunnels, a tunnel and tunneling.", hl("tunnel"))
    assert html.count("<mark>") == 3


def test_phrase_marked_only_in_order() -> None:
    html = snippet_html("tunnel wind, then a wind tunnel, then a wind-tunnel.", hl('"wind tunnel"'))
    assert html == "tunnel wind, then a <mark>wind tunnel</mark>, then a <mark>wind-tunnel</mark>."


def test_excluded_and_field_restricted_terms_are_not_marked() -> None:
    assert "<mark>" not in snippet_html("solar cell", hl("-solar -cell"))
    assert "<mark>" not in snippet_html("Smith studied", hl("author:smith"))
    assert "<mark>" in highlight_html("Turbine blades", hl("title:turbine"))


def test_everything_is_escaped() -> None:
    text = '<script>alert("x")</script> & <a href="javascript:1">turbine</a>'
    html = snippet_html(text, hl("turbine"))
    assert "<script" not in html and "<a " not in html
    assert html.replace("<mark>", "").replace("</mark>", "").count("<") == 0
    assert "&lt;script&gt;" in html and "&amp;" in html and "<mark>turbine</mark>" in html


def test_long_text_is_cut_around_the_best_passage() -> None:
    text = ("alpha " * 200) + "the rotor blade and the rotor hub " + ("omega " * 200)
    html = snippet_html(text, hl("rotor hub"), width=120)
    assert html.startswith("…") and html.endswith("…")
    assert "<mark>rotor</mark> blade" in html and "<mark>rotor hub</mark>" in html  # adjacent marks merge
    assert len(html.replace("<mark>", "").replace("</mark>", "")) <= 122


def test_short_text_and_no_match() -> None:
    assert snippet_html("short text", hl("nothing")) == "short text"
    long = "word " * 200
    html = snippet_html(long, hl("nothing"), width=100)
    assert not html.startswith("…") and html.endswith("…")
    assert snippet_html(None, hl("x")) == "" and highlight_html("", hl("x")) == ""
