"""Read every dump format we know into raw items, and map a raw item to a :class:`Record`.

Reading and mapping are split so the store can keep the raw payload (``format`` + ``payload``) and
``searchnasa renormalize`` can re-map it after a mapping fix without re-harvesting.

A malformed file or line never stops an import: it becomes a :class:`FormatError` carrying the path
and line, the reader moves on, and the caller reports it.
"""

from __future__ import annotations

import csv
import gzip
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
from pydantic import ValidationError

from searchnasa.errors import FormatError
from searchnasa.limits import (
    ABSTRACT_CUT_MARK,
    MAX_ABSTRACT_CHARS,
    MAX_AUTHORS,
    MAX_ENTRY_CHARS,
    MAX_KEYWORDS,
    MAX_TITLE_CHARS,
)
from searchnasa.records import Record, make_id
from searchnasa.ingest import ntrs, osti

# Canonical format names, with the aliases the CLI accepts.
FORMATS = ("ntrs-api", "ntrs-csv", "sti-jsonl", "osti-api", "osti-dataexplorer", "osti-csv", "records-jsonl")

MAPPERS: dict[str, Callable[[Any], Record]] = {
    "ntrs-api": ntrs.map_citation,
    "ntrs-csv": ntrs.map_csv_row,
    "sti-jsonl": ntrs.map_sti_export,
    "osti-api": osti.map_record,
    "osti-dataexplorer": osti.map_record,
    "osti-csv": osti.map_csv_row,
    "records-jsonl": Record.model_validate,
}


# The source every record of a format must have; Record JSONL carries its own (either).
FORMAT_SOURCES: dict[str, str] = {
    "ntrs-api": "ntrs", "ntrs-csv": "ntrs", "sti-jsonl": "ntrs",
    "osti-api": "osti", "osti-dataexplorer": "osti", "osti-csv": "osti",
}
SOURCES = ("ntrs", "osti")
# A native id that itself starts with a source prefix (``ntrs:5`` mapped as an NTRS citation id
# would become ``ntrs:ntrs:5``): a Record JSONL line read as API JSON, never a real native id.
_PREFIXED = re.compile(r"^\s*(?:ntrs|osti)\s*:", re.IGNORECASE)


@dataclass
class RawItem:
    """One record as the source gave it, with where it came from (for error messages)."""

    format: str
    payload: Any
    path: str
    line: int | None = None


def map_item(fmt: str, payload: Any) -> Record:
    """Map a raw payload with its format's mapper; any failure becomes a FormatError."""
    mapper = MAPPERS.get(fmt)
    if mapper is None:
        raise FormatError(f"unknown format {fmt!r}; known: {', '.join(FORMATS)}")
    try:
        record = mapper(payload)
    except FormatError:
        raise
    except ValidationError as exc:  # say which field, not just "1 validation error for Record"
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first.get("loc", ())) or "record"
        raise FormatError(f"cannot map record: {where}: {first.get('msg', 'invalid')}") from exc
    except Exception as exc:  # TypeError/AttributeError on odd shapes
        message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise FormatError(f"cannot map record: {message}") from exc
    check_identity(record, fmt)
    return enforce_limits(record)


def enforce_limits(record: Record) -> Record:
    """The record within the field limits of ``limits.py``, or a FormatError saying which is over.

    Only the abstract is cut: it is long free text whose opening carries the meaning, and the cut
    is said in the text itself, so a reader (and a search for it) sees it was cut, never silently.
    A title, an author or keyword list, or one entry of them past its limit is refused instead:
    such a field is not real metadata but a broken mapping or hostile input, and a record cut to
    fit would look whole while being wrong (a truncated title is a different title, a cut author
    list drops real people without a place to say so).
    """
    if len(record.title) > MAX_TITLE_CHARS:
        raise FormatError(f"title of {len(record.title):,} characters (limit {MAX_TITLE_CHARS:,})")
    if len(record.authors) > MAX_AUTHORS:
        raise FormatError(f"{len(record.authors):,} authors (limit {MAX_AUTHORS:,})")
    for name, values in (("keywords", record.keywords), ("subjects", record.subjects)):
        if len(values) > MAX_KEYWORDS:
            raise FormatError(f"{len(values):,} {name} (limit {MAX_KEYWORDS:,})")
    entries = [*record.keywords, *record.subjects,
               *(text for a in record.authors for text in (a.name, a.affiliation or ""))]
    longest = max(entries, key=len, default="")
    if len(longest) > MAX_ENTRY_CHARS:
        raise FormatError(f"an author, keyword or subject of {len(longest):,} characters "
                          f"(limit {MAX_ENTRY_CHARS:,})")
    mark = ABSTRACT_CUT_MARK.format(limit=MAX_ABSTRACT_CHARS)
    abstract = record.abstract
    if abstract is not None and len(abstract) > MAX_ABSTRACT_CHARS \
            and not (abstract.endswith(mark) and len(abstract) - len(mark) <= MAX_ABSTRACT_CHARS):
        # A cut abstract (ours, re-imported from an export) is left as it is: cutting is idempotent.
        record = record.model_copy(update={"abstract": abstract[:MAX_ABSTRACT_CHARS].rstrip() + mark})
    return record


