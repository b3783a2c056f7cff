"""The CSV reader against the standard writer: any table written by ``csv.writer`` (quotes, commas,
newlines inside fields, non-ASCII) reads back cell for cell, each row with the line it starts on.
Generated data, labelled synthetic; the real CSV files are covered in test_import_formats.py."""

from __future__ import annotations

import csv
import io
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from searchnasa.errors import FormatError
from searchnasa.ingest.formats import read_file

# Line ends inside fields are normalised to \n by the reader, so \r is left out of the alphabet.
CELL = st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="\r")
               | st.sampled_from(['"', ",", "\n", " ", "é", "μ"]), max_size=30)
HEADER = ["OstiID", "Title", "Description"]


@settings(max_examples=150, deadline=None)
@given(rows=st.lists(st.tuples(st.from_regex(r"[0-9]{1,9}", fullmatch=True), CELL, CELL), min_size=1, max_size=12),
       ending=st.sampled_from(["\n", "\r\n"]))
def test_csv_written_by_the_standard_writer_reads_back(tmp_path_factory, rows, ending) -> None:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator=ending)
    writer.writerow(HEADER)
    starts = []
    line = 2
    for row in rows:
        starts.append(line)
        before = buffer.tell()
        writer.writerow(row)
        line += buffer.getvalue()[before:].count("\n")
    path = Path(tmp_path_factory.mktemp("csv")) / "synthetic.csv"
    path.write_bytes(buffer.getvalue().encode("utf-8"))
    items = list(read_file(path, "osti-csv"))
    assert not [i for i in items if isinstance(i, FormatError)]
    assert [i.line for i in items] == starts
    assert [tuple(i.payload[h] for h in HEADER) for i in items] == [tuple(r) for r in rows]


@settings(max_examples=60, deadline=None)
@given(rows=st.lists(st.tuples(st.from_regex(r"[0-9]{1,9}", fullmatch=True), CELL, CELL), min_size=3, max_size=10),
       bad=st.integers(min_value=0, max_value=9))
def test_one_unbalanced_quote_costs_one_row(tmp_path_factory, rows, bad) -> None:
    bad %= len(rows)
    lines = [",".join(HEADER)]
    simple = [(i, t.replace("\n", " ").replace('"', "").replace(",", " "), "d") for i, t, _ in rows]
    for n, (oid, title, desc) in enumerate(simple):
        lines.append(f'{oid},"{title},{desc}' if n == bad else f"{oid},{title},{desc}")  # no closing quote
    path = Path(tmp_path_factory.mktemp("csv")) / "synthetic.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    items = list(read_file(path, "osti-csv"))
    errors = [i for i in items if isinstance(i, FormatError)]
    assert [e.line for e in errors] == [bad + 2]
    good = [i.payload["OstiID"] for i in items if not isinstance(i, FormatError)]
    assert good == [oid for n, (oid, _, _) in enumerate(simple) if n != bad]
