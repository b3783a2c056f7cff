"""The seam where semantic retrieval plugs into search.

The search service knows nothing about embeddings: it asks a provider for candidates and then
applies its own rules (strict query parts, filters, honest counts, fusion). Any object with these
two methods works; the semantic side implements it over its vector index. Hybrid ranking also
uses, when the provider has them, ``similarities(text, ids)`` (the cosine of lexical hits outside
the semantic candidates) and ``similarities_by_key(text, keys)``, the same by the id hashes of the
index's ``key`` fast field, which spares reading each hit's stored document for its id.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable


@runtime_checkable
class SemanticProvider(Protocol):
    """Nearest records to a text by meaning."""

    def available(self) -> bool:
        """True when the model and vector index are loaded and can answer now."""
        ...

    def query_candidates(self, text: str, k: int) -> list[tuple[str, float]]:
        """Up to ``k`` (record id, similarity) pairs, most similar first."""
        ...
