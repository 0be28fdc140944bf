"""Measuring one case: answer parsers, agreement, tokens, the semantic layer, diagnostics (docs/design.md §5).

Pure functions over plain data; the only heavy dependency (the embedding model) loads on first use.
"""
