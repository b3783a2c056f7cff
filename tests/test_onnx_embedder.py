"""The ONNX int8 embedding backend against the torch fp32 reference, on real sample texts.

The ONNX model is exported once per test session into a temporary models folder (the real
export: torch trace + ONNX Runtime quantization, ~20 s), so the build-and-cache path itself is
exercised; every later test reuses that file.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import orjson
import pytest
from typer.testing import CliRunner

import searchnasa.cli  # noqa: F401  (registers every command on the app)
from searchnasa.cli.app import app
from searchnasa.errors import BadInput
from searchnasa.ingest.importer import import_paths
from searchnasa.ingest.sample import sample_lines_with_abstract
from searchnasa.semantic import onnx_export
from searchnasa.semantic.embedder import Embedder, get_embedder
from searchnasa.semantic.model import BACKEND_ENV, check_backend, join_text, record_text
from searchnasa.semantic.text_keys import model_key, text_key
from searchnasa.semantic.onnx_backend import OnnxBackend
from searchnasa.semantic.vectors import VectorStore
from searchnasa.store import open_store

N_TEXTS = 20


def _sample_lines(n: int) -> list[bytes]:
    return sample_lines_with_abstract(n)


@pytest.fixture(scope="module")
def models_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("models")


@pytest.fixture(scope="module")
def built(models_dir: Path) -> tuple[OnnxBackend, list[str]]:
    """The first build in an empty models folder, with what it announced."""
    said: list[str] = []
    backend = OnnxBackend(models=models_dir, announce=said.append)
    return backend, said


@pytest.fixture()
def use_models(models_dir: Path, built: tuple[OnnxBackend, list[str]],
               monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point every ONNX load in this test at the session's export (and restore the backend env)."""
    monkeypatch.setenv("SEARCHNASA_MODELS_DIR", str(models_dir))
    monkeypatch.setenv(BACKEND_ENV, "torch")
    return models_dir


def test_first_use_builds_with_a_message_and_a_descriptive_name(built, models_dir: Path) -> None:
    backend, said = built
    assert len(said) == 1 and "building the int8 ONNX model" in said[0]
    name = backend.path.name
    assert backend.path.parent == models_dir and backend.path.is_file()
    assert name.startswith("all-MiniLM-L6-v2-") and name.endswith(".onnx")
    assert onnx_export.package_version() in name and onnx_export.settings_hash() in name
    assert [p.name for p in models_dir.iterdir()] == [name]  # no temporary files left behind


