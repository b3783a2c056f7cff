"""Ingest: the one write path into the store.

Dump readers (:mod:`.formats`: detect a file's format and yield raw items, with each bad line
reported by path and line), mappers (:mod:`.ntrs`, :mod:`.osti`, with the field cleaners in
:mod:`.text`: a raw payload to a :class:`~searchnasa.records.Record`), the one map step every
writer shares (:mod:`.mapping`), the importer (:mod:`.importer`: dump files in batches, optionally
indexed as they go), the live harvesters (:mod:`.harvest`), re-mapping stored payloads after a
mapping fix (:mod:`.renormalize`) and the bundled sample (:mod:`.sample`). Every record reaches
the store through :meth:`Store.upsert` with its raw payload, so it can be re-mapped later.
"""
