"""Search NASA: one search over NASA NTRS and DOE OSTI technical reports."""

__version__ = "0.1.0"