def check_identity(record: Record, fmt: str) -> None:
    """Refuse a record whose id is not ``source:native-id`` with a known source and a plain native
    id, or whose source is not the one its format holds. Never renamed: a record stored under a
    wrong id (``ntrs:ntrs:5``, ``ntrs:osti:9``) would be a new, false record that no later import
    of the right file replaces.
    """
    if record.source not in SOURCES:
        raise FormatError(f"unknown source {record.source!r}; known: {', '.join(SOURCES)}")
    native = record.source_id
    if not native.strip() or native != native.strip():
        raise FormatError(f"record {record.id!r}: the native id {native!r} is empty or padded with spaces")
    if _PREFIXED.match(native):
        hint = " (this looks like Record JSONL: pass --format records-jsonl)" if fmt != "records-jsonl" else ""
        raise FormatError(f"the native id {native!r} already carries a source prefix; refusing to store it "
                          f"as {make_id(record.source, native)!r}{hint}")
    if record.id != make_id(record.source, native):
        raise FormatError(f"record id {record.id!r} is not source:native-id "
                          f"({make_id(record.source, native)!r} expected)")
    expected = FORMAT_SOURCES.get(fmt)
    if expected is not None and record.source != expected:
        raise FormatError(f"record {record.id!r} has source {record.source!r}, but a {fmt} file holds "
                          f"{expected} records only")


def _read_bytes(path: Path) -> bytes:
    data = path.read_bytes()
    if path.suffix == ".gz" or data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as exc:
            raise FormatError(f"corrupt gzip file: {exc}", str(path)) from exc
    return data


def _open_raw(path: Path) -> Any:
    """The file as a byte stream, gunzipped when compressed (JSON Lines are read line by line)."""
    with open(path, "rb") as fh:
        magic = fh.read(2)
    return gzip.open(path, "rb") if path.suffix == ".gz" or magic == b"\x1f\x8b" else open(path, "rb")


def _read_head(path: Path) -> bytes:
    """At least the first ``_HEAD_BYTES`` of the file (all of it when smaller), in whole lines: a
    first line however long is read to its end, so a JSON Lines file whose first record is over
    1 MiB is still recognised by it. A line over ``_MAX_DETECT_LINE`` is refused (pass --format)."""
    head: list[bytes] = []
    total = 0
    try:
        with _open_raw(path) as fh:
            while total < _HEAD_BYTES:
                line = fh.readline(_MAX_DETECT_LINE + 1)
                if not line:
                    break
                if len(line) > _MAX_DETECT_LINE:
                    raise FormatError(f"cannot tell the format: line {len(head) + 1} is over "
                                      f"{_MAX_DETECT_LINE >> 20} MiB; pass --format", str(path))
                head.append(line)
                total += len(line)
    except (OSError, EOFError) as exc:
        raise FormatError(f"corrupt gzip file: {exc}", str(path)) from exc
    return b"".join(head)


def _stream_lines(path: Path) -> Iterator[bytes]:
    """Lines split on ``\n`` as ``bytes.split`` would, without holding the file in memory
    (a 4M-record JSON Lines dump is 10+ GB uncompressed)."""
    try:
        with _open_raw(path) as fh:
            for raw in fh:
                yield raw[:-1] if raw.endswith(b"\n") else raw
    except (OSError, EOFError) as exc:
        raise FormatError(f"corrupt gzip file: {exc}", str(path)) from exc


def _decode(data: bytes, path: str) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise FormatError(_encoding_message(data[exc.start]), path, line) from exc


def _lines(data: bytes | Iterable[bytes], path: str) -> Iterator[tuple[int, str | FormatError]]:
    """Decode line by line so one badly encoded line costs only itself.

    Lines are counted on ``\n`` (a ``\r\n`` or ``\r\r\n`` ending is one line), so the numbers in
    messages match what ``sed -n Np`` or an editor shows.
    """
    raws = data.split(b"\n") if isinstance(data, bytes) else data
    for number, raw in enumerate(raws, start=1):
        if not raw.strip():
            continue
        try:
            yield number, raw.decode("utf-8-sig" if number == 1 else "utf-8")
        except UnicodeDecodeError as exc:
            yield number, FormatError(_encoding_message(raw[exc.start]), path, number)


def _encoding_message(byte: int) -> str:
    return f"not UTF-8 text (byte 0x{byte:02x}); re-save the file as UTF-8"


