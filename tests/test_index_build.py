"""Building the index: incremental by store seq, atomic for readers, escaping of record text."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

import pytest

from searchnasa.errors import IndexMissing
from searchnasa.index import build_index, layout
from searchnasa.records import Record
from searchnasa.search.schemas import SearchRequest
from searchnasa.search.service import SearchService
from searchnasa.settings import Settings
from searchnasa.store import StoredItem, open_store


@pytest.fixture
def sample_copy(sample_home: Path, tmp_path: Path) -> Path:
    """A private, writable copy of the sample store (no index yet)."""
    home = tmp_path / "home"
    home.mkdir()
    shutil.copy2(sample_home / "store.sqlite3", home / "store.sqlite3")
    return home


def synthetic_record(rid: str, title: str, abstract: str) -> Record:
    """A SYNTHETIC test record (not a real report), made here to exercise edge cases."""
    return Record(id=f"osti:{rid}", source="osti", source_id=rid, title=title, abstract=abstract,
                  links={"landing": f"https://example.invalid/synthetic/{rid}"})


def lexical(service: SearchService, q: str, **kw):
    return service.search(SearchRequest(q=q, mode="lexical", **kw))


def test_incremental_build_reindexes_only_changed_records(sample_copy: Path) -> None:
    settings = Settings().with_home(sample_copy)
    store = open_store(sample_copy)
    first = build_index(store, settings.index_dir)
    assert first.full and first.indexed == 6514 and first.documents == 6514
    service = SearchService(settings)
    assert lexical(service, "zyxwvutsynthetic").total == 0

    again = build_index(store, settings.index_dir)
    assert again.indexed == 0 and not again.full and again.generation == first.generation

    _, rec = next(store.iter_records())
    old_title = rec.title
    changed = rec.model_copy(update={"title": "SYNTHETIC EDIT zyxwvutsynthetic " + old_title})
    counts = store.upsert([StoredItem(changed, "records-jsonl", changed.model_dump(mode="json"))])
    assert counts.changed == 1

    update = build_index(store, settings.index_dir)
    assert update.indexed == 1 and not update.full and update.documents == 6514
    resp = lexical(service, "zyxwvutsynthetic")  # the same service sees the new commit
    assert [h.id for h in resp.results] == [rec.id]
    assert lexical(service, "").total == 6514  # delete-then-add: no duplicate of the changed record
    store.close()


def test_rebuild_swaps_generation_and_keeps_serving(sample_copy: Path) -> None:
    settings = Settings().with_home(sample_copy)
    store = open_store(sample_copy)
    build_index(store, settings.index_dir)
    service = SearchService(settings)
    expected = lexical(service, "wind tunnel").total
    errors: list[BaseException] = []
    totals: set[int] = set()
    stop = threading.Event()

    def searching() -> None:
        while not stop.is_set():
            try:
                totals.add(lexical(service, "wind tunnel", per_page=5).total)
            except BaseException as exc:  # any failure during the rebuild is the bug we look for
                errors.append(exc)
                return

    thread = threading.Thread(target=searching)
    thread.start()
    try:
        reports = [build_index(store, settings.index_dir, rebuild=True) for _ in range(2)]
    finally:
        stop.set()
        thread.join()
    assert not errors, errors
    assert totals == {expected}
    assert [r.full for r in reports] == [True, True]
    assert layout.current_generation(settings.index_dir).name == reports[-1].generation
    assert lexical(service, "wind tunnel").total == expected
    gens = sorted(p.name for p in settings.index_dir.glob("gen-*"))
    assert len(gens) == 2  # the live generation and its predecessor; older ones removed
    store.close()


def test_schema_change_forces_full_build(sample_copy: Path) -> None:
    settings = Settings().with_home(sample_copy)
    store = open_store(sample_copy)
    first = build_index(store, settings.index_dir)
    gen = layout.current_generation(settings.index_dir)
    layout.write_state(gen, layout.GenerationState(schema_version=-1, last_seq=first.last_seq))
    second = build_index(store, settings.index_dir)
    assert second.full and second.generation != first.generation and second.documents == 6514
    store.close()


def test_an_index_from_another_crosswalk_is_outdated_refused_and_rebuilt(sample_copy: Path) -> None:
    """Topics are computed at index time: after the crosswalk changes, the live index's topics are
    stale. It is reported (health, and a 503-class error from a search) rather than served or
    crashing on a field it lacks, and the next build is a full one."""
    from searchnasa.index.health import check_index

    settings = Settings().with_home(sample_copy)
    store = open_store(sample_copy)
    first = build_index(store, settings.index_dir)
    gen = layout.current_generation(settings.index_dir)
    state = layout.read_state(gen)
    assert state.topics and layout.stale_reason(state) is None
    state.topics = "0" * 16
    layout.write_state(gen, state)
    health = check_index(settings.index_dir)
    assert health.state == "outdated" and "topic crosswalk" in health.problem
    with pytest.raises(IndexMissing, match="outdated .*topic crosswalk.*searchnasa index"):
        lexical(SearchService(settings), "topic:propulsion")
    second = build_index(store, settings.index_dir)
    assert second.full and second.generation != first.generation and second.documents == 6514
    assert check_index(settings.index_dir).ok
    assert lexical(SearchService(settings), "topic:propulsion").total > 0
    store.close()


def test_search_without_index_says_so(tmp_home: Path) -> None:
    service = SearchService(Settings().with_home(tmp_home))
    with pytest.raises(IndexMissing):
        lexical(service, "anything")


def test_record_markup_is_escaped(tmp_home: Path) -> None:
    store = open_store(tmp_home)
    bad = synthetic_record(
        "990000001", "SYNTHETIC <b>bold</b> turbine test",
        "SYNTHETIC test record. <script>alert('turbine')</script> & <img src=x onerror=alert(1)> turbine")
    other = synthetic_record("990000002", "SYNTHETIC plain record", "nothing to see")
    store.upsert([StoredItem(r, "records-jsonl", r.model_dump(mode="json")) for r in (bad, other)])
    settings = Settings().with_home(tmp_home)
    build_index(store, settings.index_dir)
    hit = lexical(SearchService(settings), "turbine").results[0]
    assert hit.id == bad.id
    html = hit.snippet_html + hit.title_html
    assert "<script" not in html and "<img" not in html and "<b>" not in html
    assert "&lt;script&gt;" in hit.snippet_html and "&lt;b&gt;" in hit.title_html
    assert "<mark>turbine</mark>" in hit.snippet_html
    assert hit.abstract == bad.abstract  # the raw text stays raw; only the HTML forms are escaped
    store.close()


def test_long_abstract_is_cut_around_the_match(tmp_home: Path) -> None:
    store = open_store(tmp_home)
    filler = "Lorem ipsum dolor sit amet consectetur. " * 40
    rec = synthetic_record("990000003", "SYNTHETIC long abstract",
                           filler + "The magnetohydrodynamic generator was tested. " + filler)
    store.upsert([StoredItem(rec, "records-jsonl", rec.model_dump(mode="json"))])
    settings = Settings().with_home(tmp_home)
    build_index(store, settings.index_dir)
    hit = lexical(SearchService(settings), "magnetohydrodynamic").results[0]
    assert hit.snippet_html.startswith("…") and hit.snippet_html.endswith("…")
    assert "<mark>magnetohydrodynamic</mark>" in hit.snippet_html
    assert len(hit.snippet_html) < 450
    store.close()


def test_phrases_never_span_two_values_and_need_every_word_in_order(tmp_home: Path) -> None:
    store = open_store(tmp_home)
    split = synthetic_record("990000004", "SYNTHETIC split values", "nothing here")
    split = split.model_copy(update={"keywords": ["alpha wind", "tunnel beta"]})
    joined = synthetic_record("990000005", "SYNTHETIC joined", "a closed circuit wind tunnel test")
    shuffled = synthetic_record("990000006", "SYNTHETIC shuffled", "the tunnel wind and circuit wind")
    store.upsert([StoredItem(r, "records-jsonl", r.model_dump(mode="json")) for r in (split, joined, shuffled)])
    settings = Settings().with_home(tmp_home)
    build_index(store, settings.index_dir)
    service = SearchService(settings)
    ids = lambda q: {h.id for h in lexical(service, q).results}  # noqa: E731
    assert ids('"wind tunnel"') == {joined.id}
    assert ids('"closed circuit wind tunnel"') == {joined.id}
    assert ids('"circuit wind tunnel"') == {joined.id}
    assert ids('"tunnel wind circuit"') == set()
    assert ids("wind tunnel") == {split.id, joined.id, shuffled.id}
    store.close()
