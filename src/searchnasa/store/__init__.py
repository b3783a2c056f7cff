"""The store: SQLite, the source of truth every later stage is rebuilt from.

``database`` owns the schema and the one write path (upserts in whole-batch transactions);
``identifiers`` keeps the report/contract number table, ``clusters`` the duplicate clusters that
``dedup`` computes. Nothing here knows how records were harvested or imported.
"""

from searchnasa.store.database import RECORDS_FORMAT, Store, StoredItem, UpsertCounts, open_store

__all__ = ["RECORDS_FORMAT", "Store", "StoredItem", "UpsertCounts", "open_store"]
