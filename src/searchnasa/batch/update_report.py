"""What ``searchnasa update`` is asked and what it tells: options, the events a caller draws
progress from, and the report (per source tallies, per stage durations).

Apart from the pipeline so that the stages (``update_stages``) and the pipeline (``update``) can
both use them without importing each other.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from searchnasa.batch.update_harvest import SourceTally
from searchnasa.profiles import SOURCES


@dataclass
class UpdateOptions:
    """What ``searchnasa update`` was asked; None: the home's or the environment's choice."""

    profile: str | None = None
    sources: tuple[str, ...] = SOURCES
    semantic: bool | None = None   # None: when the embedding model is installed
    rate: float | None = None
    page_size: int | None = None
    reconcile: bool = False        # also mark records withdrawn upstream (a full walk; monthly)


@dataclass
class StageReport:
    name: str
    seconds: float = 0.0
    records: int = 0
    detail: str = ""
    skipped: str | None = None

    @property
    def per_second(self) -> float | None:
        return self.records / self.seconds if self.records and self.seconds > 0 else None


@dataclass
class UpdateReport:
    profile: str | None
    sources: dict[str, SourceTally] = field(default_factory=dict)
    stages: list[StageReport] = field(default_factory=list)
    took_over: dict[str, Any] | None = None
    seconds: float = 0.0


class UpdateEvents(Protocol):
    """What a run tells its caller (the CLI draws progress bars from it)."""

    def stage_started(self, name: str, label: str, total: int | None) -> None: ...
    def stage_progress(self, name: str, done: int, total: int | None, label: str | None = None) -> None: ...
    def stage_finished(self, report: StageReport) -> None: ...
    def notice(self, line: str) -> None: ...