def test_second_load_reuses_the_export(built, models_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    backend, _ = built
    before = backend.path.stat().st_mtime_ns

    def no_export(*_a: object, **_k: object) -> None:
        raise AssertionError("the cached export should have been reused")

    monkeypatch.setattr(onnx_export, "_export_fp32", no_export)
    said: list[str] = []
    again = OnnxBackend(models=models_dir, announce=said.append)
    assert again.path == backend.path and said == []
    assert backend.path.stat().st_mtime_ns == before


def test_other_export_settings_never_reuse_a_stale_file(built, monkeypatch: pytest.MonkeyPatch) -> None:
    backend, _ = built
    quant = dict(onnx_export.EXPORT_SETTINGS["quant"])  # type: ignore[arg-type]
    quant["per_channel"] = False
    monkeypatch.setitem(onnx_export.EXPORT_SETTINGS, "quant", quant)
    assert onnx_export.onnx_model_path(backend.path.parent) != backend.path


def test_onnx_matches_torch_on_real_texts(use_models: Path) -> None:
    texts = [join_text(r["title"], r["abstract"]) for r in map(orjson.loads, _sample_lines(N_TEXTS))]
    texts += ["battery thermal runaway", "cell venting during overcharge"]  # queries are short
    onnx = Embedder(backend="onnx").encode(texts)
    torch = get_embedder("torch").encode(texts)
    assert onnx.shape == torch.shape == (len(texts), 384)
    assert np.allclose(np.linalg.norm(onnx, axis=1), 1.0, atol=1e-4)
    cos = (onnx * torch).sum(axis=1)
    assert cos.mean() >= 0.99, cos
    assert cos.min() >= 0.98, cos
    # Meaning survives: each text's nearest neighbour under onnx is itself under torch.
    assert (np.argmax(onnx @ torch.T, axis=1) == np.arange(len(texts))).all()
    # One text alone (the query path, its own one-thread session) equals it inside a batch.
    alone = Embedder(backend="onnx").encode_query(texts[-1])
    assert float(alone @ onnx[-1]) > 0.999


def test_keys_name_the_backend_and_keep_torch_keys_unchanged() -> None:
    text = "Boundary layer transition on a swept wing"
    legacy = hashlib.blake2b(f"all-MiniLM-L6-v2\x00{text}".encode(), digest_size=16).hexdigest()
    assert text_key(text, "torch") == legacy  # vectors made before backends existed stay valid
    assert text_key(text, "onnx") != legacy  # the eval cache never hands torch vectors to onnx
    assert onnx_export.export_tag() in model_key("onnx")
    with pytest.raises(BadInput, match="unknown embedding backend 'cuda'"):
        check_backend("cuda")


def _small_home(root: Path, n: int = 12) -> Path:
    home = root / "home"
    home.mkdir()
    src = root / "small.jsonl"
    src.write_bytes(b"".join(_sample_lines(n)))
    store = open_store(home)
    assert import_paths(store, [src], "records-jsonl").counts.new == n
    store.close()
    return home


def _stored_keys(home: Path) -> dict[str, str]:
    vs = VectorStore(home / "vectors")
    try:
        return dict(vs.conn.execute("SELECT id, key FROM vectors").fetchall())
    finally:
        vs.close()


def test_embed_with_onnx_writes_vectors_and_a_switch_reembeds(use_models: Path, tmp_path: Path) -> None:
    home = _small_home(tmp_path)
    store = open_store(home)
    texts = {rec.id: record_text(rec) for _, rec in store.iter_records(0)}
    store.close()
    runner = CliRunner()

    result = runner.invoke(app, ["embed", "--no-cache", "--backend", "torch", "--home", str(home)])
    assert result.exit_code == 0, result.output
    assert _stored_keys(home) == {rid: text_key(t, "torch") for rid, t in texts.items()}

    result = runner.invoke(app, ["embed", "--no-cache", "--backend", "onnx", "--home", str(home)])
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())  # the console wraps long lines
    assert "made by the torch backend: re-embedding every record with onnx" in said
    # every record is redone: by the model, or from the bundled sample vectors (ONNX-keyed, so
    # they count for onnx and never did for torch)
    assert f"{len(texts)} records seen" in said and " 0 unchanged" in said
    assert _stored_keys(home) == {rid: text_key(t, "onnx") for rid, t in texts.items()}
    vs = VectorStore(home / "vectors")
    ids, matrix = vs.load_all()
    vs.close()
    fresh = Embedder(backend="onnx").encode([texts[i] for i in ids])
    assert ((matrix * fresh).sum(axis=1) > 0.999).all()  # float16 (or the bundle's int8) of the same

    result = runner.invoke(app, ["embed", "--no-cache", "--backend", "onnx", "--home", str(home)])
    assert result.exit_code == 0 and " 0 embedded" in " ".join(result.output.split())  # nothing to do


def test_bad_backend_is_a_clear_error(tmp_path: Path) -> None:
    home = _small_home(tmp_path, n=2)
    exe = Path(sys.executable).with_name("searchnasa")
    env = {k: v for k, v in os.environ.items() if k != BACKEND_ENV}
    run = subprocess.run(check=False, args=[str(exe), "embed", "--backend", "tensorflow", "--home", str(home)],
                         capture_output=True, text=True, env=env, timeout=120)
    assert run.returncode != 0
    assert "unknown embedding backend 'tensorflow': choose one of torch, onnx" in run.stderr
    assert "Traceback" not in run.stderr + run.stdout
    env[BACKEND_ENV] = "nope"  # a bad environment value is caught the same way
    run = subprocess.run(check=False, args=[str(exe), "embed", "--home", str(home)],
                         capture_output=True, text=True, env=env, timeout=120)
    assert run.returncode != 0 and "unknown embedding backend 'nope'" in run.stderr
    assert not (home / "vectors").exists()  # nothing was written


def test_onnx_after_usearch_in_one_process(use_models: Path) -> None:
    """usearch loaded first, then the ONNX backend (what a web server does on its first query):
    onnxruntime imported after usearch's compiled module segfaults, so hnsw.py loads it first."""
    code = (
        "import numpy as np\n"
        "from searchnasa.semantic.hnsw import HnswIndex\n"
        "HnswIndex.build(['a', 'b'], np.eye(2, 384, dtype=np.float32))\n"
        "from searchnasa.semantic.embedder import get_embedder\n"
        "print(get_embedder('onnx').encode_query('battery thermal runaway').shape)\n"
    )
    run = subprocess.run(check=False, args=[sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env={**os.environ, "SEARCHNASA_MODELS_DIR": str(use_models)})
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.strip() == "(384,)"
