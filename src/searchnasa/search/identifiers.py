"""What an identifier typed alone in the search box asks the index for (DOI, NTRS or OSTI id,
report number).

The text is read by the product's one recognizer (:func:`searchnasa.store.identifiers.recognize`);
this module only turns its answer into the index lookup the search service runs. Recognition only
says what the text could be; the service then checks the index, so a number that is not a record
id is still searched as words.
"""

from __future__ import annotations

from dataclasses import dataclass

from searchnasa.store.identifiers import MAX_SEARCH_QUERY
from searchnasa.store.identifiers import recognize as recognize_identifier

# A bare number of this many digits is taken for an NTRS or OSTI id confidently enough to say so
# when no record has it; shorter numbers are mostly years, and the number table still checks them.
RECORD_ID_DIGITS = range(5, 13)


@dataclass(frozen=True)
class IdentifierGuess:
    """What the text may identify: ``ids`` are candidate record ids, ``values`` identifier strings."""

    kind: str  # doi | record | number | report
    text: str
    ids: tuple[str, ...] = ()
    values: tuple[str, ...] = ()

    @property
    def confident(self) -> bool:
        """Whether a miss deserves a notice (a report-number-like word may just be a word)."""
        return self.kind != "report"


def recognize(text: str) -> IdentifierGuess | None:
    """Classify ``text`` when it is one identifier and nothing else; None otherwise."""
    query = recognize_identifier(text, max_length=MAX_SEARCH_QUERY)
    if query is None:
        return None
    text = text.strip()
    if query.kind == "doi":
        return IdentifierGuess("doi", text, values=(query.norm,))
    if query.kind == "id":
        return IdentifierGuess("record", text, ids=(query.value,))
    if query.value.isdigit():
        if len(query.value) not in RECORD_ID_DIGITS:
            return None
        return IdentifierGuess("number", text, ids=(f"ntrs:{query.value}", f"osti:{query.value}"))
    if " " in query.value or "-" not in query.value:
        return None  # the index holds report numbers whole, as written: one hyphenated token
    return IdentifierGuess("report", text, values=(query.value.lower(),))
