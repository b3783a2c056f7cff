"""Live harvesters for NTRS and OSTI: polite HTTP, resumable walks, checkpoints in the store.

``runner.run_harvest`` is the entry point the CLI and tests use; ``http`` holds the one HTTP client
(rate limit, retries, backoff), ``ntrs`` and ``osti`` know each API's paging rules.
"""

from searchnasa.ingest.harvest.runner import HarvestOptions, HarvestReport, run_harvest

__all__ = ["HarvestOptions", "HarvestReport", "run_harvest"]
