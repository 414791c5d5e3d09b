"""Everything about vLLM itself: its serve command, flag tables by release, its log."""
