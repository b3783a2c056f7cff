"""The ONNX Runtime int8 backend of the embedder: same model, same tokenizer, faster than torch.

Texts are tokenized with the package's own ``tokenizer.json`` through the ``tokenizers`` library
(the fast tokenizer sentence-transformers uses) and truncated at the same 256 word pieces.

Each text runs alone (:data:`RUN_BATCH` = 1), whatever batch size the caller asks for. Dynamic
int8 quantization picks one activation scale per run, over every row and padded position in it,
so in a batch a text's vector depends on its neighbours: a query embedded alone and inside a
batch do not get the same vector. Alone, a text always gets the same vector (in a search, in
``searchnasa embed``, on any Dask partition), with no padding at all, and a slightly better match
to torch; it costs a little batched throughput (bench/README.md, "Embedding throughput").

Two sessions, each made on first use: a batch session on all cores for ``searchnasa embed``, and
a one-thread session for a query or two (thread hand-offs cost more than they save on a tiny
input, and far more on a busy machine; bench/README.md). A search process thus loads only
the small-input session, an embedding run only the batch one.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
from tokenizers import Tokenizer

from searchnasa.semantic.model import DIM, MAX_SEQ_LENGTH, model_dir
from searchnasa.semantic.onnx_export import INPUT_NAMES, ensure_onnx_model

RUN_BATCH = 1  # texts per ONNX run; see the module docstring for why not more


class OnnxBackend:
    """all-MiniLM-L6-v2 as an int8 ONNX graph (see :mod:`.onnx_export`)."""

    name = "onnx"

    def __init__(self, threads: int | None = None, models: Path | None = None,
                 announce: Callable[[str], None] | None = None) -> None:
        self.path = ensure_onnx_model(models, announce=announce)
        self._threads = threads or 0  # 0: ONNX Runtime's default, one per physical core
        tok = Tokenizer.from_file(str(model_dir() / "tokenizer.json"))
        # tokenizer.json ships a fixed 128 padding/truncation; the model is used at 256, padded
        # to the longest text of each batch, exactly as the torch path tokenizes.
        tok.enable_truncation(max_length=MAX_SEQ_LENGTH)
        tok.enable_padding(pad_id=0, pad_type_id=0, pad_token="[PAD]")
        self._tokenizer = tok
        self._sessions: dict[int, object] = {}
        self._lock = threading.Lock()

    def _session(self, threads: int):  # type: ignore[no-untyped-def]
        with self._lock:
            sess = self._sessions.get(threads)
            if sess is None:
                import onnxruntime as ort

                opts = ort.SessionOptions()
                opts.intra_op_num_threads = threads
                opts.inter_op_num_threads = 1
                opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
                sess = ort.InferenceSession(str(self.path), opts, providers=["CPUExecutionProvider"])
                self._sessions[threads] = sess
            return sess

    def encode(self, texts: Sequence[str], batch_size: int, small: bool,
               run_batch: int = RUN_BATCH) -> np.ndarray:
        """Unit vectors (float32, ``(n, 384)``) in the order of ``texts``. ``batch_size`` is the
        caller's (torch's) batch and is not used; ``run_batch`` exists for the benchmark."""
        batch_size = run_batch
        session = self._session(1 if small else self._threads)
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(order), batch_size):
            idx = order[start:start + batch_size]
            encodings = self._tokenizer.encode_batch([texts[i] for i in idx])
            feeds = {
                "input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
                "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64),
                "token_type_ids": np.array([e.type_ids for e in encodings], dtype=np.int64),
            }
            assert set(feeds) == set(INPUT_NAMES)
            vecs = session.run(["embedding"], feeds)[0]  # type: ignore[attr-defined]
            out[idx] = vecs
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        return out / norms
