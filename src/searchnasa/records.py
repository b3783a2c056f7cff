"""The one record model every stage shares: importers and harvesters produce it, the store keeps
it, the index reads it, the web and CLI show it.

Missing stays missing: a record without a date has ``year = None``; nothing here invents values.
"""

from __future__ import annotations

import hashlib
import re
from typing import Literal

import orjson
from pydantic import BaseModel, ConfigDict, Field

Source = Literal["ntrs", "osti"]
DateKind = Literal["published", "issued", "created", "entry", "modified", "distributed"]
Precision = Literal["year", "month", "day"]
OrgRole = Literal["center", "research", "sponsor", "affiliation", "publisher", "contributing"]
RecordKind = Literal["citation", "journal_metadata", "export"]

SOURCE_LABELS: dict[str, str] = {"ntrs": "NASA NTRS", "osti": "DOE OSTI"}

# How complete each raw format's copy of a record is: a poorer copy never overwrites a richer one.
# Here, in the core, because the readers that name the formats (ingest) and the upsert that
# compares them (store) both need it, and the store must not depend on ingest.
FIDELITY = {
    "records-jsonl": 3, "ntrs-api": 3, "osti-api": 3, "osti-dataexplorer": 3,
    "ntrs-csv": 2, "osti-csv": 1, "sti-jsonl": 1,
}
DEFAULT_FIDELITY = 3  # a format not ranked above (a test's or a tool's own) counts as complete


def fidelity_of(raw_format: str) -> int:
    """The rank of ``raw_format`` in :data:`FIDELITY`."""
    return FIDELITY.get(raw_format, DEFAULT_FIDELITY)


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=False)


class Author(_Model):
    """One author as the source gave it; affiliation and ORCID split out when the source mixes them."""

    name: str
    affiliation: str | None = None
    orcid: str | None = None


class RecordDate(_Model):
    """A date with which date it is and how precise it is (``1973``, ``1973-11``, ``1973-11-01``)."""

    value: str
    kind: DateKind
    precision: Precision

    @property
    def year(self) -> int:
        return int(self.value[:4])


class Organization(_Model):
    """An organization and the part it played (NASA center, research org, sponsor, ...)."""

    name: str
    role: OrgRole


class Identifiers(_Model):
    """Identifiers a user may type or cite. DOIs are bare and lower-cased (``10.1103/physrevd.8.3207``)."""

    doi: str | None = None
    report_numbers: list[str] = Field(default_factory=list)
    contract_numbers: list[str] = Field(default_factory=list)
    other: list[str] = Field(default_factory=list)


class Links(_Model):
    """Absolute URLs to the original: the landing page is the 'link to original' on every card."""

    landing: str | None = None
    pdf: str | None = None
    fulltext: str | None = None
    other: list[str] = Field(default_factory=list)


class Rights(_Model):
    """Rights as each source states them; shown, never interpreted as a licence grant."""

    copyright_determination: str | None = None
    license_type: str | None = None
    distribution: str | None = None
    export_control: str | None = None
    availability: str | None = None


class Publication(_Model):
    """Where the work appeared, when the source says so."""

    journal: str | None = None
    volume: str | None = None
    issue: str | None = None
    publisher: str | None = None
    issn: str | None = None


class Record(_Model):
    """A technical report, article or dataset from NTRS or OSTI, in one shape."""

    id: str
    source: Source
    source_id: str
    kind: RecordKind = "citation"
    title: str
    abstract: str | None = None
    authors: list[Author] = Field(default_factory=list)
    date: RecordDate | None = None
    dates: list[RecordDate] = Field(default_factory=list)
    year: int | None = None
    subjects: list[str] = Field(default_factory=list)
    keywords: list[str] = Field(default_factory=list)
    document_type: str | None = None
    document_type_label: str | None = None
    organizations: list[Organization] = Field(default_factory=list)
    identifiers: Identifiers = Field(default_factory=Identifiers)
    links: Links = Field(default_factory=Links)
    rights: Rights = Field(default_factory=Rights)
    publication: Publication | None = None
    language: str | None = None
    related_ids: list[str] = Field(default_factory=list)
    source_modified: str | None = None

    @property
    def source_label(self) -> str:
        return SOURCE_LABELS[self.source]

    @property
    def url(self) -> str | None:
        """The link to the original record (landing page, else the best file we have)."""
        return self.links.landing or self.links.pdf or self.links.fulltext

    def to_json(self) -> bytes:
        """Compact, key-sorted JSON: the export format and the input of :meth:`content_hash`."""
        return orjson.dumps(self.model_dump(mode="json", exclude_none=False), option=orjson.OPT_SORT_KEYS)

    def content_hash(self) -> str:
        """Hash of the normalized content: equal hashes mean an upsert changes nothing."""
        return hash_json(self.to_json())

    @classmethod
    def from_json(cls, data: bytes | str) -> "Record":
        return cls.model_validate(orjson.loads(data))


def hash_json(blob: bytes) -> str:
    """The content hash of a record's :meth:`Record.to_json` bytes (the store hashes the bytes it
    already serialized instead of serializing twice)."""
    return hashlib.blake2b(blob, digest_size=16).hexdigest()


def make_id(source: str, source_id: str) -> str:
    """Global ids are ``ntrs:<id>`` and ``osti:<osti_id>``."""
    return f"{source}:{source_id}"


_DOI_PREFIX = re.compile(r"^(?:https?://(?:dx\.)?doi\.org/|doi:\s*)", re.IGNORECASE)
_DOI_SHAPE = re.compile(r"^10\.\d{4,9}/\S+$")


def normalize_doi(value: object) -> str | None:
    """``https://doi.org/10.11578/1367164`` and ``DOI:10.1103/X`` both become ``10.11578/1367164``.

    The canonical form of :attr:`Identifiers.doi`, so it lives beside the model: the mappers
    produce it and the identifier table matches typed DOIs against it. DOIs are case-insensitive,
    so they are lower-cased for matching; anything that is not a DOI after stripping is dropped
    rather than stored as one.
    """
    if not isinstance(value, str):
        return None
    doi = _DOI_PREFIX.sub("", value.strip()).strip()
    doi = doi.rstrip(".;,")
    if not _DOI_SHAPE.match(doi):
        return None
    return doi.lower()
