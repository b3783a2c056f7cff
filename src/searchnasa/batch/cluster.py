"""Turn ``--scheduler`` / ``--workers`` into a ``distributed.Client`` (or none, for in-process), and
run a stream of jobs on it with a bounded number in flight."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from searchnasa.errors import BadInput

J = TypeVar("J")

LOCAL = "local"
PROCESSES = "processes"


def describe_scheduler(scheduler: str, workers: int) -> str:
    """One line for the user: where the work runs."""
    if scheduler == LOCAL:
        return "in this process"
    if scheduler == PROCESSES:
        return f"a local Dask cluster of {workers} worker process(es)"
    return f"the Dask scheduler at {scheduler}"


def check_scheduler(scheduler: str, workers: int) -> None:
    """Reject a bad --scheduler or --workers before any work starts."""
    if workers < 1:
        raise BadInput("--workers must be 1 or more")
    if scheduler in (LOCAL, PROCESSES):
        return
    if "://" not in scheduler and ":" not in scheduler:
        raise BadInput(f"--scheduler must be 'local', 'processes' or a scheduler address such as "
                       f"tcp://host:8786, not {scheduler!r}")


@contextmanager
def batch_client(scheduler: str = LOCAL, workers: int = 2) -> Iterator[Any | None]:
    """A connected ``distributed.Client``, closed (and its local cluster stopped) afterwards.

    ``local`` yields None: the caller runs its in-process path. ``processes`` starts a
    ``LocalCluster`` of ``workers`` processes with one thread each (the models inside use their
    own threads; one per worker keeps the cores from being oversubscribed). An address connects
    to a running scheduler; ``workers`` is then ignored (the cluster has what it has).
    """
    check_scheduler(scheduler, workers)
    if scheduler == LOCAL:
        yield None
        return
    from distributed import Client, LocalCluster

    if scheduler == PROCESSES:
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                               dashboard_address=None, silence_logs=40)
        client = Client(cluster)
        try:
            yield client
        finally:
            client.close()
            cluster.close()
        return
    import dask.config

    try:  # how long to try: dask's own setting (DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT)
        client = Client(scheduler, timeout=dask.config.get("distributed.comm.timeouts.connect"))
    except (OSError, TimeoutError, ValueError) as exc:
        raise BadInput(f"cannot reach the Dask scheduler at {scheduler}: {exc}") from exc
    try:
        yield client
    finally:
        client.close()


def worker_count(client: Any) -> int:
    """How many workers the cluster has now (at least 1, for sizing the in-flight window)."""
    try:
        return max(1, len(client.scheduler_info().get("workers", {})))
    except Exception:  # the count only sizes a window; a guess is fine
        return 1


_END = object()


def bounded_results(client: Any, jobs: Iterable[J], submit: Callable[[J], Any | None],
                    window: int | None = None) -> Iterator[tuple[J, Any]]:
    """``(job, result)`` for every job, as the cluster finishes them, with at most ``window``
    (default twice the workers, plus one) in flight, so the driver never holds more than a few
    partitions of input however large the store is.

    ``submit(job)`` returns a future, or ``None`` when the job needs no cluster work: such a job is
    yielded at once with the result ``None``. Each future is released once its result is read, so
    the scheduler forgets it.
    """
    from distributed import as_completed

    window = window or 2 * worker_count(client) + 1
    queue = iter(jobs)
    pending: dict[str, J] = {}
    futures = as_completed()

    def fill() -> Iterator[tuple[J, Any]]:
        while len(pending) < window:
            job = next(queue, _END)
            if job is _END:
                return
            future = submit(job)  # type: ignore[arg-type]
            if future is None:
                yield job, None  # type: ignore[misc]
                continue
            pending[future.key] = job  # type: ignore[assignment]
            futures.add(future)

    yield from fill()
    for future in futures:
        job = pending.pop(future.key)
        result = future.result()
        future.release()
        yield job, result
        yield from fill()
