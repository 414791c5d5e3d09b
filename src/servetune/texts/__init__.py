"""Every user-facing sentence, one table per language per area."""
