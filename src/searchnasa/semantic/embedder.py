"""Turn text into unit-length vectors with all-MiniLM-L6-v2, fully offline.

Vectors are L2-normalized, so a dot product is the cosine similarity. One interface
(:class:`Embedder`), two backends, chosen by ``SEARCHNASA_EMBED_BACKEND`` or
``searchnasa embed --backend`` (see :mod:`.model`):

- ``onnx`` (the default): the model exported to ONNX and quantized to int8 per channel (see
  :mod:`.onnx_export` and :mod:`.onnx_backend`): 2.2-2.7x the documents per second of torch at
  the same retrieval quality (bench/README.md, "Embedding throughput", "ONNX int8 as the default").
- ``torch``: sentence-transformers in fp32, the reference (:class:`TorchBackend`).

Which backend made a vector is part of its key (:mod:`.text_keys`), so the two are never mixed.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from functools import lru_cache

import numpy as np

from searchnasa.errors import EmbedderBusy
from searchnasa.semantic.model import (
    DIM, MAX_TEXT_CHARS, MODEL_NAME, check_backend, default_backend, model_dir,
)
from searchnasa.semantic.onnx_backend import OnnxBackend
from searchnasa.semantic.text_keys import model_key, text_key
from searchnasa.settings import offline_model_environment

log = logging.getLogger(__name__)

SMALL_BATCH = 4  # up to this many texts (queries) are embedded on one thread


class TorchBackend:
    """sentence-transformers on torch, fp32: the reference backend."""

    name = "torch"

    def __init__(self, threads: int | None = None) -> None:
        # imported here: loading torch takes seconds, and a process that serves only lexical
        # search (or only the ONNX backend) never needs it
        import torch
        from sentence_transformers import SentenceTransformer

        if threads:
            torch.set_num_threads(threads)
        self._model = SentenceTransformer(str(model_dir()), device="cpu", local_files_only=True)

    def encode(self, texts: Sequence[str], batch_size: int, small: bool) -> np.ndarray:
        import torch

        # A query or two is too small to split across threads: the threads' hand-offs cost more
        # than they save, and on a busy machine far more (bench/README.md).
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
        self._impl: TorchBackend | OnnxBackend
        if self.backend == "onnx":
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
    """The process-wide model of a backend (default: :func:`.model.default_backend`), loaded on
    first use."""
    return _embedder_for(check_backend(backend or default_backend()))
