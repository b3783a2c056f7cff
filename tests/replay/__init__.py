"""A replay server for the NTRS and OSTI APIs, built from the real records in shared/data/raw."""
