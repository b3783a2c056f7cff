"""The vector provider: what the search service and related papers call to get meaning-based
candidates. :class:`VectorProvider` implements the search side's ``SemanticProvider`` protocol
(``search/protocols.py``: ``available``, ``query_candidates``, ``similarities``,
``similarities_by_key``, ``warm_up``) and what related papers read (``vectors_for``, ``nearest``,
``embed_text``).

Below :data:`~.exact.EXACT_BELOW` vectors it keeps them in memory as one float32 matrix and
searches exactly. Above, it holds no float matrix and no id list: it serves the saved index, of
the kind ``index_kind`` names or else of the kind last built (:mod:`.hnsw`: the usearch int8
graph, which is also where a record's vector is read back from; or :mod:`.ivfpq`: PQ codes in RAM
and int8 rows on disk), beside the sorted ids and their hashes, memory-mapped, so
their pages are shared page cache, not per-process heap. The vectors written after the index was
built (each row carries the store version it was written at) are held exactly in a small "delta"
and searched beside the index, so a record embedded a minute ago is found at once; past :data:`DELTA_LIMIT` new vectors
the index is rebuilt (streaming) and saved. It reloads when ``searchnasa embed`` has changed the
vectors. Until any vectors exist it says it is not available and search stays lexical.
"""

from __future__ import annotations

import fcntl
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from searchnasa.semantic import exact as exact_search
from searchnasa.semantic.ann import build_from_store, check_kind, load_index
from searchnasa.semantic.embedder import Embedder, get_embedder
from searchnasa.semantic.exact import EXACT_BELOW, ExactIndex
from searchnasa.errors import EmbedderBusy
from searchnasa.semantic.model import DIM
from searchnasa.semantic.saved import SavedIndex, saved_kind
from searchnasa.semantic.sentence_vectors import SentenceReader
from searchnasa.semantic.vectors import VectorStore
from searchnasa.settings import Settings, get_settings

log = logging.getLogger(__name__)

RELOAD_CHECK_SECONDS = 2.0
# How long a web search waits for the query encoder; past it (model still loading, or busy under
# load) the search answers with keyword matches and says so, instead of queueing.
QUERY_WAIT_SECONDS = 0.5
QUERY_CACHE_SIZE = 512
# A query's candidates must be at least this similar (cosine, all-MiniLM-L6-v2) to count as
# related in meaning: nonsense queries stay below it against the sample, SciFact and NPL, while
# the best match of nearly every real query and the judged-relevant documents lie above it
# (bench/README.md, "Similarity floor"). Below the floor a neighbour is as close as a random
# pairing, so it is noise rather than a semantic match.
SIMILARITY_FLOOR = 0.33


# A saved HNSW index serves with an exact "delta" of the vectors written after it was built, held
# in RAM; past this many the provider rebuilds and saves the index.
DELTA_LIMIT = 50_000


