"""NASA metadata that means something (issue 19): no "Legacy CDMS" organization, one filter value
per NASA center whatever name a record uses, filter labels that read differently, and abstracts
cut short at the source marked as such."""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from searchnasa.organizations import canonical_organization, center_names, is_collection_marker
from searchnasa.web.labels import cut_at_source, distinct_labels
from server_util import Server, copy_home, running_server

SAMPLE = Path(__file__).resolve().parents[1] / "src" / "searchnasa" / "data" / "sample.jsonl.gz"
GLENN_NAMES = ["Glenn Research Center", "NASA Glenn Research Center", "Lewis Research Center",
               "National Advisory Committee for Aeronautics. Lewis Flight Propulsion Lab.",
               "NASA Lewis Research Center, Cleveland, OH"]


@pytest.fixture(scope="module")
def server(indexed_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    base = tmp_path_factory.mktemp("orgs")
    home = copy_home(indexed_home, base / "home")
    with running_server(home, base / "server.log") as srv:
        yield srv


def sample_records() -> list[dict]:
    with gzip.open(SAMPLE, "rt", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


def test_every_name_of_a_center_is_filtered_under_one_name() -> None:
    assert {canonical_organization(n) for n in GLENN_NAMES} == {"NASA Glenn Research Center"}
    assert canonical_organization("Jet Propulsion Lab., California Inst. of Tech.") == "Jet Propulsion Laboratory"
    assert canonical_organization("Langley Aeronautical Laboratory") == "NASA Langley Research Center"
    assert canonical_organization("Dryden Flight Research Center") == "NASA Armstrong Flight Research Center"
    # short names match only whole; anything else keeps its own name
    assert canonical_organization("Headquarters Air Force Materiel Command") == "Headquarters Air Force Materiel Command"
    assert canonical_organization("Stanford Univ.") == "Stanford Univ."
    assert len(center_names()) == 11


def test_the_legacy_collection_marker_is_no_organization_in_the_sample() -> None:
    assert is_collection_marker("Legacy CDMS") and is_collection_marker(None, "CDMS")
    assert not is_collection_marker("Glenn Research Center", "GRC")
    records = sample_records()
    assert not any("CDMS" in o["name"] for r in records for o in r.get("organizations") or [])
    ntrs = [r for r in records if r["source"] == "ntrs"]
    assert len(ntrs) > 5000 and sum(1 for r in ntrs if r.get("organizations")) >= 20


def test_no_card_or_facet_says_legacy_cdms_and_center_names_merge(server: Server) -> None:
    params = {"q": "aircraft", "mode": "lexical", "source": "ntrs", "per_page": 100}
    body = httpx.get(server.base_url + "/api/search", params=params, timeout=30).json()
    assert body["total"] > 100
    organizations = [b["value"] for b in body["facets"]["organization"]]
    assert "Legacy CDMS" not in organizations
    page = httpx.get(server.base_url + "/search", params={"q": "aircraft", "source": "ntrs"}, timeout=30)
    assert page.status_code == 200 and "CDMS" not in page.text
    everything = httpx.get(server.base_url + "/api/search",
                           params={"q": "*", "mode": "lexical", "source": "ntrs"}, timeout=30).json()
    buckets = {b["value"]: b["count"] for b in everything["facets"]["organization"]}
    records = sample_records()
    glenn = [r for r in records if any(canonical_organization(o["name"]) == "NASA Glenn Research Center"
                                       for o in r.get("organizations") or [])]
    names = {o["name"] for r in glenn for o in r["organizations"]}
    assert {"Glenn Research Center", "NASA Glenn Research Center"} <= names  # two spellings in the sample
    assert buckets["NASA Glenn Research Center"] == len(glenn)
    assert "Glenn Research Center" not in buckets
    # a filter by any of the center's names selects the same records
    totals = {httpx.get(server.base_url + "/api/search", timeout=30,
                        params={"q": "*", "mode": "lexical", "organization": name}).json()["total"]
              for name in ("Glenn Research Center", "NASA Glenn Research Center", "Lewis Research Center")}
    assert totals == {len(glenn)}


def test_long_filter_labels_keep_their_distinguishing_end() -> None:
    values = ["USDOE Office of Energy Efficiency and Renewable Energy (EERE), Office of Sustainable "
              "Transportation. Vehicle Technologies Office (VTO)",
              "USDOE Office of Energy Efficiency and Renewable Energy (EERE), Renewable Power Office. "
              "Wind Energy Technologies Office",
              "Short name"]
    labels = distinct_labels(values)
    assert len(set(labels.values())) == 3
    assert labels["Short name"] == "Short name"
    assert labels[values[0]].startswith("USDOE Office of Energy") and labels[values[0]].endswith("(VTO)")
    assert all(len(label) <= 64 for label in labels.values())
    same_ends = ["A" * 40 + " middle one " + "Z" * 30, "A" * 40 + " middle two " + "Z" * 30]
    assert distinct_labels(same_ends) == {v: v for v in same_ends}  # would read alike: shown whole


def test_no_two_filter_labels_on_the_page_read_the_same(server: Server) -> None:
    for params in ({"q": "energy"}, {"q": "battery", "source": "osti"}, {"q": "*"}):
        page = httpx.get(server.base_url + "/search", params=params, timeout=30).text
        for legend in ("Organization", "Subject", "Document type"):
            block = re.search(rf"<legend>{legend}</legend>(.*?)</fieldset>", page, re.S)
            if block is None:
                continue
            labels = re.findall(r'<span title="[^"]*">([^<]*)</span>', block.group(1))
            assert labels and len(labels) == len(set(labels)), (legend, labels)


def test_abstracts_cut_at_the_source_are_marked(server: Server) -> None:
    assert cut_at_source("x" * 300 + " while maintaining high")
    assert not cut_at_source("A whole abstract. " * 20)
    assert not cut_at_source("A short note without a stop")
    records = sample_records()
    cut = [r for r in records if cut_at_source(r.get("abstract"))]
    whole = [r for r in records if r.get("abstract") and not cut_at_source(r["abstract"])]
    assert len(cut) > 100 and all(r["source"] in ("osti", "ntrs") for r in cut)
    page = httpx.get(server.base_url + f"/records/{cut[0]['id']}", timeout=30).text
    assert "[abstract cut short at the source]" in page
    page = httpx.get(server.base_url + f"/records/{whole[0]['id']}", timeout=30).text
    assert "[abstract cut short at the source]" not in page


def test_no_citation_says_legacy_cdms(server: Server) -> None:
    ntrs_ids = [r["id"] for r in sample_records() if r["source"] == "ntrs"][:40]
    for fmt in ("bibtex", "ris", "csl-json", "csv"):
        got = httpx.get(server.base_url + "/api/export", params={"format": fmt, "ids": ntrs_ids}, timeout=60)
        assert got.status_code == 200 and len(got.text) > 1000
        assert "CDMS" not in got.text, fmt
