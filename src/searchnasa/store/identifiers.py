"""Identifier-aware lookup: a DOI, an NTRS or OSTI id, a report number or a contract number typed
into the query box finds the record(s) that hold it, before any full-text ranking.

Why a table: report and contract numbers are written many ways (``ORNL/TM-2005/102``,
``ornl tm 2005 102``, ``ORNL-TM--2005-102``), and a full-text index splits them into tokens that
match far too much. One SQLite table ``identifiers(kind, value_norm, value, record_id)`` in the
store, keyed on a normalized form, answers "who holds this number" exactly, with one indexed query.
It is maintained incrementally by store ``seq`` (:func:`build_identifier_table`), the same way the
index and the embedder follow the store, and the duplicate detector reuses it for its DOI and
report-number rules.
"""

from __future__ import annotations

import logging
import re
import sqlite3
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Literal
from urllib.parse import unquote

from searchnasa.records import Record, normalize_doi
from searchnasa.store.database import Store

log = logging.getLogger(__name__)

IdentifierKind = Literal["doi", "report", "contract"]
QueryKind = Literal["doi", "id", "number"]

SCHEMA = """
CREATE TABLE IF NOT EXISTS identifiers (
    kind TEXT NOT NULL,
    value_norm TEXT NOT NULL,
    value TEXT NOT NULL,
    record_id TEXT NOT NULL,
    PRIMARY KEY (kind, value_norm, record_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS identifiers_record ON identifiers(record_id);
"""

SEQ_META_KEY = "identifiers_seq"

# Prefixes of report numbers users type with spaces ("NASA TM 2005 213456"); without one of these
# a query with spaces is text, not a number.
KNOWN_PREFIXES = frozenset({
    "NASA", "NACA", "NAS", "NAG", "NCC", "NNX", "NNG", "NNH", "NNL", "NNM", "NNC", "NNJ",
    "SAND", "ORNL", "LA", "LAUR", "LLNL", "UCRL", "BNL", "PNNL", "ANL", "INL", "NREL", "SLAC",
    "FERMILAB", "LBNL", "LBL", "PPPL", "SRNL", "DOE", "DE", "AIAA", "JPL", "CF", "W",
})

_NUMBER_SHAPE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9./\-_()#:]*$")
_NOT_ALNUM = re.compile(r"[^A-Z0-9]+")
_ID_QUERY = re.compile(r"^(ntrs|osti)\s*:\s*(\d{1,20})$", re.IGNORECASE)
# a landing page or API address pasted whole, with or without scheme, "www." and what follows the id
_ID_URL = re.compile(
    r"^(?:https?://)?(?:www\.)?(ntrs\.nasa\.gov/(?:api/)?citations|osti\.gov/(?:biblio|servlets/purl|pages/biblio"
    r"|dataexplorer/biblio/dataset))/(\d{1,20})(?:[^\d\s]\S*)?$",
    re.IGNORECASE,
)
# The longest text taken for an identifier. The two lookups differ on purpose: the search box
# checks the index for a DOI or landing-page address pasted whole, and those can be long; the
# number table holds report and contract numbers, so longer text is prose, never a number.
MAX_SEARCH_QUERY = 300
MAX_TABLE_QUERY = 120


def normalize_number(value: str) -> str:
    """Report and contract numbers compare without case, spaces or punctuation:
    ``ORNL/TM-2005/102`` and ``ornl tm 2005 102`` are both ``ORNLTM2005102``."""
    text = unicodedata.normalize("NFKD", value).encode("ascii", "ignore").decode("ascii")
    return _NOT_ALNUM.sub("", text.upper())


def usable_number(norm: str) -> bool:
    """A number is worth indexing when it is long enough and holds a digit (``TM`` alone is not)."""
    return len(norm) >= 4 and any(c.isdigit() for c in norm)


def split_numbers(value: str) -> list[str]:
    """Sources sometimes pack several numbers in one field (``AC02-09CH11466, SC0011810``): split on
    ``;`` always, and on ``,`` when every part is itself a number."""
    parts = [p.strip() for p in value.split(";") if p.strip()]
    out: list[str] = []
    for part in parts:
        pieces = [p.strip() for p in part.split(",") if p.strip()]
        if len(pieces) > 1 and all(usable_number(normalize_number(p)) for p in pieces):
            out.extend(pieces)
        else:
            out.append(part)
    return out


def record_identifiers(record: Record) -> list[tuple[IdentifierKind, str, str]]:
    """``(kind, value_norm, value)`` rows a record contributes to the table."""
    rows: dict[tuple[str, str], str] = {}
    if record.identifiers.doi:
        rows[("doi", record.identifiers.doi.lower())] = record.identifiers.doi
    for kind, values in (("report", record.identifiers.report_numbers),
                         ("contract", record.identifiers.contract_numbers)):
        for value in (part for v in values for part in split_numbers(v)):
            norm = normalize_number(value)
            if usable_number(norm):
                rows.setdefault((kind, norm), value)
    return [(k, n, v) for (k, n), v in rows.items()]  # type: ignore[misc]


def ensure_schema(store: Store) -> None:
    """Create the table once; readers of a store without it simply find nothing."""
    store.ensure_tables(SCHEMA)


def replace_rows(conn: sqlite3.Connection, records: Iterable[Record]) -> None:
    """Inside an open transaction: drop the rows of these records and write their current ones."""
    write_rows(conn, [(r.id, record_identifiers(r)) for r in records])


