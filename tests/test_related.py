"""Related papers on the real sample with its real vectors: self and duplicates excluded, reasons
given, several seeds and a negative honoured, unknown ids refused."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from semantic_util import records_in, semantic_home_from, semantic_service

from searchnasa.errors import BadInput, NotFound
from searchnasa.index import build_index
from searchnasa.records import Record
from searchnasa.search.record_match import is_duplicate
from searchnasa.search.lexical import compile_node
from searchnasa.search.query_tree import Or, Term
from searchnasa.search.related import (CANDIDATES, TWO_PASS_WORDS, Seed, _lexical_candidates, find_related, parts_of,
                                      seed_query, seed_words)
from searchnasa.search.service import SearchService
from searchnasa.semantic import open_semantic, seed_from_bundle
from searchnasa.semantic.provider import VectorProvider
from searchnasa.settings import Settings
from searchnasa.store import StoredItem, open_store


@pytest.fixture(scope="module")
def home(indexed_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return semantic_home_from(indexed_home, tmp_path_factory.mktemp("related_home"))


@pytest.fixture(scope="module")
def service(home: Path) -> SearchService:
    return semantic_service(home)


@pytest.fixture(scope="module")
def records(home: Path) -> dict[str, Record]:
    return records_in(home)


def _with_abstract(records: dict[str, Record], source: str, n: int) -> list[Record]:
    return [r for r in records.values() if r.source == source and r.abstract and len(r.abstract) > 400][:n]


def test_related_excludes_self_and_gives_reasons(service, records) -> None:
    for seed in _with_abstract(records, "ntrs", 2) + _with_abstract(records, "osti", 2):
        items = find_related(service, [seed.id], [], 15)
        assert len(items) == 15
        assert seed.id not in {i.id for i in items}
        assert len({i.id for i in items}) == 15
        assert [i.score for i in items] == sorted((i.score for i in items), reverse=True)
        for item in items:
            assert item.reasons and item.explanation
            assert item.reasons[0].startswith("similar in meaning ") and item.similarity is not None
            assert item.title and item.source_label
            assert item.url == records[item.id].url  # the record's link (STI export lines have none)
            assert len(item.abstract_truncated) <= 301


def test_reasons_name_a_shared_subject_when_there_is_one(service, records) -> None:
    seed = next(r for r in _with_abstract(records, "ntrs", 50) if r.subjects)
    items = find_related(service, [seed.id], [], 20)
    same = [i for i in items if set(records[i.id].subjects) & set(seed.subjects)]
    assert same, "a seed with a subject category should have relatives in it"
    for item in same:
        assert any(r.startswith("same subject: ") for r in item.reasons)
    assert any(r.startswith("shared terms: ") for i in items for r in i.reasons)


def test_related_excludes_exact_duplicates(indexed_home: Path, records, tmp_path: Path) -> None:
    seed = _with_abstract(records, "ntrs", 5)[4]
    home = tmp_path / "dup_home"
    home.mkdir()
    shutil.copy2(indexed_home / "store.sqlite3", home / "store.sqlite3")
    store = open_store(home)
    # the same work under an OSTI id (as when both sources hold it), and a copy with a DOI
    twin = seed.model_copy(update={"id": "osti:99999991", "source": "osti", "source_id": "99999991"})
    store.upsert([StoredItem(twin, "records-jsonl", twin.model_dump(mode="json"))])
    build_index(store, home / "index")
    store.close()
    settings = Settings().with_home(home)
    assert seed_from_bundle(settings) > 6000  # the twin's text matches the seed's: same vector
    service = SearchService(settings, semantic=VectorProvider(settings.vectors_dir))
    ids = [i.id for i in find_related(service, [seed.id], [], 30)]
    assert seed.id not in ids and twin.id not in ids
    assert is_duplicate(seed, twin)


def test_several_seeds_and_a_negative(service, records) -> None:
    a, b = _with_abstract(records, "ntrs", 40)[30:32]
    both = find_related(service, [a.id, b.id], [], 30)
    assert not {a.id, b.id} & {i.id for i in both}
    only_a = [i.id for i in find_related(service, [a.id], [], 30)]
    only_b = [i.id for i in find_related(service, [b.id], [], 30)]
    # two seeds draw relatives from both seeds' neighbourhoods
    ids = {i.id for i in both}
    assert ids & set(only_a) and ids & set(only_b)

    # "more like a, less like b": what resembles b sinks or leaves the list
    plain = find_related(service, [a.id], [], 30)
    minus = find_related(service, [a.id], [b.id], 30)
    assert b.id not in {i.id for i in minus}
    near_b = [i.id for i in plain if i.id in set(only_b)]
    pos_plain = {i.id: n for n, i in enumerate(plain)}
    pos_minus = {i.id: n for n, i in enumerate(minus)}
    for rid in near_b:
        assert pos_minus.get(rid, 99) >= pos_plain[rid]
    assert [i.id for i in plain] != [i.id for i in minus] or not near_b


def test_unknown_and_bad_requests_are_refused(service) -> None:
    with pytest.raises(NotFound) as err:
        find_related(service, ["ntrs:00000000000"], [], 10)
    assert err.value.status == 404
    with pytest.raises(NotFound):
        find_related(service, ["osti:0"], [], 10)
    with pytest.raises(BadInput):
        find_related(service, [], [], 10)
    with pytest.raises(BadInput):
        find_related(service, ["ntrs:1"], [], 0)


def test_related_works_lexically_before_any_embedding(indexed_home: Path, records) -> None:
    settings = Settings().with_home(indexed_home)
    seed = _with_abstract(records, "ntrs", 3)[2]
    items = find_related(SearchService(settings), [seed.id], [], 10)
    assert len(items) == 10 and seed.id not in {i.id for i in items}
    assert all(i.reasons for i in items)
    assert not any(r.startswith("similar in meaning") for i in items for r in i.reasons)
    assert all(i.similarity is None for i in items)


def test_open_semantic_seeds_a_fresh_home_from_the_bundle(indexed_home: Path, tmp_path: Path) -> None:
    shutil.copy2(indexed_home / "store.sqlite3", tmp_path / "store.sqlite3")
    provider = open_semantic(Settings().with_home(tmp_path))
    assert provider.available() and provider.count() > 6000


def test_the_seed_query_scores_as_its_words_or_joined(service, records) -> None:
    """The flat seed query (term clauses only, so Tantivy can skip blocks) gives each record the
    score the seed's words OR-joined give it; a hyphenated word counts as its parts."""
    searcher = service.reader.searcher()
    schema = service.reader.index.schema
    checked = 0
    for seed in _with_abstract(records, "ntrs", 3) + _with_abstract(records, "osti", 3):
        words = [w for w in seed_words([Seed.of(seed)]) if "-" not in w]
        flat = {(a.segment_ord, a.doc): s for s, a in searcher.search(seed_query(schema, words)[0], 30, count=False).hits}
        nested = searcher.search(compile_node(schema, Or(tuple(Term(w) for w in words)), searcher), 30, count=False).hits
        top = [(a.segment_ord, a.doc) for _, a in nested]
        assert list(flat) == top
        for score, addr in nested:
            assert flat[(addr.segment_ord, addr.doc)] == pytest.approx(score, rel=1e-4)
        checked += 1
    assert checked == 6
    parts = searcher.search(seed_query(schema, ["heat", "transfer"])[0], 50, count=False).hits
    hyphenated = searcher.search(seed_query(schema, ["heat-transfer"])[0], 50, count=False).hits
    assert parts and [a.doc for _, a in hyphenated] == [a.doc for _, a in parts]


