"""The seam where semantic retrieval plugs into search.

The search service knows nothing about embeddings: it asks a provider for candidates and scores,
then applies its own rules (strict query parts, filters, honest counts, fusion). The semantic
side implements this protocol over its vector index (``semantic.provider.VectorProvider``); tests
and benchmarks pass stand-ins. Every method the search and web sides call is declared here, so
no caller probes a provider for what it can do.

Two answers say "cannot" instead of raising: ``similarities`` returns None when the provider
cannot score given records (hybrid ranking then uses reciprocal rank fusion, which needs no
scores), and ``similarities_by_key`` returns None when it cannot look records up by the lexical
index's id hash (the service then reads the hits' stored documents for their ids and asks
``similarities``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class SemanticProvider(Protocol):
    """Nearest records to a text by meaning, and the vectors related papers read."""

    def available(self) -> bool:
        """True when the model and vector index are loaded and can answer now."""
        ...

    def warm_up(self) -> None:
        """Start loading the query encoder, so the first searches after a start find it ready."""
        ...

    def query_candidates(self, text: str, k: int, floor: float = ...,
                         wait: float | None = None) -> list[tuple[str, float]]:
        """Up to ``k`` (record id, similarity) pairs at least ``floor`` similar, most similar
        first. ``wait``: give up (raise an error with code ``semantic_busy``) rather than queue
        longer than this for the query encoder; None waits."""
        ...

    def similarities(self, text: str, ids: Sequence[str]) -> dict[str, float] | None:
        """Cosine of ``text`` to each given record that has a vector; None: cannot score records."""
        ...

    def similarities_by_key(self, text: str, keys: Sequence[int]) -> dict[int, float] | None:
        """:meth:`similarities` by id hash (``index.schema.id_key``); None: cannot look keys up."""
        ...

    def embed_text(self, text: str, wait: float | None = None) -> np.ndarray:
        """The unit vector of a text (a free-text seed paper, a query)."""
        ...

    def nearest(self, vector: np.ndarray, k: int) -> list[tuple[str, float]]:
        """Up to ``k`` (record id, cosine) nearest to a unit vector, best first."""
        ...

    def vectors_for(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """Unit vectors of the given records that have one."""
        ...

    def has_sentence_vectors(self) -> bool:
        """Whether any sentence vectors are stored (cheap; hybrid search asks before looking)."""
        ...

    def sentence_vectors_for(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """Stored sentence vectors (one unit row per sentence of title + abstract) of the given
        records that have fresh ones; empty when the home stores none (related papers then rank
        without the sentence re-rank, as before)."""
        ...

    def embed_sentences(self, texts: Sequence[str], wait: float | None = None) -> np.ndarray:
        """Unit vectors of a free-text seed's sentences, one row each."""
        ...
