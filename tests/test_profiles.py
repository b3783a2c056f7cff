"""Collection profiles: the bundled ones load, a profile's mistakes are one clear line, and
``Profile.excludes`` decides on stored records as the profile file says."""

from __future__ import annotations

import pytest

from searchnasa.errors import BadInput
from searchnasa.profiles import DEFAULT_DESCRIPTION, active_profile, bundled_names, load_profile, parse_profile, save_active

TOML = """
name = "t"
description = "A test collection"
[dates]
from = 1990-01-01
until = 2000-12-31
[ntrs]
subject_categories = ["PROPULSION SYSTEMS"]
query_terms = ["heat transfer"]
[osti]
subject_categories = ["42 ENGINEERING"]
"""


def record(source="ntrs", subjects=(), title="A title", abstract=None, day=None):
    return {"source": source, "subjects": list(subjects), "title": title, "abstract": abstract,
            "keywords": [], "date": {"value": day} if day else None}


def test_bundled_profiles_load_and_energy_propulsion_is_the_reference_line():
    assert {"all", "energy-propulsion"} <= set(bundled_names())
    energy = load_profile("energy-propulsion")
    assert energy.description == DEFAULT_DESCRIPTION  # the reference page's line, today's text
    assert any(s.filters == {"subjectCategory": "PROPULSION SYSTEMS"} for s in energy.selections("ntrs"))
    assert any(s.filters == {"subject": "25 ENERGY STORAGE"} for s in energy.selections("osti"))
    everything = load_profile("all")
    assert [s.checkpoint for s in everything.selections("ntrs")] == ["harvest:ntrs"]  # the plain harvest's


def test_excludes_by_category_term_source_and_dates():
    p = parse_profile(TOML, "t.toml")
    assert p.excludes(record(subjects=["Propulsion Systems"], day="1995-03-01")) is None  # case-blind
    assert p.excludes(record(abstract="Convective HEAT  transfer in ducts")) is None  # term, spaces folded
    assert p.excludes(record(subjects=["AERODYNAMICS"])) is not None
    assert p.excludes(record("osti", subjects=["42 - ENGINEERING"])) is None  # by the category's number
    assert p.excludes(record("osti", subjects=["36 MATERIALS SCIENCE"])) is not None
    assert "dated before" in p.excludes(record(subjects=["PROPULSION SYSTEMS"], day="1989-12"))
    assert "dated after" in p.excludes(record(subjects=["PROPULSION SYSTEMS"], day="2001"))
    assert p.excludes(record(subjects=["PROPULSION SYSTEMS"], day="2000")) is None  # year-only, inside
    assert p.excludes(record(subjects=["PROPULSION SYSTEMS"])) is None  # undated: kept (missing stays missing)
    only_ntrs = parse_profile('name = "n"\ndescription = "d"\n[ntrs]\n', "n.toml")
    assert "not in profile" in only_ntrs.excludes(record("osti"))
    assert only_ntrs.selections("osti") == []


@pytest.mark.parametrize("text, needle", [
    ("name = 'x'\n[ntrs]\n", "'description'"),
    ("name = 'bad name!'\ndescription = 'd'\n[ntrs]\n", "'name'"),
    ("name = 'x'\ndescription = 'd'\n", "at least one source"),
    ("name = 'x'\ndescription = 'd'\n[arxiv]\n", "unknown key(s) arxiv"),
    ("name = 'x'\ndescription = 'd'\n[ntrs]\nsubject_categories = [1]\n", "list of non-empty strings"),
    ("name = 'x'\ndescription = 'd'\n[ntrs]\nterms = ['a']\n", "takes subject_categories and query_terms"),
    ("name = 'x'\ndescription = 'd'\n[dates]\nfrom = 'soon'\n[ntrs]\n", "YYYY-MM-DD"),
    ("name = \n", "not valid TOML"),
])
def test_profile_mistakes_are_one_clear_line(text, needle):
    with pytest.raises(BadInput) as caught:
        parse_profile(text, "mine.toml")
    assert needle in caught.value.message and "mine.toml" in caught.value.message


def test_the_active_profile_is_a_copy_kept_in_the_home(tmp_path):
    source = tmp_path / "mine.toml"
    source.write_text(TOML)
    assert active_profile(tmp_path) is None
    save_active(tmp_path, load_profile(str(source)))
    source.unlink()  # the home does not depend on the file it came from
    assert active_profile(tmp_path).name == "t"
