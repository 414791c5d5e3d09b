"""Terminal and JSON views of results."""
