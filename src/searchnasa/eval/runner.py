"""``searchnasa eval``: index a BEIR folder with the product's own pipeline and measure its ranking.

The pipeline is the one users get, with no special path: BEIR documents become :class:`Record`
objects, are upserted into a fresh store in a temporary home, indexed by ``build_index``, embedded
by the vector store (through the shared embedding cache, so a rerun costs seconds) and searched
through the search service in ``lexical``, ``semantic`` or ``hybrid`` mode. In ``related`` mode
each query is treated as a paper and ranked by the related-papers algorithm.

BEIR queries are natural-language text, not query syntax, so quote marks, colons and brackets are
turned into spaces and upper-case AND/OR/NOT into lower case before searching (what a user pasting
the same sentence would want); nothing else about a query is changed.
"""

from __future__ import annotations

import logging
import re
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from searchnasa.errors import BadInput
from searchnasa.records import Record
from searchnasa.search.query import parse
from searchnasa.search.related import Seed, parts_of, rank_related
from searchnasa.search.schemas import MAX_QUERY_CHARS, SearchRequest
from searchnasa.search.service import SearchService
from searchnasa.settings import Settings
from searchnasa.store import StoredItem, open_store
from searchnasa.eval.beir import BeirData, load_beir
from searchnasa.eval.metrics import evaluate

log = logging.getLogger(__name__)

RETRIEVALS = ("lexical", "semantic", "hybrid")
WORDS = ("any", "all")  # how a query's words are combined: OR (bag of words) or as typed (AND)
DEPTH = 100
EVAL_SOURCE = "osti"  # Record ids need a source prefix; BEIR ids are kept as the source id.

Progress = Callable[[str, int, int], None]


def to_record(doc_id: str, title: str, text: str) -> Record:
    """A BEIR document as a record (title may be empty: NPL documents have none)."""
    return Record(id=f"{EVAL_SOURCE}:{doc_id}", source=EVAL_SOURCE, source_id=doc_id,
                  title=title or "", abstract=text or None)


def doc_id_of(record_id: str) -> str:
    return record_id.split(":", 1)[1]


_SYNTAX = re.compile(r"[\"“”:()\[\]{}]")
_OPERATORS = re.compile(r"\b(AND|OR|NOT)\b")


def as_plain_text(query: str) -> str:
    """A natural-language query with query-syntax characters neutralized (see module docstring),
    cut at a word to what the search box takes (``MAX_QUERY_CHARS``): a whole paper as a query
    (CSFCube) is longer, and a user pasting it would be told so rather than searched."""
    text = _SYNTAX.sub(" ", query)
    text = _OPERATORS.sub(lambda m: m.group(1).lower(), text)
    text = re.sub(r"(^|\s)[-+]+(?=\w)", r"\1", text)  # a leading '-' would mean NOT
    text = " ".join(text.split())
    if len(text) > MAX_QUERY_CHARS:
        text = text[:MAX_QUERY_CHARS + 1].rsplit(" ", 1)[0][:MAX_QUERY_CHARS]
    return text


def as_any_words(query: str) -> str:
    """The query's words joined by OR: BEIR queries are sentences, ranked as a bag of words.

    The product's query language reads plain words as AND (right for a few typed keywords, but a
    ten-word claim would then match almost nothing); ``OR`` is how a user asks for any-word
    matching in the same language, and BM25 still ranks documents with more of the words first.
    The semantic side embeds the same words either way.
    """
    words = as_plain_text(query).split()
    out, length = [], 0
    for w in words:
        if length + len(w) + 4 > MAX_QUERY_CHARS:
            break
        out.append(w)
        length += len(w) + 4
    return " OR ".join(out)


@dataclass
class EvalHome:
    """A temporary home holding one BEIR corpus: store, lexical index and vectors."""

    settings: Settings
    data: BeirData
    timings: dict[str, float] = field(default_factory=dict)
    embed_report: Any = None
    sentence_report: Any = None


