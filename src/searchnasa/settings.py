"""Configuration, read in one place: every ``SEARCHNASA_*`` variable, its default and its meaning.

``VARIABLES`` is the table (docs/operations.md shows the same); :class:`Settings` holds the ones
a data home is opened with; :func:`env_value` reads any other one by its short name, at call time,
so tests and operators can change it in a running process. No other module reads or writes the
environment (``tests/test_architecture.py`` checks it): the few that must hand a value to child
processes do it through :func:`export_variable`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path

PREFIX = "SEARCHNASA_"


@dataclass(frozen=True)
class Variable:
    """One setting: its name after ``SEARCHNASA_``, the default used when it is unset, its meaning."""

    name: str
    default: str
    help: str


VARIABLES: tuple[Variable, ...] = (
    # where data lives and which sources to talk to
    Variable("HOME", "./data", "everything the product writes: store.sqlite3, index/, vectors/"),
    Variable("NTRS_API", "https://ntrs.nasa.gov/api", "NTRS API base (any compatible server)"),
    Variable("OSTI_API", "https://www.osti.gov/api/v1", "OSTI API base (any compatible server)"),
    Variable("CONTACT", "searchnasa@example.org", "contact put in the harvester's User-Agent"),
    Variable("PROFILE", "", "collection profile `update` harvests (a bundled name or a TOML path; "
                            "empty: the home's own, else everything)"),
    # serving
    Variable("RATE_LIMIT_PER_MINUTE", "0", "web: requests a minute per client address (0: off)"),
    Variable("PUBLIC_URL", "", "web: the site's public address for feed links (empty: the server's own)"),
    Variable("MAX_BODY_BYTES", "1048576", "web: largest request body accepted, in bytes (past it: 413)"),
    Variable("HEADER_TIMEOUT", "10", "web: seconds a request head may take to arrive (past it: 408, closed)"),
    Variable("BODY_TIMEOUT", "30", "web: seconds a request body may take after its head (past it: closed)"),
    Variable("KEEP_ALIVE", "75", "web: seconds an idle kept-alive connection stays open"),
    Variable("MAX_CONNECTIONS", "0",
             "web: open connections per worker; past it a new one gets 503 (0: 1024 or the open-files limit)"),
    Variable("REQUEST_THREADS", "8", "web: requests a worker computes at once; the rest wait their turn"),
    Variable("LOG_FILE", "", "serve: write the log here, rotated by size (empty: stderr)"),
    Variable("LOG_MAX_BYTES", "10485760", "serve: size at which the log file is rotated"),
    Variable("LOG_BACKUPS", "5", "serve: rotated log files kept"),
    Variable("LOG_REPEAT_SECONDS", "60", "serve: identical log lines within this many seconds are counted, not repeated"),
    Variable("COUNT_BUDGET", "20000000", "postings an exact count may walk before it is cut"),
    Variable("FACET_CACHE", "256", "facet counts remembered per worker (0: off)"),
    # semantic
    Variable("EMBED_BACKEND", "onnx", "embedding backend for documents and queries: onnx (int8, the default) or torch (fp32)"),
    Variable("VECTOR_INDEX", "", "saved vector index past 50,000 vectors: hnsw or ivfpq (empty: last built)"),
    Variable("MODELS_DIR", "", "cache of the ONNX export (empty: $XDG_CACHE_HOME/searchnasa/models)"),
    Variable("EMBED_CACHE", "", "shared embedding cache (empty: $XDG_CACHE_HOME/searchnasa/embeddings.sqlite3)"),
    # harvesting (flags of `searchnasa harvest` override these)
    Variable("HARVEST_RATE", "", "harvest: requests a second (empty: the source's polite default)"),
    Variable("HARVEST_TIMEOUT", "60", "harvest: seconds one request may take"),
    Variable("HARVEST_MAX_ATTEMPTS", "6", "harvest: tries of one request before the harvest stops"),
    Variable("HARVEST_RETRY_BUDGET", "", "harvest: retries one run may spend (empty: no run-wide cap)"),
    Variable("HARVEST_FAILURE_WINDOW", "100", "harvest: the rolling window of requests judged for failures"),
    Variable("HARVEST_MAX_FAILURE_RATIO", "0.5", "harvest: stop when more than this share of the window failed"),
    Variable("HARVEST_BACKOFF", "2.0", "harvest: first backoff in seconds (doubles, with jitter)"),
    Variable("HARVEST_BACKOFF_CAP", "120", "harvest: longest backoff in seconds"),
    Variable("HARVEST_MAX_RETRY_AFTER", "900", "harvest: longest Retry-After honoured, in seconds"),
    Variable("HARVEST_WINDOW_LIMIT", "10000", "harvest: the NTRS result window (page.from + page.size)"),
    Variable("HARVEST_OVERLAP_DAYS", "", "harvest: days before the source's newest date an incremental harvest re-reads (empty: NTRS 7, OSTI 30)"),
    Variable("HARVEST_RECONCILE_MAX", "1000", "harvest --reconcile: most missing records confirmed one by one before it stops"),
    Variable("HARVEST_PAGE_SIZE", "", "harvest: records per request (empty: 100)"),
)
_BY_NAME = {v.name: v for v in VARIABLES}


def env_value(name: str) -> str:
    """``SEARCHNASA_<name>`` now, else its default from :data:`VARIABLES` (an undeclared name is a
    programming error, so every variable is declared, documented and defaulted once)."""
    variable = _BY_NAME[name]
    return os.environ.get(PREFIX + name) or variable.default


def default_of(name: str) -> str:
    """The declared default of ``SEARCHNASA_<name>`` (for code that names it, e.g. a fallback)."""
    return _BY_NAME[name].default


def env_number(name: str, kind: type[int] | type[float]) -> int | float:
    """:func:`env_value` as a number; a value that does not parse falls back to the default."""
    try:
        return kind(env_value(name))
    except ValueError:
        return kind(_BY_NAME[name].default)


def export_variable(name: str, value: str) -> None:
    """Set ``SEARCHNASA_<name>`` for this process and the processes it starts (uvicorn workers,
    Dask workers), which read their configuration from the environment."""
    assert name in _BY_NAME, name
    os.environ[PREFIX + name] = value


def user_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/searchnasa`` (``~/.cache/searchnasa`` when unset): model exports and the
    shared embedding cache live there unless their own variable says otherwise."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "searchnasa"


def offline_model_environment() -> None:
    """Tell the Hugging Face libraries to stay offline (the model ships in an installed package)
    and not to fork tokenizer threads; an operator's own values are kept."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def single_thread_blas_environment() -> None:
    """One thread for every OpenBLAS library this process loads from now on (SciPy's comes with the
    model, loaded in the background after a server starts; the ones already loaded are limited by
    ``web/app.py`` ``one_blas_thread``; faiss's OpenMP build follows its own ``omp_set_num_threads``)."""
    os.environ["OPENBLAS_NUM_THREADS"] = "1"


