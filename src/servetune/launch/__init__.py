"""Start, watch and stop vLLM; the doctor that reads why a start failed."""