def build_eval_home(data: BeirData, home: Path, need_vectors: bool, progress: Progress | None = None,
                    acronyms: bool = True, sentences: bool = False) -> EvalHome:
    """Store, index and (when needed) embed a BEIR corpus through the product's own stages;
    ``acronyms``: mine the corpus's acronyms as ``searchnasa index`` does (False: none expanded);
    ``sentences``: also store sentence vectors (``searchnasa embed --sentences``)."""
    from searchnasa.index import build_index
    from searchnasa.index.acronym_table import update_acronyms

    settings = Settings().with_home(home)
    timings: dict[str, float] = {}
    start = time.perf_counter()
    store = open_store(settings.home)
    items = [StoredItem(to_record(d.id, d.title, d.text), "beir", {"_id": d.id}) for d in data.corpus.values()]
    for i in range(0, len(items), 2000):
        store.upsert(items[i:i + 2000])
    timings["store_s"] = time.perf_counter() - start
    start = time.perf_counter()
    build_index(store, settings.index_dir)
    timings["index_s"] = time.perf_counter() - start
    if acronyms:
        start = time.perf_counter()
        update_acronyms(store, settings.index_dir)
        timings["acronyms_s"] = time.perf_counter() - start
    report = sentence_report = None
    if need_vectors:
        from searchnasa.semantic.cache import open_default_cache
        from searchnasa.semantic.vectors import VectorStore

        start = time.perf_counter()
        cache = open_default_cache()
        vstore = VectorStore(settings.vectors_dir)
        total = store.count()
        done = 0

        def on_batch(n: int) -> None:
            nonlocal done
            done += n
            if progress:
                progress("embedding", done, total)

        report = vstore.embed_pending(store.iter_records(vstore.checkpoint_seq), cache=cache,
                                      batch_size=256, on_batch=on_batch)
        vstore.close()
        timings["embed_s"] = time.perf_counter() - start
        if sentences:
            start = time.perf_counter()
            sentence_report = _embed_sentences(settings, store, cache, progress)
            timings["sentences_s"] = time.perf_counter() - start
        cache.close()
    store.close()
    return EvalHome(settings=settings, data=data, timings=timings, embed_report=report,
                    sentence_report=sentence_report)


def _embed_sentences(settings: Settings, store: Any, cache: Any, progress: Progress | None) -> Any:
    """The corpus's sentence vectors, through the shared cache (a rerun embeds nothing)."""
    from searchnasa.semantic.sentence_vectors import embed_sentences_pending

    total, done = store.count(), 0

    def on_batch(n: int) -> None:
        nonlocal done
        done += n
        if progress:
            progress("sentences", done, total)

    return embed_sentences_pending(settings.vectors_dir, store.iter_records(0), cache=cache,
                                   batch_size=256, on_batch=on_batch)


def make_service(settings: Settings, with_semantic: bool) -> SearchService:
    """The product's search service over an eval home."""
    semantic = None
    if with_semantic:
        from searchnasa.semantic.provider import VectorProvider

        semantic = VectorProvider(settings.vectors_dir)
    return SearchService(settings=settings, semantic=semantic)


def query_text(text: str, words: str) -> str:
    """The search box text for a BEIR query: its words joined by OR (``any``, the default: see
    :func:`as_any_words`) or as a user would type them (``all``: the product reads bare words
    as AND, so hybrid ranking then rests on the semantic candidates and the words they hold)."""
    return as_any_words(text) if words == "any" else as_plain_text(text)


def run_search(service: SearchService, queries: dict[str, str], mode: str, depth: int = DEPTH,
               progress: Progress | None = None, words: str = "any") -> dict[str, list[str]]:
    """Each query through ``service.search`` in ``mode``; the top ``depth`` BEIR doc ids."""
    rankings: dict[str, list[str]] = {}
    for n, (qid, text) in enumerate(queries.items(), 1):
        request = SearchRequest(q=query_text(text, words), per_page=min(depth, 100), mode=mode)
        # every judged document counts on its own (an eval home has no duplicate clusters anyway)
        response = service.search(request, fold_copies=False)
        rankings[qid] = [doc_id_of(hit.id) for hit in response.results]
        if progress:
            progress(f"searching ({mode})", n, len(queries))
    return rankings