def quiet_model_loading() -> None:
    """No progress bars while a server loads its model: they are not log lines (no timestamp,
    carriage returns) and a server's stderr is its log. Worker processes inherit it."""
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")


@dataclass(frozen=True)
class Settings:
    """Where data lives and which source APIs to talk to.

    Everything a process writes sits under ``home`` so that a copy of that folder is a complete,
    portable installation (store, index, vectors).
    """

    home: Path = field(default_factory=lambda: Path(env_value("HOME")).resolve())
    ntrs_api: str = field(default_factory=lambda: env_value("NTRS_API"))
    osti_api: str = field(default_factory=lambda: env_value("OSTI_API"))
    contact: str = field(default_factory=lambda: env_value("CONTACT"))
    rate_limit_per_minute: int = field(default_factory=lambda: int(env_value("RATE_LIMIT_PER_MINUTE")))
    max_body_bytes: int = field(default_factory=lambda: int(env_number("MAX_BODY_BYTES", int)))
    # Which embedding backend makes vectors (documents and queries): "onnx" (int8, the default)
    # or "torch" (fp32). Validated where it is used (semantic.embedder.check_backend).
    embed_backend: str = field(default_factory=lambda: env_value("EMBED_BACKEND"))
    # Which saved vector index serves collections past 50,000 vectors: "hnsw" (usearch graph, the
    # fastest, wants ~0.5 GiB of RAM per million vectors) or "ivfpq" (faiss, ~0.06 GiB per million in
    # RAM, int8 rows read from disk per query) for machines whose RAM cannot hold the graph. Empty:
    # whichever `searchnasa embed --vector-index` last built (HNSW when none). See docs/scaling.md.
    vector_index: str = field(default_factory=lambda: env_value("VECTOR_INDEX"))

    @property
    def store_path(self) -> Path:
        return self.home / "store.sqlite3"

    @property
    def index_dir(self) -> Path:
        return self.home / "index"

    @property
    def vectors_dir(self) -> Path:
        return self.home / "vectors"

    def with_home(self, home: str | Path) -> "Settings":
        return replace(self, home=Path(home).resolve())


def get_settings() -> Settings:
    """Read the environment now (not at import), so tests can point SEARCHNASA_HOME anywhere."""
    return Settings()