class VectorProvider:
    """Semantic candidates for queries and records, from one home's vectors (the implementation of
    ``search.protocols.SemanticProvider``)."""

    def __init__(self, vectors_dir: Path, embedder: Embedder | None = None,
                 exact_below: int = EXACT_BELOW, delta_limit: int = DELTA_LIMIT,
                 index_kind: str | None = None) -> None:
        if index_kind:
            check_kind(index_kind)
        self.vectors_dir = Path(vectors_dir)
        # which saved index serves above exact_below (ann.KINDS); None: the kind already saved
        # (as `searchnasa embed --vector-index` built it), HNSW when there is none
        self.index_kind = index_kind or None
        self._embedder = embedder
        self._exact_below = exact_below
        self._delta_limit = delta_limit
        self._lock = threading.RLock()
        self._version: str | None = None
        self._checked = 0.0
        self._count = 0
        # small collections: everything in one exact index; large: the saved approximate index
        # (HNSW or IVF-PQ, memory-mapped) plus an exact index of the vectors newer than it (``_delta``)
        self._exact: ExactIndex | None = None
        self._ann: SavedIndex | None = None
        self._delta: ExactIndex | None = None
        self._queries: OrderedDict[str, np.ndarray] = OrderedDict()
        self._loader: threading.Thread | None = None
        self._sentences = SentenceReader(self.vectors_dir)

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
                self._load(vs, version)
            finally:
                vs.close()
            self._version = version

    def _load(self, vs: VectorStore, version: str) -> None:
        """Pick the cheapest correct way to serve the store's vectors at ``version``."""
        uid = vs.uid()
        ann = self._usable(load_index(self.vectors_dir, self._kind()), vs, uid, version)
        if ann is None:
            total = vs.count()
            if total < self._exact_below:
                ids, matrix = vs.load_all()
                self._exact, self._ann, self._delta, self._count = ExactIndex(ids, matrix), None, None, len(ids)
                log.info("semantic provider: %d vectors (exact search)", len(ids))
                return
            ann = self._build(vs, uid, version)
        delta_ids, delta_matrix = vs.load_since(str(ann.version))
        delta = ExactIndex(delta_ids, delta_matrix)
        new = len(delta_ids) - len(ann.keys_of(delta_ids))
        self._exact, self._ann, self._delta, self._count = None, ann, delta, len(ann) + new
        log.info("semantic provider: %d vectors (%s index of %d, %d newer held exactly)",
                 self._count, ann.kind, len(ann), len(delta))

    def _kind(self) -> str:
        return self.index_kind or saved_kind(self.vectors_dir) or "hnsw"

    def _usable(self, ann: SavedIndex | None, vs: VectorStore, uid: str, version: str) -> SavedIndex | None:
        """``ann`` (the saved index) if it was built from this store and few enough vectors are newer than it."""
        if ann is None or ann.uid != uid or int(ann.version or 0) > int(version):
            return None  # none, or built from another (or a re-created) vector store
        if vs.count_since(str(ann.version)) > self._delta_limit:
            return None
        return ann

    def _build(self, vs: VectorStore, uid: str, version: str) -> SavedIndex:
        """Build and save the index; one process at a time (serve workers share the folder)."""
        self.vectors_dir.mkdir(parents=True, exist_ok=True)
        with open(self.vectors_dir / "ann.lock", "a+b") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                kind = self._kind()
                ready = self._usable(load_index(self.vectors_dir, kind), vs, uid, version)
                if ready is not None:  # another process built it while this one waited
                    return ready
                log.info("building the %s index over the vectors of %s", kind, self.vectors_dir)
                return build_from_store(vs.conn, self.vectors_dir, uid=uid, kind=kind)
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    # The study scripts (bench/*_study.py) read a small home's exact matrix directly.
    @property
    def _ids(self) -> list[str]:
        self._refresh()
        return self._exact.ids if self._exact is not None else []

    @property
    def _matrix(self) -> np.ndarray:
        self._refresh()
        return self._exact.matrix if self._exact is not None else np.zeros((0, DIM), dtype=np.float32)

    @property
    def _pos(self) -> dict[str, int]:
        self._refresh()
        return self._exact._pos if self._exact is not None else {}

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            self._embedder = get_embedder()
        return self._embedder

    def warm_up(self) -> None:
        """Start loading the query encoder in the background, and run it once (a model's first
        inference is several times slower than the next), so the first searches after a server
        starts find it ready instead of busy. Does nothing when no record has a vector."""
        if self._embedder is not None or not self.available():
            return
        with self._lock:
            if self._loader is None:
                self._loader = threading.Thread(target=self._load_and_run_once, daemon=True,
                                                name="load-query-encoder")
                self._loader.start()

    def _load_and_run_once(self) -> None:
        try:
            started = time.perf_counter()
            self.embedder.encode_query("warm up")
            log.info("query encoder ready (loaded and run once in %.1f s)", time.perf_counter() - started)
        except Exception:  # searches report the failure themselves; lexical search carries on
            log.exception("loading the query encoder failed")

    def _loaded_embedder(self) -> Embedder:
        """The model if it is loaded; else load it in the background and say busy meanwhile."""
        if self._embedder is not None:
            return self._embedder
        self.warm_up()
        raise EmbedderBusy("the semantic model is still loading")

    # -- the service protocol -----------------------------------------------------------------
    def available(self) -> bool:
        """True once any record has a vector; search stays lexical until then."""
        self._refresh()
        return self._count > 0

    def count(self) -> int:
        self._refresh()
        return self._count

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

    def similarities_by_key(self, text: str, keys: Sequence[int]) -> dict[int, float]:
        """:meth:`similarities` for records named by their id hash (the lexical index's ``key``
        fast field), so the search service need not fetch stored documents for their ids."""
        if not text.strip() or not self.available():
            return {}
        vec = self.embed_text(text)
        return {k: float(np.dot(v, vec)) for k, v in self.vectors_for_keys(keys).items()}

    # -- related papers -----------------------------------------------------------------------
    def nearest(self, vector: np.ndarray, k: int) -> list[tuple[str, float]]:
        """Up to ``k`` (id, cosine) nearest to a unit vector, best first."""
        self._refresh()
        with self._lock:
            exact, ann, delta = self._exact, self._ann, self._delta
        if exact is not None:
            return exact.search(vector, k)
        if ann is None:
            return []
        if not delta:
            return ann.search(vector, k)
        # vectors changed since the build are in both: the graph's copy is stale, the delta's is not
        found = [(rid, sim) for rid, sim in ann.search(vector, k + len(delta) if len(delta) < k else 2 * k)
                 if rid not in delta]
        found.extend(delta.search(vector, k))
        found.sort(key=lambda pair: -pair[1])
        return found[:k]

    def vectors_for(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """Unit vectors (float32) of the given records that have one; reads only those nodes."""
        out = self._vectors(ids, "vectors_for")
        return {rid: out[rid] for rid in ids if rid in out}

    def has_sentence_vectors(self) -> bool:
        """Whether this home stores sentence vectors (``searchnasa embed --sentences``, or the
        bundled sample's): searches skip the sentence re-rank's lookups when it does not."""
        return self._sentences.present()

    def sentence_vectors_for(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """Each given record's stored sentence vectors (rows, unit), for those that have fresh ones."""
        return self._sentences.vectors_for(list(ids))

    def embed_sentences(self, texts: Sequence[str], wait: float | None = None) -> np.ndarray:
        """Unit vectors of a free-text seed's sentences (a stored record's come from storage): one
        model call for all of them, one turn at the model, and not through the query cache (a
        paper's sentences are not asked again page after page, as a query is)."""
        if not texts:
            return np.zeros((0, DIM), dtype=np.float32)
        units = [t.strip() for t in texts]
        if wait is None:
            return self.embedder.encode(units)
        return self._loaded_embedder().encode(units, wait=wait)

    def vectors_for_keys(self, keys: Sequence[int]) -> dict[int, np.ndarray]:
        """:meth:`vectors_for` by id hash (``index.schema.id_key``)."""
        return self._vectors(keys, "vectors_for_keys")

    def _vectors(self, names: Sequence[Any], lookup: str) -> dict[Any, np.ndarray]:
        """Vectors by id or by id hash (``lookup`` names the index method): a vector changed since
        the graph was built comes from the delta, the rest from the graph."""
        self._refresh()
        with self._lock:
            exact, ann, delta = self._exact, self._ann, self._delta
        if exact is not None:
            return getattr(exact, lookup)(names)
        if ann is None:
            return {}
        out = getattr(delta, lookup)(names) if delta else {}
        rest = [n for n in names if n not in out]
        if rest:
            out.update(getattr(ann, lookup)(rest))
        return out


def prepare_serving_index(vectors_dir: Path, index_kind: str | None = None) -> str:
    """Build (and save) the vector index a server would otherwise build on its first query.

    A provider that finds no usable index above :data:`~.exact.EXACT_BELOW` vectors builds one
    inside the request that notices (minutes at millions of vectors); ``searchnasa embed`` calls
    this when it finishes so that work happens in the batch job, not in front of a user. Returns
    how the vectors will be served. Needs no model: only the vectors are read."""
    below = exact_search.EXACT_BELOW  # read now, not at import: tests lower it
    provider = VectorProvider(vectors_dir, exact_below=below, index_kind=index_kind)
    count = provider.count()
    if provider._ann is None:
        return f"{count:,} vectors, searched exactly (no index needed below {below:,})"
    name = {"hnsw": "HNSW", "ivfpq": "IVF-PQ"}[provider._ann.kind]
    return f"{count:,} vectors, {name} index ready ({len(provider._ann):,} indexed)"


_providers: dict[Path, VectorProvider] = {}
_providers_lock = threading.Lock()


def open_provider(settings: Settings | None = None) -> VectorProvider:
    """The process-wide provider for a home (vectors are loaded once and shared)."""
    settings = settings or get_settings()
    path = Path(settings.vectors_dir).resolve()
    with _providers_lock:
        provider = _providers.get(path)
        if provider is None:
            provider = _providers[path] = VectorProvider(path, index_kind=settings.vector_index or None)
        return provider