def run_related(service: SearchService, queries: dict[str, str], depth: int = DEPTH,
                progress: Progress | None = None) -> dict[str, list[str]]:
    """Each query as a seed paper (title + text), ranked by the related-papers algorithm."""
    parts = parts_of(service)
    rankings: dict[str, list[str]] = {}
    for n, (qid, text) in enumerate(queries.items(), 1):
        ranked = rank_related(parts, [Seed(title="", abstract=text)], limit=depth, explain=False)
        rankings[qid] = [doc_id_of(c.id) for c, _ in ranked]
        if progress:
            progress("related", n, len(queries))
    return rankings


def acronym_summary(service: SearchService, queries: dict[str, str], words: str) -> dict[str, Any]:
    """How many acronyms the corpus defines often enough to expand, and which queries expand one."""
    lexicon = service.acronyms.get()
    expanded: dict[str, list[str]] = {}
    for qid, text in queries.items():
        notes = parse(query_text(text, words), lexicon).acronyms
        found = [f"{n.acronym} = {' | '.join(n.expanded_to)}" for n in notes if n.expanded_to]
        if found:
            expanded[qid] = found
    return {"lexicon": len(lexicon), "queries_expanded": len(expanded), "expansions": expanded}


def run_eval(folder: Path, mode: str = "search", retrievals: list[str] | None = None,
             progress: Progress | None = None, home: Path | None = None,
             words: str = "any", acronyms: bool = True, sentences: bool = False) -> dict[str, Any]:
    """Load, index, embed, query and score; the result is what ``--json`` prints. ``acronyms``:
    False leaves the corpus's acronyms unmined, so queries are searched as typed (the comparison);
    ``sentences``: store sentence vectors too (related mode then re-ranks by them)."""
    if mode not in ("search", "related"):
        raise BadInput("--mode must be search or related")
    if words not in WORDS:
        raise BadInput(f"--words must be one of {', '.join(WORDS)}")
    retrievals = retrievals or list(RETRIEVALS)
    for r in retrievals:
        if r not in RETRIEVALS:
            raise BadInput(f"--retrieval must be one of {', '.join(RETRIEVALS)} or all")
    data = load_beir(Path(folder))
    if not data.queries:
        raise BadInput(f"{folder}: no query has judgments in qrels/test.tsv")
    need_vectors = mode == "related" or any(r != "lexical" for r in retrievals)
    with tempfile.TemporaryDirectory(prefix="searchnasa-eval-") as tmp:
        ehome = build_eval_home(data, Path(home or tmp), need_vectors, progress, acronyms=acronyms,
                                sentences=sentences and need_vectors)
        result: dict[str, Any] = {
            "dataset": data.name, "mode": mode, "words": words, "documents": len(data.corpus),
            "queries": len(data.queries), "results": {}, "timings": dict(ehome.timings),
        }
        if ehome.embed_report is not None:
            result["embedding"] = ehome.embed_report.summary()
        if ehome.sentence_report is not None:
            r = ehome.sentence_report
            result["sentence_embedding"] = f"{r.seen} records: {r.embedded} sentences embedded or from cache"
        service = make_service(ehome.settings, with_semantic=need_vectors)
        result["acronyms"] = acronym_summary(service, data.queries, words)
        if mode == "related":
            start = time.perf_counter()
            rankings = run_related(service, data.queries, progress=progress)
            result["timings"]["related_s"] = time.perf_counter() - start
            result["results"]["related"] = evaluate(data.qrels, rankings)
        else:
            for r in retrievals:
                start = time.perf_counter()
                rankings = run_search(service, data.queries, r, progress=progress, words=words)
                result["timings"][f"{r}_s"] = time.perf_counter() - start
                result["results"][r] = evaluate(data.qrels, rankings)
    return result
