"""``searchnasa update --dry-run``: the stages a run would go through, what each would touch, and
an estimate of requests and time, without writing anything.

Why estimates from one count request per selection: a walk's cost is its record count divided by
the page size (plus NTRS's window planning), and each API answers the count in one cheap request,
so the plan is right to within a few requests. Derived stages are estimated from the records
waiting for them at the throughputs measured in bench/README.md ("Today's figures"); the
embedding figure is for 2 CPU cores and torch, the slowest case.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from searchnasa.batch.update import UpdateOptions, check_sources, resolve_profile
from searchnasa.batch.update_harvest import WalkEstimate, estimate_walks
from searchnasa.batch.update_stages import semantic_unavailable
from searchnasa.index.layout import current_generation, read_state
from searchnasa.semantic.vectors import embedded_upto
from searchnasa.settings import Settings
from searchnasa.store import Store, open_store

# bench/README.md, "Today's figures": index 3,404 rec/s (4M); torch embedding 16-20 docs/s on
# 2 cores; full dedup 5,600-9,500 rec/s.
INDEX_PER_SECOND = 3400.0
EMBED_PER_SECOND = 18.0
DEDUP_PER_SECOND = 5600.0


@dataclass
class PlannedStage:
    name: str
    touches: str
    records: int | None = None
    requests: int | None = None
    seconds: float | None = None
    walks: list[WalkEstimate] = field(default_factory=list)


@dataclass
class UpdatePlan:
    profile: str
    description: str
    becomes_active: bool
    stages: list[PlannedStage]

    @property
    def requests(self) -> int | None:
        known = [s.requests for s in self.stages if s.requests is not None]
        return sum(known) if known else None

    @property
    def seconds(self) -> float:
        return sum(s.seconds or 0.0 for s in self.stages)


def _harvest(source: str, settings: Settings, options: UpdateOptions, profile, store) -> PlannedStage:
    walks = estimate_walks(source, profile, store, settings, options.rate, options.page_size)
    known = [w for w in walks if w.records is not None]
    stage = PlannedStage(f"harvest:{source}", f"{source} API ({len(walks)} walk(s)); store.sqlite3", walks=walks)
    if walks and len(known) == len(walks):
        stage.records = sum(w.records or 0 for w in walks)
        stage.requests = sum(w.requests or 0 for w in walks)
        stage.seconds = sum(w.seconds or 0.0 for w in walks)
    return stage


def plan_update(settings: Settings, options: UpdateOptions) -> UpdatePlan:
    """What ``update`` would do now (network: one count request per profile selection)."""
    sources = check_sources(options.sources)
    profile, becomes_active = resolve_profile(settings, options.profile)
    # read only: a dry run writes nothing, not even a new home's empty store
    store = open_store(settings.home, readonly=True) if settings.store_path.exists() else Store(Path(":memory:"))
    try:
        stages = [_harvest(s, settings, options, profile, store) for s in sources if profile.selections(s)]
        fetched = sum(s.records or 0 for s in stages)
        generation = current_generation(settings.index_dir)
        state = read_state(generation) if generation else None
        unindexed = store.count_since(state.last_seq if state else 0) + fetched
        stages.append(PlannedStage("index", f"index/ ({generation.name if generation else 'a new index'})",
                                   unindexed, seconds=unindexed / INDEX_PER_SECOND))
        why = "--no-semantic" if options.semantic is False else semantic_unavailable()
        if why is None:
            unembedded = store.count_since(embedded_upto(settings.vectors_dir) or 0) + fetched
            stages.append(PlannedStage("embed", "vectors/vectors.sqlite3 (new and changed texts only)",
                                       unembedded, seconds=unembedded / EMBED_PER_SECOND))
            stages.append(PlannedStage("vectors", "vectors/ (HNSW or IVF-PQ past 50,000 vectors)"))
        else:
            stages.append(PlannedStage("embed", f"skipped: {why}"))
        from searchnasa.dedup import records_to_compare

        todo = records_to_compare(store) + fetched
        stages.append(PlannedStage("dedup", "store.sqlite3 (duplicate clusters)", todo,
                                   seconds=todo / DEDUP_PER_SECOND))
        stages.append(PlannedStage("identifiers", "store.sqlite3 (identifier table)", unindexed))
    finally:
        store.close()
    return UpdatePlan(profile.name, profile.description, becomes_active, stages)
