"""The bundled sample's precomputed embeddings (``data/sample_vectors.npz``), so a fresh install
serves hybrid search and related papers at once instead of after minutes of embedding; and its
sentence vectors (``data/sample_sentences.npz``, one per distinct sentence of title + abstract),
so the related lists re-rank by sentences and show their best pair out of the box
(:mod:`.sentence_vectors`).

Stored per record as int8 with one float scale per vector (a few hundred bytes a record, close
enough to the float32 original to serve in its place) and keyed by the text key, so a record whose title or abstract has
changed since the bundle was built is simply embedded afresh.
"""

from __future__ import annotations

from functools import lru_cache
from importlib.resources import files
from pathlib import Path

import numpy as np

from searchnasa.semantic.model import MODEL_NAME


def bundle_path() -> Path:
    return Path(str(files("searchnasa") / "data" / "sample_vectors.npz"))


def sentence_bundle_path() -> Path:
    return Path(str(files("searchnasa") / "data" / "sample_sentences.npz"))


def quantize(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-vector symmetric int8: ``vec ~= q * scale``."""
    scale = np.abs(matrix).max(axis=1, keepdims=True) / 127.0
    scale[scale == 0] = 1.0
    q = np.clip(np.rint(matrix / scale), -127, 127).astype(np.int8)
    return q, scale.astype(np.float32).ravel()


def dequantize(q: np.ndarray, scale: np.ndarray) -> np.ndarray:
    m = q.astype(np.float32) * scale[:, None]
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return m / norms


def save_bundle(path: Path, ids: list[str], keys: list[str], matrix: np.ndarray) -> None:
    q, scale = quantize(matrix)
    np.savez_compressed(path, ids=np.array(ids), keys=np.array(keys), q=q, scale=scale,
                        model=np.array(MODEL_NAME))


class BundledVectors:
    """Read-only vectors by text key (acts like an :class:`~.vectors.EmbeddingCache`)."""

    def __init__(self, path: Path) -> None:
        with np.load(path, allow_pickle=False) as data:
            if str(data["model"]) != MODEL_NAME:
                raise ValueError(f"{path} holds {data['model']} vectors, not {MODEL_NAME}")
            self.ids = [str(i) for i in data["ids"]]
            self.keys = [str(k) for k in data["keys"]]
            self.matrix = dequantize(data["q"], data["scale"])
        self._by_key = {k: i for i, k in enumerate(self.keys)}

    def __len__(self) -> int:
        return len(self.ids)

    def get_many(self, keys: list[str]) -> dict[str, np.ndarray]:
        return {k: self.matrix[self._by_key[k]] for k in keys if k in self._by_key}

    def put_many(self, items: object) -> None:  # read-only: new vectors go to the other caches
        return None

    def close(self) -> None:
        return None


@lru_cache(maxsize=1)
def load_bundle() -> BundledVectors | None:
    """The bundled vectors, or None when the package was built without them."""
    path = bundle_path()
    return BundledVectors(path) if path.is_file() else None


@lru_cache(maxsize=1)
def load_sentence_bundle() -> BundledVectors | None:
    """The bundled sentence vectors (keyed by each sentence's text key, as the embedding cache
    keys them), or None when the package was built without them."""
    path = sentence_bundle_path()
    return BundledVectors(path) if path.is_file() else None


class ChainCache:
    """Look keys up in several caches in order; new vectors go to every writable one."""

    def __init__(self, *caches: object) -> None:
        self.caches = [c for c in caches if c is not None]

    def get_many(self, keys: list[str]) -> dict[str, np.ndarray]:
        found: dict[str, np.ndarray] = {}
        for cache in self.caches:
            rest = [k for k in keys if k not in found]
            if not rest:
                break
            found.update(cache.get_many(rest))  # type: ignore[attr-defined]
        return found

    def put_many(self, items: object) -> None:
        items = list(items)  # type: ignore[call-overload]
        for cache in self.caches:
            cache.put_many(items)  # type: ignore[attr-defined]

    def close(self) -> None:
        for cache in self.caches:
            cache.close()  # type: ignore[attr-defined]
