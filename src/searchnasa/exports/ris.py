"""RIS (the format reference managers import): one ``TAG  - value`` line per field, ``ER`` last.

RIS has no escaping, so every value is put on one line; repeated tags (AU, KW, UR) carry lists."""

from __future__ import annotations

from searchnasa.records import Record
from searchnasa.exports.common import (
    WORK_TYPES,
    authors,
    date_parts,
    one_line,
    publisher_of,
    report_number,
    work_type,
)


def entry(record: Record) -> str:
    kind = work_type(record)
    lines: list[tuple[str, str]] = [("TY", WORK_TYPES[kind][1]), ("ID", record.id),
                                    ("TI", one_line(record.title))]
    lines += [("AU", n.display) for n in authors(record)]
    parts = date_parts(record)
    if parts:
        lines.append(("PY", str(parts[0])))
        padded = [f"{parts[0]:04d}"] + [f"{p:02d}" for p in parts[1:]]
        lines.append(("DA", "/".join(padded + [""] * (3 - len(padded))) + "/"))
    if record.abstract:
        lines.append(("AB", one_line(record.abstract)))
    lines += [("KW", one_line(k)) for k in (record.keywords or record.subjects)]
    pub = record.publication
    if pub:
        if pub.journal:
            lines.append(("JO", one_line(pub.journal)))
        if pub.volume:
            lines.append(("VL", one_line(pub.volume)))
        if pub.issue:
            lines.append(("IS", one_line(pub.issue)))
    number = report_number(record)
    if kind == "report" and number:
        lines.append(("SN", number))  # RIS puts the report number in SN for RPRT
    elif pub and pub.issn:
        lines.append(("SN", one_line(pub.issn)))
    publisher = publisher_of(record, kind)
    if publisher:
        lines.append(("PB", one_line(publisher)))
    if record.identifiers.doi:
        lines.append(("DO", record.identifiers.doi))
    if record.url:
        lines.append(("UR", record.url))
    if record.links.pdf:
        lines.append(("L1", record.links.pdf))
    if record.language:
        lines.append(("LA", one_line(record.language)))
    lines.append(("DB", record.source_label))
    lines.append(("AN", record.source_id))
    lines.append(("ER", ""))
    return "".join(f"{tag}  - {value}\n" for tag, value in lines) + "\n"
