"""Batch jobs that are embarrassingly parallel, run in this process or on Dask distributed.

The same command (``searchnasa embed``, ``searchnasa renormalize``) runs three ways, chosen by
``--scheduler``:

- ``local``: in this process, the original code path (the default);
- ``processes``: on a ``dask.distributed.LocalCluster`` of ``--workers`` single-threaded processes;
- an address (``tcp://host:8786``): on a running Dask scheduler, whose workers were started by
  hand (``dask scheduler`` / ``dask worker``) or by ``dask-jobqueue`` on Slurm or PBS.

Why this shape: Dask is the engine NASA and DOE science clusters already run, so the expensive
work (embedding millions of abstracts) goes where the cores are, with no home-made cluster code.
The driver stays the single writer: it reads the store in partitions (seq or id ranges), ships
only the work (texts, raw payloads) to the workers, and writes their results back itself, so the
workers need no access to the data folder and SQLite never sees two writers.
"""

from searchnasa.batch.cluster import LOCAL, PROCESSES, batch_client, check_scheduler, describe_scheduler
from searchnasa.batch.embed import embed_distributed
from searchnasa.batch.partitions import seq_partitions
from searchnasa.batch.renormalize import renormalize_distributed

__all__ = [
    "LOCAL",
    "PROCESSES",
    "batch_client",
    "check_scheduler",
    "describe_scheduler",
    "embed_distributed",
    "renormalize_distributed",
    "seq_partitions",
]
