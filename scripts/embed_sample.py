"""Precompute the bundled sample's embeddings into ``src/searchnasa/data/sample_vectors.npz`` and
its sentence vectors into ``src/searchnasa/data/sample_sentences.npz``.

Run after ``scripts/build_sample.py`` (the same records, through the same ``embed_pending`` the
``searchnasa embed`` command uses), so ``make run`` serves hybrid search and related papers with
their sentence pairs without embedding first. Texts seen before reuse the vectors already in the
bundles or the shared cache. Vectors are made by the default backend (``SEARCHNASA_EMBED_BACKEND``).

    python scripts/embed_sample.py
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from searchnasa.ingest.importer import import_paths
from searchnasa.ingest.sample import sample_path
from searchnasa.semantic.bundle import (
    ChainCache,
    bundle_path,
    load_bundle,
    load_sentence_bundle,
    save_bundle,
    sentence_bundle_path,
)
from searchnasa.semantic.cache import open_default_cache
from searchnasa.semantic.model import DIM, record_text
from searchnasa.semantic.text_keys import text_key
from searchnasa.semantic.vectors import VectorStore, embed_texts
from searchnasa.sentences import record_sentences
from searchnasa.store import Store, open_store

SENTENCE_CHUNK = 2000  # sentences embedded between progress lines


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        store = open_store(home)
        import_paths(store, [sample_path()], "records-jsonl")
        vstore = VectorStore(home / "vectors")
        cache = ChainCache(load_bundle(), open_default_cache())
        total, start = store.count(), time.time()
        done = 0

        def on_batch(n: int) -> None:
            nonlocal done
            done += n
            print(f"{done}/{total} records, {time.time() - start:.0f}s", file=sys.stderr, flush=True)

        report = vstore.embed_pending(store.iter_records(0), cache=cache, batch_size=128, on_batch=on_batch)
        ids, matrix = vstore.load_all()
        key_of = vstore.keys_for(ids)
        keys = [key_of[i] for i in ids]
        out = bundle_path()
        old = load_bundle()
        if old is not None and old.keys == keys:  # saving again would quantize twice
            print(f"{report.summary()}; {out} unchanged")
        else:
            save_bundle(out, ids, keys, matrix)
            print(f"{report.summary()}; {len(ids)} vectors -> {out} ({out.stat().st_size / 1e6:.1f} MB)")
        vstore.close()
        bundle_sentences(store)
        store.close()
    return 0


def bundle_sentences(store: Store) -> None:
    """Every distinct sentence of the records' title + abstract (as ``searchnasa embed
    --sentences`` splits them), embedded once, keyed by its text key."""
    first_holder: dict[str, str] = {}
    for _, rec in store.iter_records(0):
        if record_text(rec):
            for sentence in record_sentences(rec.title, rec.abstract):
                first_holder.setdefault(sentence, rec.id)
    sentences = list(first_holder)
    keys = [text_key(s) for s in sentences]
    out = sentence_bundle_path()
    old = load_sentence_bundle()
    if old is not None and old.keys == keys:  # saving again would quantize twice
        print(f"{len(sentences)} sentences: {out} unchanged")
        return
    cache = ChainCache(old, open_default_cache())
    start, parts = time.time(), []
    for i in range(0, len(sentences), SENTENCE_CHUNK):
        parts.append(embed_texts(sentences[i:i + SENTENCE_CHUNK], None, cache, batch_size=64))
        print(f"{i + len(parts[-1])}/{len(sentences)} sentences, {time.time() - start:.0f}s", file=sys.stderr, flush=True)
    save_bundle(out, [first_holder[s] for s in sentences], keys,
                np.concatenate(parts) if parts else np.zeros((0, DIM), np.float32))
    print(f"{len(sentences)} sentence vectors -> {out} ({out.stat().st_size / 1e6:.1f} MB)")


if __name__ == "__main__":
    sys.exit(main())
