"""Collection profiles: which records a mirror holds, and the one line the pages say about it.

A profile is a TOML file (a few ship in ``data/profiles/``, a user's own is given by path). Per
source it names subject categories and query terms; a source it leaves out is not harvested, a
source section with neither selects everything the source holds. Date bounds and the text shown
under "Results for" apply to the whole collection.

Why in the core: the harvest (what to fetch), ``stats`` (what lies outside the profile) and the
web (the description line) all read the same profile, and the same :meth:`Profile.excludes`
decides for each of them, on the record as stored. The active profile is a copy kept in the home
(``profile.toml``), so a server started on the home knows it without the file it came from.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from datetime import date
from importlib.resources import files
from pathlib import Path
from typing import Any

from searchnasa.errors import BadInput

SOURCES = ("ntrs", "osti")
ACTIVE_FILE = "profile.toml"
# What the pages said before profiles existed; a home where none was ever chosen keeps it.
DEFAULT_DESCRIPTION = ("NASA NTRS and DOE OSTI research on propulsion, heat transfer, battery "
                       "materials and energy systems")
MAX_DESCRIPTION_CHARS = 300
_CODE = re.compile(r"^\s*(\d{2,3})\b")  # OSTI's numbered DOE categories: "25 ENERGY STORAGE"
_SPACES = re.compile(r"\s+")


def _fold(text: str) -> str:
    return _SPACES.sub(" ", text).strip().casefold()


@dataclass(frozen=True)
class Selection:
    """One server-side query of a source: a category filter or a query term (or everything)."""

    source: str
    label: str                      # for the plan and the checkpoint name
    filters: dict[str, str] = field(default_factory=dict)
    query: str | None = None

    @property
    def checkpoint(self) -> str:
        """The harvest checkpoint of this selection; "everything" shares the plain harvest's."""
        if not self.filters and not self.query:
            return f"harvest:{self.source}"
        return f"harvest:{self.source}:{self.label}"


@dataclass(frozen=True)
class SourceScope:
    """What one source contributes: its categories and terms (both empty: all of it)."""

    categories: tuple[str, ...] = ()
    terms: tuple[str, ...] = ()

    @property
    def everything(self) -> bool:
        return not self.categories and not self.terms


@dataclass(frozen=True)
class Profile:
    """A collection: name, display name, description line, date bounds and per-source scopes."""

    name: str
    display_name: str
    description: str
    sources: dict[str, SourceScope]
    date_from: date | None = None
    date_until: date | None = None
    origin: str = ""
    text: str = ""  # the TOML it was read from, kept in the home when it becomes the active one

    def selections(self, source: str) -> list[Selection]:
        """The server-side queries that together fetch this profile's records of ``source``."""
        scope = self.sources.get(source)
        if scope is None:
            return []
        if scope.everything:
            return [Selection(source, "everything")]
        key = "subjectCategory" if source == "ntrs" else "subject"
        out = [Selection(source, f"{key}={c}", filters={key: c}) for c in scope.categories]
        for term in scope.terms:
            query = f'"{term}"' if " " in term and source == "ntrs" else term
            out.append(Selection(source, f"q={term}", query=query))
        return out

    def excludes(self, record: dict[str, Any]) -> str | None:
        """Why a stored record (its JSON as a dict) lies outside the profile; None when inside.

        A record without a date passes the date bounds: missing stays missing, and a mirror
        would otherwise drop what it cannot judge."""
        scope = self.sources.get(str(record.get("source")))
        if scope is None:
            return f"source {record.get('source')} is not in profile {self.name}"
        day = str((record.get("date") or {}).get("value") or "")[:10]
        if day and self.date_from and day < self.date_from.isoformat()[:len(day)]:
            return f"dated before {self.date_from}"
        if day and self.date_until and day > self.date_until.isoformat()[:len(day)]:
            return f"dated after {self.date_until}"
        if scope.everything or _in_categories(record, scope.categories) or _has_term(record, scope.terms):
            return None
        return f"none of profile {self.name}'s categories or terms"


def _in_categories(record: dict[str, Any], categories: tuple[str, ...]) -> bool:
    """A subject equal to a category, without case; numbered categories match by their number,
    since OSTI writes one category as "42 ENGINEERING" and "42 - ENGINEERING"."""
    subjects = [str(s) for s in record.get("subjects") or []]
    folded = {_fold(s) for s in subjects}
    codes = {m.group(1) for s in subjects if (m := _CODE.match(s))}
    for category in categories:
        m = _CODE.match(category)
        if (m and m.group(1) in codes) or _fold(category) in folded:
            return True
    return False


