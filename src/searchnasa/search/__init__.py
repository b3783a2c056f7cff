"""Search: query parsing, lexical/semantic retrieval, fusion, filters, facets, snippets, related."""
