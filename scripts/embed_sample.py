"""Precompute the bundled sample's embeddings into ``src/searchnasa/data/sample_vectors.npz``.

Run after ``scripts/build_sample.py`` (the same records, through the same ``embed_pending`` the
``searchnasa embed`` command uses), so ``make run`` serves hybrid search without embedding first.
Records whose text is unchanged reuse the vectors already in the bundle or the shared cache.

    python scripts/embed_sample.py
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from searchnasa.ingest.importer import import_paths
from searchnasa.ingest.sample import sample_path
from searchnasa.semantic.bundle import ChainCache, bundle_path, load_bundle, save_bundle
from searchnasa.semantic.cache import open_default_cache
from searchnasa.semantic.vectors import VectorStore
from searchnasa.store import open_store


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
        keys = vstore.keys_for(ids)
        out = bundle_path()
        save_bundle(out, ids, [keys[i] for i in ids], matrix)
        print(f"{report.summary()}; {len(ids)} vectors -> {out} ({out.stat().st_size / 1e6:.1f} MB)")
        vstore.close()
        store.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
