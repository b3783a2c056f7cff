"""Raw payloads to :class:`StoredItem`: the one map step of every write path.

Import, harvest and renormalize (in-process or on Dask workers) all turn ``(format, payload)``
pairs into items for :meth:`Store.upsert` the same way: map with the format's mapper, keep the
payload and the format's fidelity beside the record, and leave out what cannot be mapped. Each
caller says only how it reports a payload left out (a path and line, a skip reason, a record id).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar

from searchnasa.errors import FormatError
from searchnasa.records import fidelity_of
from searchnasa.ingest.formats import map_item
from searchnasa.store import StoredItem

K = TypeVar("K")


def stored_items(rows: Iterable[tuple[K, str, Any]],
                 on_failure: Callable[[K, FormatError], object]) -> Iterator[StoredItem]:
    """The items to store for ``(key, format, payload)`` rows, in order; a payload that cannot be
    mapped is handed to ``on_failure`` with its key and left out.

    Lazy, so a caller that filters or reads as it goes sees its own problems and these in the
    order of the rows.
    """
    for key, fmt, payload in rows:
        try:
            record = map_item(fmt, payload)
        except FormatError as exc:
            on_failure(key, exc)
            continue
        yield StoredItem(record, fmt, payload, fidelity_of(fmt))
