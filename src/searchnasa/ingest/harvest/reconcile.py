"""The withdrawal pass of ``harvest --reconcile``: what the listing missed, confirmed one by one.

Why confirm each record instead of trusting the listing: a listing can miss records that are still
served (records past NTRS's result window, a record edited out of a ``--query`` selection, a
server that drops a page's worth while the walk runs). Marking those withdrawn would hide live
papers, so every stored record the walk did not see is asked for by id (NTRS
``/citations/{id}``, OSTI ``/records/{osti_id}``); only a 404 (or OSTI's empty list) marks it
withdrawn. That costs one request per missing record, on top of the full walk; a listing missing
more than ``reconcile_max`` records looks broken rather than withdrawn, so the pass stops and says
so before spending those requests. The state stays in the ``confirm`` phase until the marks are
committed (with the checkpoint, in one transaction), so a killed pass is simply run again.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import date
from typing import Any

from searchnasa.errors import HarvestError
from searchnasa.ingest.harvest.checkpoint import checkpoint_name
from searchnasa.ingest.harvest.http import BadBody, ClientError, HarvestClient
from searchnasa.store import Store
from searchnasa.store.withdrawn import mark_withdrawn, unseen

log = logging.getLogger(__name__)

GONE_STATUSES = frozenset({404, 410})


@dataclass
class Outcome:
    """What the pass did, and the finished state committed with the marks."""

    withdrawn: int
    still_upstream: int
    state: dict[str, Any]


def _validate_any(data: Any) -> None:
    if not isinstance(data, (dict, list)):
        raise BadBody("expected a JSON object or array")


def still_served(client: HarvestClient, api: str, record_id: str) -> bool:
    """Whether the source still serves ``record_id`` (``ntrs:<id>`` or ``osti:<osti_id>``)."""
    source, native = record_id.split(":", 1)
    base = api.rstrip("/")
    url = f"{base}/citations/{native}" if source == "ntrs" else f"{base}/records/{native}"
    try:
        data = client.request("GET", url, validate=_validate_any).data
    except ClientError as exc:
        if exc.status in GONE_STATUSES:
            return False
        raise HarvestError(f"{source}: cannot tell whether {record_id} is withdrawn: {exc.message}") from exc
    if source == "osti":
        return isinstance(data, list) and any(isinstance(r, dict) for r in data)
    return isinstance(data, dict) and bool(data)


def withdraw_missing(store: Store, client: HarvestClient, api: str, source: str, name: str,
                     state: dict[str, Any], limit: int) -> Outcome:
    """Mark withdrawn the stored records of selection ``name`` that the finished walk did not see
    and the source no longer serves; the selection's state is ``done`` afterwards."""
    whole = name == checkpoint_name(source)
    missing = unseen(store, name, state["run_id"], source, whole_source=whole)
    if len(missing) > limit:
        raise HarvestError(
            f"{source}: {len(missing):,} stored records are missing from the listing, more than "
            f"SEARCHNASA_HARVEST_RECONCILE_MAX ({limit:,}); the listing looks incomplete, so none was "
            "marked withdrawn. Raise the limit to confirm them one by one (a request each), then "
            "re-run the same command")
    gone = [rid for rid in missing if not still_served(client, api, rid)]
    done = {**state, "phase": "done"}
    on = date.fromisoformat(state["run_started_day"])
    marked = mark_withdrawn(store, gone, on, name, checkpoint=(name, done))
    if marked:
        log.warning("%s: %d records withdrawn upstream (kept in the store, hidden from search)", source, marked)
    return Outcome(withdrawn=marked, still_upstream=len(missing) - len(gone), state=done)
