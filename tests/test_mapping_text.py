"""The field cleaners every mapper shares: dates, DOIs, ORCIDs, markup. Real values from the raw
files where they exist, and properties (never raise, idempotent) over arbitrary input."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from searchnasa.records import normalize_doi
from searchnasa.ingest.text import (
    clean_label,
    clean_list,
    clean_text,
    format_orcid,
    parse_date,
    split_osti_subjects,
    split_outside_brackets,
)


@pytest.mark.parametrize(
    ("raw", "value", "precision"),
    [
        ("2016-05-06T10:59:49.8800000+00:00", "2016-05-06", "day"),  # NTRS, 7 fractional digits
        ("1973-11-01T00:00:00Z", "1973-11-01", "day"),  # OSTI API
        ("2007-08-01", "2007-08-01", "day"),  # OSTI legacy CSV
        ("2007-08", "2007-08", "month"),
        ("1980", "1980", "year"),
        ("08/01/2007", "2007-08-01", "day"),  # MM/DD/YYYY as some OSTI clients send it
    ],
)
def test_parse_date_keeps_precision(raw: str, value: str, precision: str) -> None:
    d = parse_date(raw, "published")
    assert d is not None and (d.value, d.precision, d.kind) == (value, precision, "published")


@pytest.mark.parametrize("raw", ["", "   ", None, "unknown", "2007-13", "2007-02-30", "0000-01-01", "31/31/2001", 1980])
def test_parse_date_rejects_non_dates(raw: object) -> None:
    assert parse_date(raw, "published") is None


@pytest.mark.parametrize(
    ("raw", "doi"),
    [
        ("https://doi.org/10.11578/1367164", "10.11578/1367164"),  # osti-dspace-pppl
        ("10.1103/PhysRevD.8.3207", "10.1103/physrevd.8.3207"),  # osti-hepcrawl
        ("http://dx.doi.org/10.1063/1.4963146", "10.1063/1.4963146"),
        ("DOI: 10.2172/969944.", "10.2172/969944"),
        ("  doi:10.1000/XYZ  ", "10.1000/xyz"),
        ("not a doi", None),
        ("", None),
        (None, None),
        (12345, None),
    ],
)
def test_normalize_doi(raw: object, doi: str | None) -> None:
    assert normalize_doi(raw) == doi


@pytest.mark.parametrize(
    ("raw", "orcid"),
    [
        ("0000000249820865", "0000-0002-4982-0865"),
        ("https://orcid.org/0000-0002-1825-009X", "0000-0002-1825-009X"),
        ("0000-0002-1825-009x", "0000-0002-1825-009X"),
        ("12345", None),
        ("", None),
        (None, None),
    ],
)
def test_format_orcid(raw: str | None, orcid: str | None) -> None:
    assert format_orcid(raw) == orcid


def test_clean_text_cases() -> None:
    assert clean_text("E<sub>μ</sub> and x<sup>2</sup>") == "Eμ and x2"
    assert clean_text("<p>One.</p><p>Two.</p>") == "One. Two."
    assert clean_text("  \n\t ") is None and clean_text("") is None and clean_text(None) is None
    assert clean_text("R&amp;D at &lt;5 K") == "R&D at <5 K"
    assert clean_text("T < 5 K and a > b") == "T < 5 K and a > b"  # comparisons are not markup
    assert clean_text("NETL&amp;#39;s") == "NETL's"  # escaped twice by the source
    assert clean_text("AT&amp;amp;T") == "AT&T"
    assert clean_text(1980) == "1980"


def test_clean_label_and_list() -> None:
    assert clean_label("S&amp;T Accomplishment Report") == "S&T Accomplishment Report"
    assert clean_label({"name": "x"}) is None and clean_label("  ") is None
    assert clean_list(["A", " A ", None, "", 3, {"x": 1}, "B"]) == ["A", "3", "B"]
    assert clean_list("solo") == ["solo"] and clean_list(None) == []


def test_split_helpers() -> None:
    assert split_outside_brackets("A [x; y]; B (c; d); C") == ["A [x; y]", "B (c; d)", "C"]
    subjects, keywords = split_osti_subjects(
        ["72 PHYSICS OF ELEMENTARY PARTICLES AND FIELDS", "42 - ENGINEERING", "2D materials", "161Tb", "lithium"])
    assert subjects == ["72 PHYSICS OF ELEMENTARY PARTICLES AND FIELDS", "42 - ENGINEERING"]
    assert keywords == ["2D materials", "161Tb", "lithium"]


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_cleaners_never_raise(text: str) -> None:
    out = clean_text(text)
    assert out is None or (out == out.strip() and "  " not in out)
    clean_label(text)
    parse_date(text, "published")
    normalize_doi(text)
    format_orcid(text)


@settings(max_examples=200, deadline=None)
@given(st.from_regex(r"10\.\d{4,9}/[A-Za-z0-9./_-]{1,30}", fullmatch=True))
def test_doi_normalization_is_idempotent_and_prefix_blind(doi: str) -> None:
    bare = normalize_doi(doi)
    if bare is None:  # e.g. the suffix ends with '.' only
        return
    assert normalize_doi(bare) == bare
    assert normalize_doi("https://doi.org/" + doi) == bare
    assert normalize_doi("doi:" + doi.upper()) == bare
