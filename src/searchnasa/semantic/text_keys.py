"""The key of an embedded text: equal keys mean a stored vector can be reused.

A key names the model *and* the backend that made the vector. The torch and ONNX backends agree
closely but not so closely that their vectors are interchangeable (bench/README.md, "Embedding
throughput"), so the caches, the vector store and the bundled sample vectors never mix them
silently: switching backends re-embeds. The torch key is the bare model name, as it was before
the ONNX backend existed, so every vector made earlier stays valid.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache

from searchnasa.semantic.model import MODEL_NAME, default_backend
from searchnasa.semantic.onnx_export import export_tag


@lru_cache(maxsize=4)
def model_key(backend: str) -> str:
    """What a vector's key says about how it was made. torch: the bare model name (unchanged from
    before backends existed); onnx: the export tag (model, package version, export settings)."""
    if backend == "torch":
        return MODEL_NAME
    return f"{MODEL_NAME}+onnx:{export_tag()}"


def text_key(text: str, backend: str | None = None) -> str:
    """Cache key of one embedded text (see the module docstring)."""
    prefix = model_key(backend or default_backend())
    return hashlib.blake2b(f"{prefix}\x00{text}".encode(), digest_size=16).hexdigest()