_PROBE_LINES = 8
_HEAD_BYTES = 1 << 20  # detection reads this much, in whole lines: enough for several long JSON lines
_MAX_DETECT_LINE = 256 << 20  # a longer line cannot be used to tell the format


def _first_json_line(data: bytes) -> Any:
    """The first of the first few lines that is a whole JSON object on its own (JSON Lines), else None.

    Only lines starting in column 0 with ``{`` count, so pretty-printed JSON (whose first line is a
    lone ``{`` and whose members are indented) is never taken for JSON Lines, while a JSON Lines file
    whose first line is broken is still recognised by its next lines.
    """
    data = data[3:] if data.startswith(b"\xef\xbb\xbf") else data
    start = 0
    for _ in range(_PROBE_LINES):
        end = data.find(b"\n", start)
        line = data[start:] if end == -1 else data[start:end]
        line = line.rstrip(b"\r")
        if start == 0:
            line = line.lstrip()
        if line.startswith(b"{"):
            try:
                value = orjson.loads(line)
            except orjson.JSONDecodeError:
                value = None
            if isinstance(value, dict):
                return value
        if end == -1:
            break
        start = end + 1
    return None


def detect_format(path: Path, head: bytes) -> str:
    """Guess the format from the first bytes; ``--format`` overrides this."""
    text = head.lstrip(b"\xef\xbb\xbf").lstrip()
    first = _first_json_line(head)
    if isinstance(first, dict):
        if "D245A (Title)" in first:
            return "sti-jsonl"
        if "source_id" in first and "source" in first:
            return "records-jsonl"
        if isinstance(first.get("id"), str) and _PREFIXED.match(first["id"]):
            return "records-jsonl"  # our ids (``ntrs:5``) are never an API's native id
        if "osti_id" in first:
            return "osti-api"
        return "ntrs-api"
    if text.startswith((b"{", b"[")):
        if b'"osti_id"' in text:
            if b'"site_ownership_code"' in text or b'"dataset_size"' in text:
                return "osti-dataexplorer"
            return "osti-api"
        return "ntrs-api"
    header = text.split(b"\n", 1)[0].decode("utf-8", "replace")
    if "document_id" in header and "," in header:
        return "ntrs-csv"
    if "OstiID" in header:
        return "osti-csv"
    raise FormatError("cannot tell the format: pass --format", str(path))


def _json_items(doc: Any, fmt: str, path: str) -> Iterator[RawItem]:
    """NTRS: ``{stats, results, aggregations}``, a bare ``results`` list (possibly nested), or one
    citation. OSTI: a JSON array of records or one record."""
    if isinstance(doc, dict):
        if isinstance(doc.get("results"), list):
            yield from _json_items(doc["results"], fmt, path)
        else:
            yield RawItem(fmt, doc, path)
    elif isinstance(doc, list):
        for element in doc:
            if isinstance(element, list):
                yield from _json_items(element, fmt, path)
            else:
                yield RawItem(fmt, element, path)
    else:
        raise FormatError("expected a JSON object or array", path)


def _read_json(data: bytes, fmt: str, path: str) -> Iterator[RawItem | FormatError]:
    text = _decode(data, path)
    if not text.strip():
        raise FormatError("empty file", path)
    try:
        doc = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise FormatError(f"invalid JSON ({exc.msg})", path, exc.lineno) from exc
    yield from _json_items(doc, fmt, path)


def _read_jsonl(data: bytes | Iterable[bytes], fmt: str, path: str) -> Iterator[RawItem | FormatError]:
    seen_any = False
    for number, line in _lines(data, path):
        if isinstance(line, FormatError):
            yield line
            continue
        seen_any = True
        try:
            doc = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            yield FormatError(f"invalid JSON ({exc.msg})", path, number)
            continue
        if fmt in ("records-jsonl", "sti-jsonl"):
            yield RawItem(fmt, doc, path, number)
        else:
            for item in _json_items(doc, fmt, path):
                item.line = number
                yield item
    if not seen_any:
        raise FormatError("empty file", path)


_SURROGATE = re.compile("[\udc80-\udcff]")


def _csv_lines(data: bytes, path: str) -> tuple[list[str], bool]:
    """The file's lines, and whether it was all UTF-8: bytes that are not stay in the text as lone
    surrogates, so the row holding them can be reported and the rest still read."""
    try:
        text = data.decode("utf-8-sig")
        clean = True
    except UnicodeDecodeError:
        text = (data[3:] if data.startswith(b"\xef\xbb\xbf") else data).decode("utf-8", "surrogateescape")
        clean = False
    lines = [line.rstrip("\r") for line in text.split("\n")]
    if not any(line.strip() for line in lines):
        raise FormatError("empty file", path)
    return lines, clean


