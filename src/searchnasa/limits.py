"""Limits and labels that more than one stage shows or enforces, declared once.

The web form, the API's validation, the query parser and the CLI all read these, so a year range,
an export size or the words shown for a missing date cannot drift apart between them. The field
limits below are enforced by every write path (import, harvest, renormalize: the one map step,
``ingest.formats.map_item``) and documented in docs/operations.md ("Limits on records").
"""

from __future__ import annotations

YEAR_MIN = 1000  # earliest year a filter or a parsed date accepts
YEAR_MAX = 2100  # latest year a filter or a parsed date accepts
MAX_SEEDS = 20  # seed and negative records of one related-papers request, together
MAX_EXPORT = 1000  # records one export or citation request may hold
NO_DATE_LABEL = "Date not supplied"  # what a card shows for a record without a date

# Field sizes a record may have (characters, or entries of a list). Far above any real record (the
# bundled sample and the raw files peak at a 255-character title, a 4,941-character abstract,
# 2,048 authors and 38 keywords), so only broken or hostile input meets them.
MAX_TITLE_CHARS = 2_000  # past it the record is refused (path:line), see ingest.formats.enforce_limits
MAX_ABSTRACT_CHARS = 50_000  # past it the abstract is cut and says so (ABSTRACT_CUT_MARK)
MAX_AUTHORS = 10_000  # authors of one record; past it the record is refused
MAX_KEYWORDS = 2_000  # keywords, and subjects, of one record; past it the record is refused
MAX_ENTRY_CHARS = 2_000  # one author name or affiliation, keyword or subject; past it: refused
ABSTRACT_CUT_MARK = " … [abstract cut at {limit:,} characters on import]"
