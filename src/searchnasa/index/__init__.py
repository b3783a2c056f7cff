"""The lexical index (Tantivy): schema, build (incremental, atomic) and the live reader."""

from searchnasa.index.build import BuildReport, build_index
from searchnasa.index.reader import IndexReader
from searchnasa.index.schema import SCHEMA_VERSION, build_schema

__all__ = ["BuildReport", "IndexReader", "SCHEMA_VERSION", "build_index", "build_schema"]
