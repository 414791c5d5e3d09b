"""Answer capacity questions offline: a simulation of vLLM's scheduler (continuous and static
batching) driven by a step-time model of the GPU, calibrated by measured runs when given."""
