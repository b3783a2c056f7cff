"""One exception hierarchy for the whole product.

The web layer maps these to ``{"error": {"code", "message"}}`` with the status given here, and the
CLI prints the message on one line and exits non-zero, so no caller needs to know the internals.
"""

from __future__ import annotations


class SearchNasaError(Exception):
    """Base class: every error a user can cause or see."""

    code = "error"
    status = 500

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class BadInput(SearchNasaError):
    """The request or file is malformed: the user can fix it."""

    code = "bad_request"
    status = 400


class NotFound(SearchNasaError):
    """A record or resource does not exist."""

    code = "not_found"
    status = 404


class AmbiguousId(SearchNasaError):
    """A bare number names a record in both sources (``ntrs:N`` and ``osti:N``): the caller must say which."""

    code = "ambiguous_id"
    status = 409


class FormatError(BadInput):
    """A file or line could not be parsed in the format it claims; carries where it happened."""

    code = "format_error"

    def __init__(self, message: str, path: str = "", line: int | None = None) -> None:
        where = path + (f":{line}" if line is not None else "")
        super().__init__(f"{where}: {message}" if where else message)
        self.path = path
        self.line = line


class IndexMissing(SearchNasaError):
    """Searching needs an index that has not been built yet."""

    code = "index_missing"
    status = 503


class StoreError(SearchNasaError):
    """The store could not be read or written (disk full, corrupt file)."""

    code = "store_error"
    status = 503


class HarvestError(SearchNasaError):
    """A harvest stopped (retry budget spent, unexpected response); the checkpoint is kept."""

    code = "harvest_error"
    status = 502


class EmbedderUnavailable(SearchNasaError):
    """The embedding model could not be loaded (its weights are missing or broken)."""

    code = "embedder_unavailable"
    status = 503


class EmbedderBusy(SearchNasaError):
    """The query encoder is loading or busy past the caller's wait: answer without it."""

    code = "semantic_busy"
    status = 503


class UpdateBusy(SearchNasaError):
    """Another ``searchnasa update`` holds the home's lock; this run changed nothing."""

    code = "update_running"
    status = 409


class UpdateFailed(SearchNasaError):
    """A stage of ``searchnasa update`` failed; what it finished before stays done.

    ``stage`` names it and ``exit_code`` is the CLI's exit status for it (docs/operations.md lists
    them), so a timer's logs say which stage to look at; the message says how to resume."""

    code = "update_failed"
    status = 500

    def __init__(self, message: str, stage: str, exit_code: int) -> None:
        super().__init__(message)
        self.stage = stage
        self.exit_code = exit_code
