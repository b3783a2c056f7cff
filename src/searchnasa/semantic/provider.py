"""The semantic provider: what the search service and related papers call to get meaning-based
candidates. It satisfies the service's provider protocol (``available()``,
``query_candidates(text, k)``) and the related-papers one (``vectors_for``, ``nearest``,
``embed_text``).

It opens the home's vector store read-mostly, keeps the vectors in memory as one float32 matrix
(exact search below :data:`~.ann.EXACT_BELOW` vectors, the saved usearch HNSW index above), and
reloads when ``searchnasa embed`` has changed the vectors. Until any vectors exist it says it is
not available and search stays lexical.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..settings import Settings, get_settings
from .ann import EXACT_BELOW, ExactIndex, HnswIndex
from .embedder import Embedder, EmbedderBusy, get_embedder
from .vectors import VectorStore

log = logging.getLogger(__name__)

RELOAD_CHECK_SECONDS = 2.0
# How long a web search waits for the query encoder; past it (model still loading, or busy under
# load) the search answers with keyword matches and says so, instead of queueing.
QUERY_WAIT_SECONDS = 0.5
QUERY_CACHE_SIZE = 512
# A query's candidates must be at least this similar (cosine, all-MiniLM-L6-v2) to count as
# related in meaning. Measured (bench/README.md, "Similarity floor"): nonsense queries
# ("zzhostilesynthetic", "qwxzvbn", "xyzzy plugh", ...) reach at most 0.30 against the sample,
# SciFact and NPL; the best match of a real query is above 0.35 for 99% of SciFact and NPL
# queries, and judged-relevant documents have a median cosine of 0.50-0.59. Below the floor a
# neighbour is as close as a random pairing, so it is noise rather than a semantic match.
SIMILARITY_FLOOR = 0.33


class SemanticProvider:
    """Semantic candidates for queries and records, from one home's vectors."""

    def __init__(self, vectors_dir: Path, embedder: Embedder | None = None,
                 exact_below: int = EXACT_BELOW) -> None:
        self.vectors_dir = Path(vectors_dir)
        self._embedder = embedder
        self._exact_below = exact_below
        self._lock = threading.RLock()
        self._version: str | None = None
        self._checked = 0.0
        self._ids: list[str] = []
        self._pos: dict[str, int] = {}
        self._matrix = np.zeros((0, 384), dtype=np.float32)
        self._index: ExactIndex | HnswIndex | None = None
        self._queries: OrderedDict[str, np.ndarray] = OrderedDict()
        self._loader: threading.Thread | None = None

    # -- loading ------------------------------------------------------------------------------
    def _vstore(self) -> VectorStore | None:
        if not (self.vectors_dir / VectorStore.FILENAME).is_file():
            return None
        return VectorStore(self.vectors_dir)

    def _refresh(self) -> None:
        now = time.monotonic()
        if self._version is not None and now - self._checked < RELOAD_CHECK_SECONDS:
            return
        with self._lock:
            self._checked = now
            vs = self._vstore()
            if vs is None:
                return
            try:
                version = vs.version()
                if version == self._version:
                    return
                ids, matrix = vs.load_all()
            finally:
                vs.close()
            index: ExactIndex | HnswIndex
            if len(ids) >= self._exact_below:
                matrix = matrix.astype(np.float16)  # half the memory; rows are cast back on use
                hnsw = HnswIndex.load(self.vectors_dir, version, rescore=matrix)
                if hnsw is None or hnsw.ids != ids:
                    log.info("building the HNSW index over %d vectors", len(ids))
                    hnsw = HnswIndex.build(ids, matrix.astype(np.float32))
                    hnsw.save(self.vectors_dir, version)
                    hnsw.rescore = matrix
                index = hnsw
            else:
                index = ExactIndex(ids, matrix)
            self._ids, self._matrix, self._index = ids, matrix, index
            self._pos = {rid: i for i, rid in enumerate(ids)}
            self._version = version
            log.info("semantic provider: %d vectors (%s)", len(ids), type(index).__name__)

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            self._embedder = get_embedder()
        return self._embedder

    def _loaded_embedder(self) -> Embedder:
        """The model if it is loaded; else load it in the background and say busy meanwhile."""
        if self._embedder is not None:
            return self._embedder
        with self._lock:
            if self._loader is None:
                self._loader = threading.Thread(target=lambda: self.embedder, daemon=True,
                                                name="load-query-encoder")
                self._loader.start()
        raise EmbedderBusy("the semantic model is still loading")

    # -- the service protocol -----------------------------------------------------------------
    def available(self) -> bool:
        """True once any record has a vector; search stays lexical until then."""
        self._refresh()
        return bool(self._ids)

    def count(self) -> int:
        self._refresh()
        return len(self._ids)

    def embed_text(self, text: str, wait: float | None = None) -> np.ndarray:
        """A query's unit vector, memoized (the same query is often asked page after page).

        With ``wait`` (searches), raises :class:`EmbedderBusy` rather than queue past it."""
        key = text.strip()
        with self._lock:
            hit = self._queries.get(key)
            if hit is not None:
                self._queries.move_to_end(key)
                return hit
        if wait is None:
            vec = self.embedder.encode_query(key)
        else:
            vec = self._loaded_embedder().encode_query(key, wait=wait)
        with self._lock:
            self._queries[key] = vec
            while len(self._queries) > QUERY_CACHE_SIZE:
                self._queries.popitem(last=False)
        return vec

    def query_candidates(self, text: str, k: int,
                         floor: float = SIMILARITY_FLOOR, wait: float | None = None) -> list[tuple[str, float]]:
        """Up to ``k`` records nearest in meaning to ``text`` as (id, cosine), best first; only
        those at least ``floor`` similar (see :data:`SIMILARITY_FLOOR`), so a query that means
        nothing to the model gets no semantic candidates instead of its 200 least-bad neighbours.
        ``wait``: see :meth:`embed_text` (None blocks until the model answers)."""
        if not text.strip() or not self.available():
            return []
        return [(rid, sim) for rid, sim in self.nearest(self.embed_text(text, wait=wait), k)
                if sim >= floor]

    def similarities(self, text: str, ids: Sequence[str]) -> dict[str, float]:
        """Cosine of ``text`` to each given record that has a vector (for fusing lexical-only hits)."""
        if not text.strip() or not self.available():
            return {}
        vec = self.embed_text(text)
        vecs = self.vectors_for(ids)
        return {rid: float(np.dot(v, vec)) for rid, v in vecs.items()}

    # -- related papers -----------------------------------------------------------------------
    def nearest(self, vector: np.ndarray, k: int) -> list[tuple[str, float]]:
        self._refresh()
        if self._index is None:
            return []
        return self._index.search(vector, k)

    def vectors_for(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        self._refresh()
        return {rid: self._matrix[self._pos[rid]].astype(np.float32) for rid in ids if rid in self._pos}


_providers: dict[Path, SemanticProvider] = {}
_providers_lock = threading.Lock()


def open_provider(settings: Settings | None = None) -> SemanticProvider:
    """The process-wide provider for a home (vectors are loaded once and shared)."""
    settings = settings or get_settings()
    path = Path(settings.vectors_dir).resolve()
    with _providers_lock:
        provider = _providers.get(path)
        if provider is None:
            provider = _providers[path] = SemanticProvider(path)
        return provider
