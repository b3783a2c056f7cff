"""Shortening text for display, in one place. The callers cut differently on purpose, so each
way has its own name:

- :func:`shorten_at_word`: a label in a list (a facet value): cut at a word boundary only when
  one is near the limit, so a long single word still shows most of itself;
- :func:`cut_at_last_space`: a preview of running text (an abstract, a feed summary): always cut
  between words;
- :func:`cut_hard`: a heading (a title quoted in a heading), cut at exactly the limit.
"""

from __future__ import annotations

ELLIPSIS = "…"


def shorten_at_word(text: str | None, limit: int, ellipsis: str = ELLIPSIS) -> str:
    """Cut at a word boundary near ``limit`` characters (in its last 40%) and mark the cut."""
    text = (text or "").strip()
    if len(text) <= limit:
        return text
    cut = text[:limit]
    space = cut.rfind(" ")
    if space > limit * 0.6:
        cut = cut[:space]
    return cut.rstrip(" ,;:.-") + ellipsis


def cut_at_last_space(text: str | None, limit: int, trailing: str = " ,.;:", mark: str = ELLIPSIS) -> str:
    """The words of ``text`` that fit in ``limit`` characters, less ``trailing`` punctuation, then
    ``mark``; ``text`` unchanged when it fits."""
    if not text:
        return ""
    if len(text) <= limit:
        return text
    return text[:limit].rsplit(" ", 1)[0].rstrip(trailing) + mark


def cut_hard(text: str, limit: int) -> str:
    """Exactly ``limit`` characters (less trailing spaces) plus the ellipsis."""
    return text if len(text) <= limit else text[:limit].rstrip() + ELLIPSIS
