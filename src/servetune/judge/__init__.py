"""Judge results: read result files, compare before/after, accept."""