class _CsvCursor:
    """``csv.reader`` over the lines with the line it has reached (``pos``), so a bad row can be
    reported where it starts and reading can restart on the line after."""

    def __init__(self, lines: list[str], clean: bool, path: str) -> None:
        self.lines, self.clean, self.path = lines, clean, path
        self.pos = 0
        self.restart(0)

    def _feed(self) -> Iterator[str]:
        while self.pos < len(self.lines):
            self.pos += 1
            yield self.lines[self.pos - 1] + "\n"

    def restart(self, pos: int) -> None:
        """Read on from line ``pos`` (0-based) with a fresh reader."""
        # strict: a quote in the wrong place is an error, not a silently merged or shifted row.
        self.pos, self.reader = pos, csv.reader(self._feed(), strict=True)

    def bad_bytes(self, first: int, what: str = "") -> FormatError | None:
        """The first byte that was not UTF-8 in the lines from ``first`` to ``pos`` (decoded as a
        lone surrogate)."""
        if self.clean:
            return None
        for number in range(first, self.pos):
            m = _SURROGATE.search(self.lines[number])
            if m:
                return FormatError(what + _encoding_message(ord(m.group()) - 0xDC00), self.path, number + 1)
        return None


def _csv_header(cursor: _CsvCursor) -> list[str]:
    """The column names: the first row that is not blank, less the empty names a trailing comma
    leaves. A header that cannot be read makes the whole file unusable."""
    header: list[str] = []
    while not header:
        start = cursor.pos
        try:
            header = next(cursor.reader)
        except StopIteration:
            raise FormatError("empty file", cursor.path) from None
        except csv.Error as exc:
            raise FormatError(f"bad CSV header: {exc}", cursor.path, start + 1) from exc
    if problem := cursor.bad_bytes(start, "bad CSV header: "):
        raise problem
    while header and not header[-1].strip():
        header.pop()  # a trailing comma on the header line names no column
    return header


def _read_csv(data: bytes, fmt: str, path: str) -> Iterator[RawItem | FormatError]:
    """Yield one item per row; a bad row is reported at the line it starts on and skipped.

    Line numbers count ``\n`` in the file. After a row with the wrong number of fields that ran
    over several lines (an unbalanced quote), reading restarts on the line after the one where the
    row began, so one stray quote costs one row, not every row up to the next quote. Bytes that are
    not UTF-8 cost only the row holding them.
    """
    cursor = _CsvCursor(*_csv_lines(data, path), path)
    header = _csv_header(cursor)
    width = len(header)
    while True:
        start = cursor.pos
        try:
            row = next(cursor.reader)
        except StopIteration:
            return
        except csv.Error as exc:
            yield FormatError(f"bad CSV row: {exc}", path, start + 1)
            cursor.restart(start + 1)
            continue
        if not row or not any(cell.strip() for cell in row):
            continue
        if problem := cursor.bad_bytes(start):
            yield problem
            continue
        while len(row) > width and not row[-1].strip():
            row.pop()
        if len(row) != width:
            yield FormatError(f"bad CSV row: {len(row)} fields, header has {width}", path, start + 1)
            if cursor.pos - start > 1:  # the row swallowed later lines: read them again as rows
                cursor.restart(start + 1)
            continue
        yield RawItem(fmt, dict(zip(header, row)), path, start + 1)


READERS = {
    "ntrs-api": _read_json,
    "osti-api": _read_json,
    "osti-dataexplorer": _read_json,
    "ntrs-csv": _read_csv,
    "osti-csv": _read_csv,
    "sti-jsonl": _read_jsonl,
    "records-jsonl": _read_jsonl,
}


def read_file(path: Path, fmt: str | None = None) -> Iterator[RawItem | FormatError]:
    """Yield raw items and per-line errors; raise FormatError when the whole file is unusable."""
    if not path.is_file():
        raise FormatError("no such file", str(path))
    if fmt is None:
        head = _read_head(path)
        if len(head) < _HEAD_BYTES and not head.removeprefix(b"\xef\xbb\xbf").strip():
            raise FormatError("empty file", str(path))
        fmt = detect_format(path, head)
    if fmt not in READERS:
        raise FormatError(f"unknown format {fmt!r}; known: {', '.join(FORMATS)}", str(path))
    if READERS[fmt] is _read_jsonl:  # streamed: memory stays flat however large the dump
        yield from _read_jsonl(_stream_lines(path), fmt, str(path))
        return
    data = _read_bytes(path)
    # API records may also come one per line (JSON Lines of citations or OSTI records).
    if fmt in ("osti-api", "osti-dataexplorer", "ntrs-api") and data.strip().count(b"\n") > 0 \
            and isinstance(_first_json_line(data), dict):
        yield from _read_jsonl(data, fmt, str(path))
        return
    yield from READERS[fmt](data, fmt, str(path))
