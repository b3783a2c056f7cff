"""Labels a reader can tell apart: facet values shortened without colliding, and abstracts that
the source itself cut short marked as such.

Organization names run long ("USDOE Office of Energy Efficiency and Renewable Energy (EERE),
Office of Sustainable Transportation. Vehicle Technologies Office (VTO)") and differ at the end,
so cutting them at 60 characters made several filter values read the same. A long value keeps its
head and its tail around the cut; when two would still read the same, they are shown whole.

Some OSTI records carry an abstract the source cut at 500 characters mid-sentence; shown as is, it
looks whole. :func:`cut_at_source` recognises an abstract that stops mid-word or mid-sentence.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable

from searchnasa.search.text import ELLIPSIS

LABEL_LIMIT = 60
HEAD_SHARE = 0.55  # of the limit, for the head of a long value (the rest is its tail)
# An abstract shorter than this that stops without a full stop is a fragment by design
# (a one-line note), not a cut.
MIN_CUT_ABSTRACT = 200
SENTENCE_ENDS = ".!?)]\"'”’»:;…"


def _middle_cut(text: str, limit: int) -> str:
    """The head and tail of ``text`` around an ellipsis, each cut at a word boundary."""
    head_room = int(limit * HEAD_SHARE)
    tail_room = limit - head_room - 3
    head = text[:head_room]
    if " " in head[int(head_room * 0.5):]:
        head = head[:head.rfind(" ")]
    tail = text[-tail_room:]
    if " " in tail[: int(tail_room * 0.5)]:
        tail = tail[tail.find(" ") + 1:]
    return f"{head.rstrip(' ,;:.-')} {ELLIPSIS} {tail.lstrip(' ,;:.-')}"


def distinct_labels(values: Iterable[str], readable: Callable[[str], str] = str,
                    limit: int = LABEL_LIMIT) -> dict[str, str]:
    """value -> a label at most about ``limit`` characters long, no two labels alike."""
    values = list(dict.fromkeys(values))
    full = {v: readable(v) for v in values}
    labels = {v: (text if len(text) <= limit else _middle_cut(text, limit)) for v, text in full.items()}
    counts = Counter(labels.values())
    return {v: (full[v] if counts[label] > 1 else label) for v, label in labels.items()}


def cut_at_source(abstract: str | None) -> bool:
    """True when an abstract stops mid-sentence (as the source cut it), not at a sentence's end."""
    text = (abstract or "").rstrip()
    return len(text) >= MIN_CUT_ABSTRACT and text[-1] not in SENTENCE_ENDS and not text[-1].isdigit()
