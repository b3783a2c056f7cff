"""Read every dump format we know into raw items, and map a raw item to a :class:`Record`.

Reading and mapping are split so the store can keep the raw payload (``format`` + ``payload``) and
``searchnasa renormalize`` can re-map it after a mapping fix without re-harvesting.

A malformed file or line never stops an import: it becomes a :class:`FormatError` carrying the path
and line, the reader moves on, and the caller reports it.
"""

from __future__ import annotations

import csv
import gzip
import io
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from ..errors import FormatError
from ..records import Record
from . import ntrs, osti

# Canonical format names, with the aliases the CLI accepts.
FORMATS = ("ntrs-api", "ntrs-csv", "sti-jsonl", "osti-api", "osti-dataexplorer", "osti-csv", "records-jsonl")

# How complete each format's copy of a record is: a poorer copy never overwrites a richer one.
FIDELITY = {
    "records-jsonl": 3, "ntrs-api": 3, "osti-api": 3, "osti-dataexplorer": 3,
    "ntrs-csv": 2, "osti-csv": 1, "sti-jsonl": 1,
}

MAPPERS: dict[str, Callable[[Any], Record]] = {
    "ntrs-api": ntrs.map_citation,
    "ntrs-csv": ntrs.map_csv_row,
    "sti-jsonl": ntrs.map_sti_export,
    "osti-api": osti.map_record,
    "osti-dataexplorer": osti.map_record,
    "osti-csv": osti.map_csv_row,
    "records-jsonl": Record.model_validate,
}


@dataclass
class RawItem:
    """One record as the source gave it, with where it came from (for error messages)."""

    format: str
    payload: Any
    path: str
    line: int | None = None


def map_item(fmt: str, payload: Any) -> Record:
    """Map a raw payload with its format's mapper; any failure becomes a FormatError."""
    try:
        return MAPPERS[fmt](payload)
    except FormatError:
        raise
    except KeyError as exc:
        raise FormatError(f"unknown format {fmt!r}") from exc
    except Exception as exc:  # pydantic ValidationError, TypeError on odd shapes
        message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise FormatError(f"cannot map record: {message}") from exc


def _read_bytes(path: Path) -> bytes:
    data = path.read_bytes()
    if path.suffix == ".gz" or data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as exc:
            raise FormatError(f"corrupt gzip file: {exc}", str(path)) from exc
    return data


def _decode(data: bytes, path: str) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise FormatError(f"not UTF-8 text (byte 0x{data[exc.start]:02x})", path, line) from exc


def _lines(data: bytes, path: str) -> Iterator[tuple[int, str | FormatError]]:
    """Decode line by line so one badly encoded line costs only itself."""
    for number, raw in enumerate(data.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            yield number, raw.decode("utf-8-sig" if number == 1 else "utf-8")
        except UnicodeDecodeError as exc:
            yield number, FormatError(f"not UTF-8 text (byte 0x{raw[exc.start]:02x})", path, number)


def _first_json_line(head: bytes) -> Any:
    """The first line parsed as JSON when it is a whole JSON value on its own (JSON Lines), else None."""
    first_line = head.lstrip(b"\xef\xbb\xbf").lstrip().split(b"\n", 1)[0].strip()
    if not first_line.startswith(b"{"):
        return None
    try:
        return orjson.loads(first_line)
    except orjson.JSONDecodeError:
        return None


def detect_format(path: Path, head: bytes) -> str:
    """Guess the format from the first bytes; ``--format`` overrides this."""
    text = head.lstrip(b"\xef\xbb\xbf").lstrip()
    first = _first_json_line(text)
    if isinstance(first, dict):
        if "D245A (Title)" in first:
            return "sti-jsonl"
        if "source_id" in first and "source" in first:
            return "records-jsonl"
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


def _read_jsonl(data: bytes, fmt: str, path: str) -> Iterator[RawItem | FormatError]:
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


def _read_csv(data: bytes, fmt: str, path: str) -> Iterator[RawItem | FormatError]:
    good: list[str] = []
    for number, line in _lines(data, path):
        if isinstance(line, FormatError):
            yield line
            good.append("")  # keep line numbers aligned with the file
        else:
            good.append(line)
    if not any(good):
        raise FormatError("empty file", path)
    reader = csv.reader(io.StringIO("\n".join(good)))
    try:
        header = next(reader)
    except (StopIteration, csv.Error) as exc:
        raise FormatError(f"bad CSV header: {exc}", path, 1) from exc
    while header and not header[-1].strip():
        header.pop()  # a trailing comma on the header line names no column
    width = len(header)
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            yield FormatError(f"bad CSV row: {exc}", path, reader.line_num)
            continue
        if not row or not any(cell.strip() for cell in row):
            continue
        while len(row) > width and not row[-1].strip():
            row.pop()
        if len(row) != width:
            yield FormatError(f"bad CSV row: {len(row)} fields, header has {width}", path, reader.line_num)
            continue
        yield RawItem(fmt, dict(zip(header, row)), path, reader.line_num)


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
    data = _read_bytes(path)
    if not data.strip():
        raise FormatError("empty file", str(path))
    fmt = fmt or detect_format(path, data[:65536])
    if fmt not in READERS:
        raise FormatError(f"unknown format {fmt!r}; known: {', '.join(FORMATS)}", str(path))
    # API records may also come one per line (JSON Lines of citations or OSTI records).
    if fmt in ("osti-api", "osti-dataexplorer", "ntrs-api") and isinstance(_first_json_line(data), dict) \
            and data.strip().count(b"\n") > 0:
        yield from _read_jsonl(data, fmt, str(path))
        return
    yield from READERS[fmt](data, fmt, str(path))
