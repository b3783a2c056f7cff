"""Measuring ranking quality against relevance judgments written by others (BEIR layout)."""
