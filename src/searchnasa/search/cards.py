"""Result cards: what a hit shows, built from the card stored in the index (no store read), with
the query's words marked in its title and snippet."""

from __future__ import annotations

from typing import Any

import tantivy

from searchnasa.index.documents import card_from_bytes
from searchnasa.limits import NO_DATE_LABEL
from searchnasa.records import SOURCE_LABELS
from searchnasa.search.ranked import Ranked
from searchnasa.search.schemas import SearchHit
from searchnasa.search.snippets import Highlight, highlight_html, snippet_html


def date_label(year: int | None) -> str:
    """What every list shows for a record's date (search cards, related papers): its year, or the
    no-date label. One meaning everywhere; the full date is on the record."""
    return str(year) if year is not None else NO_DATE_LABEL


def link_label(card: dict[str, Any]) -> str:
    """What the card's link to the original says: first subject, keyword, author, or a fallback."""
    for key in ("subjects", "keywords", "authors"):
        values = card.get(key) or []
        if values:
            return values[0]
    return "Original record"


def hit_card(searcher: tantivy.Searcher, ranked: Ranked, highlight: Highlight) -> SearchHit:
    """The card of one ranked hit, read from its stored document."""
    card = card_from_bytes(searcher.doc(ranked.address).get_first("card"))
    return SearchHit(
        id=card["id"], source=card["source"], source_label=SOURCE_LABELS[card["source"]],
        title=card["title"], title_html=highlight_html(card["title"], highlight),
        abstract=card.get("abstract"), snippet_html=snippet_html(card.get("abstract"), highlight),
        year=card.get("year"), date_label=date_label(card.get("year")), url=card.get("url"),
        link_label=link_label(card), authors=card.get("authors") or [],
        document_type=card.get("document_type"), subjects=card.get("subjects") or [],
        score=ranked.score,
    )
