"""Answer quality before/after a change (typically a quantization): the same questions sent to two
OpenAI-compatible servers, graded, and compared with a paired interval."""