def _has_term(record: dict[str, Any], terms: tuple[str, ...]) -> bool:
    """A term (a word or phrase, without case) in the title, abstract, keywords or subjects."""
    if not terms:
        return False
    parts = [record.get("title") or "", record.get("abstract") or "",
             *[str(k) for k in record.get("keywords") or []], *[str(s) for s in record.get("subjects") or []]]
    text = _fold(" ".join(str(p) for p in parts))
    return any(_fold(t) in text for t in terms)


def _strings(value: Any, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise BadInput(f"{where} must be a list of non-empty strings")
    return tuple(v.strip() for v in value)


def _day(value: Any, where: str) -> date | None:
    if value is None or isinstance(value, date):
        return value
    try:
        return date.fromisoformat(str(value))
    except ValueError:
        raise BadInput(f"{where} must be a date as YYYY-MM-DD, got {value!r}") from None


def parse_profile(text: str, origin: str) -> Profile:
    """A profile from TOML text; every mistake is one :class:`BadInput` line naming the file."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise BadInput(f"profile {origin}: not valid TOML ({exc})") from None
    name = data.get("name")
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}", name):
        raise BadInput(f"profile {origin}: 'name' must be a short name (letters, digits, . _ -)")
    description = data.get("description")
    if not isinstance(description, str) or not description.strip() or len(description) > MAX_DESCRIPTION_CHARS:
        raise BadInput(f"profile {origin}: 'description' must be one line of at most "
                       f"{MAX_DESCRIPTION_CHARS} characters")
    unknown = set(data) - {"name", "display_name", "description", "dates", *SOURCES}
    if unknown:
        raise BadInput(f"profile {origin}: unknown key(s) {', '.join(sorted(unknown))}; sources are "
                       f"{', '.join(SOURCES)}")
    sources: dict[str, SourceScope] = {}
    for source in SOURCES:
        section = data.get(source)
        if section is None:
            continue
        if not isinstance(section, dict) or set(section) - {"subject_categories", "query_terms"}:
            raise BadInput(f"profile {origin}: [{source}] takes subject_categories and query_terms")
        sources[source] = SourceScope(
            _strings(section.get("subject_categories"), f"profile {origin}: [{source}] subject_categories"),
            _strings(section.get("query_terms"), f"profile {origin}: [{source}] query_terms"))
    if not sources:
        raise BadInput(f"profile {origin}: name at least one source section ([ntrs] or [osti])")
    dates = data.get("dates") or {}
    if not isinstance(dates, dict) or set(dates) - {"from", "until"}:
        raise BadInput(f"profile {origin}: [dates] takes from and until (YYYY-MM-DD)")
    return Profile(name=name, display_name=str(data.get("display_name") or name),
                   description=_SPACES.sub(" ", description).strip(), sources=sources,
                   date_from=_day(dates.get("from"), f"profile {origin}: [dates] from"),
                   date_until=_day(dates.get("until"), f"profile {origin}: [dates] until"), origin=origin, text=text)


def bundled_dir() -> Path:
    return Path(str(files("searchnasa") / "data" / "profiles"))


def bundled_names() -> list[str]:
    return sorted(p.stem for p in bundled_dir().glob("*.toml"))


def load_profile(name_or_path: str) -> Profile:
    """A bundled profile by name, else a TOML file by path."""
    bundled = bundled_dir() / f"{name_or_path}.toml"
    if re.fullmatch(r"[A-Za-z0-9._-]+", name_or_path) and bundled.is_file():
        return parse_profile(bundled.read_text(encoding="utf-8"), name_or_path)
    path = Path(name_or_path).expanduser()
    if not path.is_file():
        raise BadInput(f"no profile {name_or_path!r}: name a bundled one ({', '.join(bundled_names())}) "
                       "or the path of a TOML file")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise BadInput(f"cannot read profile {path}: {exc}") from None
    return parse_profile(text, str(path))


def active_profile(home: Path) -> Profile | None:
    """The profile a home was last updated under (its saved copy); None when none was chosen."""
    path = Path(home) / ACTIVE_FILE
    if not path.is_file():
        return None
    return parse_profile(path.read_text(encoding="utf-8"), str(path))


def save_active(home: Path, profile: Profile) -> None:
    """Keep a copy of ``profile`` in the home (atomically), so a server reads the same one."""
    target = Path(home) / ACTIVE_FILE
    tmp = target.with_name(ACTIVE_FILE + ".tmp")
    tmp.write_text(profile.text, encoding="utf-8")
    tmp.replace(target)


def everything() -> Profile:
    """What a home where no profile was chosen holds: everything, with today's description."""
    return Profile(name="all", display_name="All records", description=DEFAULT_DESCRIPTION,
                   sources={s: SourceScope() for s in SOURCES}, origin="(none chosen)")
