"""The lexical index (Tantivy): schema, build (incremental, atomic) and the live reader."""

from .build import BuildReport, build_index
from .reader import IndexReader
from .schema import SCHEMA_VERSION, build_schema

__all__ = ["BuildReport", "IndexReader", "SCHEMA_VERSION", "build_index", "build_schema"]
