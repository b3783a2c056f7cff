"""Limits and labels that more than one stage shows or enforces, declared once.

The web form, the API's validation, the query parser and the CLI all read these, so a year range,
an export size or the words shown for a missing date cannot drift apart between them.
"""

from __future__ import annotations

YEAR_MIN = 1000  # earliest year a filter or a parsed date accepts
YEAR_MAX = 2100  # latest year a filter or a parsed date accepts
MAX_SEEDS = 20  # seed and negative records of one related-papers request, together
MAX_EXPORT = 1000  # records one export or citation request may hold
NO_DATE_LABEL = "Date not supplied"  # what a card shows for a record without a date
