"""Embed BEIR corpora (and their queries) into the shared embedding cache ahead of ``searchnasa eval``.

Embedding 16k abstracts takes most of an hour on 2 cores; run this once in the background and
every later eval run reads the vectors from the cache.

    python scripts/warm_eval_cache.py ../shared/data/eval/scifact ../shared/data/eval/npl
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from searchnasa.eval.beir import load_beir
from searchnasa.semantic.cache import open_default_cache
from searchnasa.semantic.model import join_text
from searchnasa.semantic.vectors import embed_texts


def main(argv: list[str]) -> int:
    cache = open_default_cache()
    for folder in argv:
        data = load_beir(Path(folder))
        texts = [q for q in data.queries.values()]
        texts += [join_text(d.title, d.text) for d in data.corpus.values()]
        start = time.time()
        for i in range(0, len(texts), 256):
            embed_texts(texts[i:i + 256], None, cache)
            print(f"{folder}: {min(i + 256, len(texts))}/{len(texts)} {time.time() - start:.0f}s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
