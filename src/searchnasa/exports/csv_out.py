"""CSV for spreadsheets: one row per record, lists joined with ``; ``, quoting by the csv module.

Harvested text is untrusted, and a spreadsheet runs a cell that begins with ``=``, ``+``, ``-``, ``@``
(or a tab or carriage return before one) as a formula: such cells get a leading apostrophe, the
OWASP advice for CSV injection, which spreadsheets show as plain text.
"""

from __future__ import annotations

import csv
import io

from searchnasa.records import Record
from searchnasa.exports.common import authors, one_line

COLUMNS = ("id", "source", "title", "authors", "year", "date", "document_type", "doi", "report_numbers",
           "contract_numbers", "subjects", "url", "pdf", "abstract")


def _row(record: Record) -> list[str]:
    return [
        record.id, record.source_label, one_line(record.title),
        "; ".join(n.display for n in authors(record)),
        str(record.year) if record.year else "",
        record.date.value if record.date else "",
        record.document_type_label or record.document_type or "",
        record.identifiers.doi or "",
        "; ".join(record.identifiers.report_numbers),
        "; ".join(record.identifiers.contract_numbers),
        "; ".join(record.subjects),
        record.url or "", record.links.pdf or "",
        one_line(record.abstract),
    ]


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_safe(value: str) -> str:
    """``value``, made inert if a spreadsheet would read it as a formula."""
    return "'" + value if value.startswith(FORMULA_STARTS) else value


def _line(values: list[str] | tuple[str, ...]) -> str:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\r\n").writerow([spreadsheet_safe(v) for v in values])
    return buf.getvalue()


def header() -> str:
    return _line(COLUMNS)


def entry(record: Record) -> str:
    return _line(_row(record))
