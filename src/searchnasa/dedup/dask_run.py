"""Where a dedup run computes its keys: in this process (default), on a local Dask cluster
(``--workers N``) or on an existing Dask scheduler (``--scheduler tcp://host:8786``), the engine
NASA and DOE sites already run with ``dask-jobqueue``. Only key computation is distributed; the
SQLite writes stay in the driver, which is the one writer the store allows."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ..errors import BadInput


@contextmanager
def dask_client(workers: int | None = None, scheduler: str | None = None) -> Iterator[Any | None]:
    """A ``distributed.Client`` for the options given, closed afterwards; ``None`` when neither is set."""
    if workers is None and scheduler is None:
        yield None
        return
    if workers is not None and scheduler is not None:
        raise BadInput("give --workers or --scheduler, not both")
    from distributed import Client, LocalCluster

    if scheduler is not None:
        try:
            client = Client(scheduler, timeout="10s")
        except OSError as exc:
            raise BadInput(f"cannot reach the Dask scheduler at {scheduler}: {exc}") from exc
        try:
            yield client
        finally:
            client.close()
        return
    if workers is None or workers < 1:
        raise BadInput("--workers must be 1 or more")
    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None)
    client = Client(cluster)
    try:
        yield client
    finally:
        client.close()
        cluster.close()
