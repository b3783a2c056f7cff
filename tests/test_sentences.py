"""The sentence splitter sentence vectors are made of (searchnasa/sentences.py)."""

from __future__ import annotations

import gzip

import orjson

from searchnasa.ingest.sample import sample_path
from searchnasa.sentences import MAX_SENTENCE_CHARS, MAX_SENTENCES, record_sentences, split_sentences


def test_splits_at_sentence_ends_and_not_inside_numbers_or_abbreviations() -> None:
    text = ("Film cooling effectiveness was measured at blowing ratios 0.5-2. Results show a 20% gain, "
            "e.g. at M = 1.5 (Fig. 3). Smith et al. found the same in 1998. The U.S. Navy funded the "
            "tests! Why does it work? Nobody knows yet.")
    assert split_sentences(text) == [
        "Film cooling effectiveness was measured at blowing ratios 0.5-2.",
        "Results show a 20% gain, e.g. at M = 1.5 (Fig. 3).",
        "Smith et al. found the same in 1998.",
        "The U.S. Navy funded the tests!",
        "Why does it work? Nobody knows yet.",  # a three-word fragment joins its neighbour
    ]


def test_short_fragments_join_and_whitespace_collapses() -> None:
    assert split_sentences("Results.   The wing stalled at high angles\nof attack.") == [
        "Results. The wing stalled at high angles of attack."]
    assert split_sentences("") == [] and split_sentences(None) == [] and split_sentences("  \n ") == []


def test_a_lower_case_continuation_is_not_a_new_sentence() -> None:
    assert len(split_sentences("The flow was measured with approx. five probes in the wake region.")) == 1
    assert len(split_sentences("The flow was measured in the wake. then it was measured again later.")) == 1


def test_record_units_are_the_title_then_the_abstract_bounded() -> None:
    abstract = " ".join(f"Sentence number {i} says one thing about the nozzle." for i in range(40))
    units = record_sentences("A nozzle study", abstract)
    assert units[0] == "A nozzle study"
    assert len(units) == MAX_SENTENCES
    assert record_sentences("", "One whole sentence about thrust.") == ["One whole sentence about thrust."]
    assert all(len(u) <= MAX_SENTENCE_CHARS for u in record_sentences("t", "word " * 1000))


def test_real_abstracts_split_into_several_sentences_that_rebuild_the_text() -> None:
    """On the bundled sample: abstracts split into sentences whose words are the abstract's words."""
    counts = []
    with gzip.open(sample_path()) as fh:
        for line in list(fh)[:300]:
            rec = orjson.loads(line)
            if not rec.get("abstract") or len(rec["abstract"]) > 2000:
                continue
            sentences = split_sentences(rec["abstract"])
            if any(len(s) == MAX_SENTENCE_CHARS for s in sentences):  # a run-on cut at the cap
                continue
            assert " ".join(sentences).split() == rec["abstract"].split()
            counts.append(len(sentences))
    assert len(counts) > 100
    assert sum(counts) / len(counts) > 2.5  # real abstracts hold several claims
