"""The command line: one module per command, one error boundary."""