def write_rows(conn: sqlite3.Connection, items: list[tuple[str, Iterable[tuple[str, str, str]]]]) -> None:
    """Like :func:`replace_rows` for rows computed elsewhere: ``[(record_id, [(kind, norm, value)])]``."""
    conn.executemany("DELETE FROM identifiers WHERE record_id = ?", [(rid,) for rid, _ in items])
    conn.executemany(
        "INSERT OR IGNORE INTO identifiers (kind, value_norm, value, record_id) VALUES (?,?,?,?)",
        [(k, n, v, rid) for rid, rows in items for k, n, v in rows],
    )


def build_identifier_table(store: Store, batch_size: int = 2000,
                           on_progress: Callable[[int], None] | None = None) -> int:
    """Bring the table up to date with the store; only records changed since the last run are read.

    Each batch commits with its checkpoint, so a killed run resumes where it stopped. Returns the
    number of records (re)indexed.
    """
    ensure_schema(store)
    since = int(store.get_meta(SEQ_META_KEY) or 0)
    done = 0
    batch: list[tuple[int, Record]] = []

    def flush() -> None:
        nonlocal done
        if not batch:
            return
        with store.transaction() as conn:
            replace_rows(conn, (r for _, r in batch))
            store.set_meta(SEQ_META_KEY, str(batch[-1][0]), conn)
        done += len(batch)
        if on_progress:
            on_progress(len(batch))
        batch.clear()

    for seq, record in store.iter_records(since, batch_size=batch_size):
        batch.append((seq, record))
        if len(batch) >= batch_size:
            flush()
    flush()
    return done


def table_exists(store: Store) -> bool:
    return store.has_table("identifiers")


# -- recognizing a query ----------------------------------------------------------------------
@dataclass(frozen=True)
class IdentifierQuery:
    """What a query looks like: a DOI, a record id, or a report/contract number (``number``)."""

    kind: QueryKind
    value: str
    norm: str


def recognize(text: str, max_length: int = MAX_TABLE_QUERY) -> IdentifierQuery | None:
    """Say whether a query is an identifier and which kind; ``None`` for ordinary text.

    The one recognizer of the product: the number table (:func:`lookup`) and the search box
    (:mod:`searchnasa.search.identifiers`) both read a query through it, each with its own
    ``max_length`` (see :data:`MAX_TABLE_QUERY`). Recognition is deliberately loose for numbers
    (one token holding letters and digits, or a known report prefix followed by spaced parts):
    a lookup only answers when a record actually holds the number, so a word like ``H2O2`` costs
    one indexed query and nothing else.
    """
    q = (text or "").strip().strip('"').strip()
    if not q or len(q) > max_length:
        return None
    m = _ID_QUERY.match(q) or _ID_URL.match(q)
    if m:
        source = "ntrs" if m.group(1).lower().startswith("ntrs") else "osti"
        return IdentifierQuery("id", f"{source}:{m.group(2)}", f"{source}:{m.group(2)}")
    doi = normalize_doi(unquote(q))  # a DOI copied from an address may be percent-encoded
    if doi:
        return IdentifierQuery("doi", doi, doi)
    if q.isdigit():
        return IdentifierQuery("number", q, q) if len(q) >= 4 else None
    compact = re.sub(r"\s*([/\-.])\s*", r"\1", q)
    upper = compact.upper()
    if " " in compact and re.split(r"[\s/\-.]", upper, maxsplit=1)[0] not in KNOWN_PREFIXES:
        return None
    if not all(_NUMBER_SHAPE.match(part) for part in compact.split()):
        return None
    norm = normalize_number(compact)
    if not usable_number(norm) or not any(c.isalpha() for c in norm):
        return None
    return IdentifierQuery("number", compact, norm)


@dataclass
class IdentifierMatch:
    """The records that hold an identifier, and which identifier it was (for the notice shown)."""

    kind: str  # doi | id | report | contract
    value: str
    record_ids: list[str] = field(default_factory=list)

    @property
    def label(self) -> str:
        names = {"doi": "DOI", "id": "record id", "report": "report number", "contract": "contract number"}
        return f"{names.get(self.kind, self.kind)} {self.value}"


def lookup(store: Store, text: str, limit: int = 100) -> IdentifierMatch | None:
    """The record(s) holding the identifier typed in ``text``, or ``None`` when it is not one we hold.

    Report numbers win over contract numbers: a report number names one work, a contract number
    many.
    """
    query = recognize(text)
    if query is None:
        return None
    if query.kind == "id":
        return IdentifierMatch("id", query.value, [query.value]) if store.exists(query.value) else None
    has_table = table_exists(store)
    with store.reading() as conn:
        if query.kind == "doi":
            if not has_table:
                return None
            rows = conn.execute(
                "SELECT record_id FROM identifiers WHERE kind='doi' AND value_norm=? ORDER BY record_id LIMIT ?",
                (query.norm, limit)).fetchall()
            return IdentifierMatch("doi", query.value, [r[0] for r in rows]) if rows else None
        if query.value.isdigit():
            ids = [f"{s}:{query.value}" for s in ("ntrs", "osti")]
            found = [i for i in ids if store.exists(i)]
            if found:
                return IdentifierMatch("id", query.value, found)
        if not has_table:
            return None
        for kind in ("report", "contract"):
            rows = conn.execute(
                "SELECT record_id, value FROM identifiers WHERE kind=? AND value_norm=? ORDER BY record_id LIMIT ?",
                (kind, query.norm, limit)).fetchall()
            if rows:
                return IdentifierMatch(kind, rows[0][1], [r[0] for r in rows])
    return None
