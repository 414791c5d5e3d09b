"""servetune: review, launch and measure vLLM deployments."""

__version__ = "0.1.0"