def test_a_long_seed_is_ranked_in_two_passes_with_exact_scores(service, records) -> None:
    """A paper's words most records hold are split off and scored on the candidates only: each
    candidate's score is still exactly what the one-pass query gives it, and the pool is nearly the
    same (only records that would enter it on common words alone can differ)."""
    searcher = service.reader.searcher()
    schema = service.reader.index.schema
    parts = parts_of(service)
    checked = 0
    for seed in _with_abstract(records, "ntrs", 3) + _with_abstract(records, "osti", 3):
        words = seed_words([Seed.of(seed)])
        assert len(words) >= TWO_PASS_WORDS
        _, common = seed_query(schema, words, searcher)
        assert common is not None  # "the", "of", "and": held by more than COMMON_SHARE of the sample's records
        one_pass = {}
        for score, addr in searcher.search(seed_query(schema, words)[0], 2000, count=False).hits:
            one_pass[searcher.doc(addr).get_first("id")] = score
        two_pass = _lexical_candidates(parts, [Seed.of(seed)], CANDIDATES)
        assert len(two_pass) == CANDIDATES
        for rid, score in two_pass.items():
            assert score == pytest.approx(one_pass[rid], rel=1e-4)
        best = sorted(two_pass, key=lambda rid: -two_pass[rid])[:50]  # the part of the pool that ranks
        assert len(set(list(one_pass)[:50]) & set(best)) >= 48
        checked += 1
    assert checked == 6
    short = seed_words([Seed(title="Heat transfer in the boundary layer of a hypersonic inlet", abstract="")])
    assert seed_query(schema, short, searcher)[1] is None  # a title or a claim: one pass
