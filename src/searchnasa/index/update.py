"""Bring the derived lookups up to date with the store: the lexical index, the identifier table
and the acronym lexicon.

``searchnasa index`` and ``searchnasa import --index`` both end here, so they treat a damaged
index alike (rebuild it from the store, after saying why) and both keep the store's identifier
table (report and contract numbers) and the mined acronyms (:mod:`.acronym_table`) in step with
the index they just updated.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from searchnasa.index.acronym_table import AcronymUpdate, update_acronyms
from searchnasa.index.build import BuildReport, IndexSession, Progress, build_index
from searchnasa.index.health import check_index
from searchnasa.store import Store, identifiers

CorruptFn = Callable[[str | None], object]
"""Told the problem found, just before a corrupt index is rebuilt instead of updated."""


@dataclass
class IndexUpdate:
    """What an update did; ``identifiers_problem`` / ``acronyms_problem`` say why the identifier
    table / the acronym lexicon was not updated."""

    build: BuildReport
    identifiers_problem: str | None = None
    acronyms: AcronymUpdate | None = None
    acronyms_problem: str | None = None


def rebuild_needed(index_dir: Path, on_corrupt: CorruptFn | None = None) -> bool:
    """Whether the index must be rebuilt because it is corrupt (an update cannot open it)."""
    health = check_index(index_dir)
    if health.state != "corrupt":
        return False
    if on_corrupt is not None:
        on_corrupt(health.problem)
    return True


def update_identifier_table(store: Store) -> str | None:
    """Catch the identifier table up with the store; the problem, when it could not be.

    The lexical index is already built by then, so a failure here only degrades number lookups:
    it is reported, never raised.
    """
    try:
        identifiers.build_identifier_table(store)
    except Exception as exc:  # noqa: BLE001  reported by the caller, see above
        return str(exc)
    return None


def update_acronym_lexicon(store: Store, index_dir: Path, rebuild: bool = False) -> tuple[AcronymUpdate | None, str | None]:
    """Count the changed records' acronym definitions and rewrite the lexicon; the problem, when
    it could not be. Like the identifier table, a failure only degrades search (no expansion):
    it is reported, never raised."""
    try:
        return update_acronyms(store, index_dir, rebuild=rebuild), None
    except Exception as exc:  # noqa: BLE001  reported by the caller, see above
        return None, str(exc)


def _with_lookups(built: BuildReport, store: Store, index_dir: Path, rebuild: bool) -> IndexUpdate:
    acronyms, problem = update_acronym_lexicon(store, index_dir, rebuild)
    return IndexUpdate(built, update_identifier_table(store), acronyms, problem)


def update_index(store: Store, index_dir: Path, rebuild: bool = False, progress: Progress | None = None,
                 on_corrupt: CorruptFn | None = None) -> IndexUpdate:
    """``searchnasa index``: build or update the index from the store, then the identifier table
    and the acronym lexicon (``rebuild`` counts the acronyms again from scratch too)."""
    rebuild = rebuild or rebuild_needed(index_dir, on_corrupt)
    built = build_index(store, index_dir, progress=progress, rebuild=rebuild)
    return _with_lookups(built, store, index_dir, rebuild)


def open_session(store: Store, index_dir: Path, on_corrupt: CorruptFn | None = None) -> IndexSession:
    """An index writer that follows the store while it is written (``import --index``)."""
    return IndexSession(store, index_dir, rebuild=rebuild_needed(index_dir, on_corrupt))


def finish_session(session: IndexSession, store: Store) -> IndexUpdate:
    """Feed what the session still lacks, commit it, then update the identifier table and the
    acronym lexicon."""
    session.feed()  # anything committed before this run that the index lacks
    built = session.commit()
    return _with_lookups(built, store, session.index_dir, rebuild=False)
