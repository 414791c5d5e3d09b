"""ShareGPT as vLLM's benchmark sends it: the load of a run that names the dataset but not its
lengths.

What `benchmark_serving.py --dataset-name sharegpt` (0.4-0.8, `sample_sharegpt_requests`) and
`vllm bench serve --dataset-name sharegpt` (0.9 on, vllm/benchmarks/datasets.py
`ShareGPTDataset` with `is_valid_sequence`) draw: the first two turns of each
ShareGPT_V3_unfiltered_cleaned_split conversation, shuffled with `--seed` (default 0), the
prompt tokenized with the model's tokenizer and the reply's token count sent as `max_tokens`
(unless `--sharegpt-output-len`); prompts under 4 or over 1,024 tokens and prompt + reply over
2,048 are dropped, until `--num-prompts` (default 1,000) are kept.

The lengths are assumed from published summaries of such runs, never from the run planned:
- prompts: 215,196 input tokens over the 1,000 prompts of seed 0 with the Llama 3 tokenizer
  (vllm-project/vllm#15720, #13843, #17004: Llama-3.1-8B-Instruct); other tokenizers land within
  2% (fit records of tests/data/corpus/runs.json: 214,465 GLM, 215,312 gpt-oss, 217,393 Qwen3,
  219,171 DeepSeek);
- replies: an instruct model stops at its end-of-sequence token before the dataset's reply
  length more often than not: 197,090 generated tokens over those 1,000 prompts (#15720),
  196,961-197,328 on four GPUs (#17004), 197,286 (#13843); chat-endpoint runs of other models
  193,979-201,648 (the GPUStack fit records). A base model (no chat tuning) stops far earlier
  (~121,000 for Llama-3.1-405B-FP8, dstack's fit records): not assumed here.
- the spread per request: ShareGPT's lengths vary widely (a long tail cut at 1,024 / 2,048 by
  the filter); a uniform draw over [0.05, 1.95] x the mean stands in for it (coefficient of
  variation 0.55). The shape is assumed: no source publishes the filtered sample's quantiles.
"""

from __future__ import annotations

from servetune.plan.simulate import Load

PROMPT_LEN = 215  # tokens per prompt, mean (215,196 / 1,000: vllm-project/vllm#15720)
OUTPUT_LEN = 197  # tokens generated per reply, mean (197,090 / 1,000: vllm-project/vllm#15720)
NUM_PROMPTS = 1000  # --num-prompts default of benchmark_serving.py and vllm bench serve
SPREAD = 0.95  # lengths uniform in [len x (1 - SPREAD), len x (1 + SPREAD)] per request


def load(
    num_prompts: int = NUM_PROMPTS,
    concurrency: int | None = None,
    request_rate: float | None = None,
    output_len: int | None = None,
) -> Load:
    """The ShareGPT load of `num_prompts` requests with the published mean lengths, each request
    drawn around them; `output_len` (`--sharegpt-output-len`) fixes every reply's length."""
    return Load(
        input_len=PROMPT_LEN,
        output_len=output_len or OUTPUT_LEN,
        num_prompts=num_prompts,
        concurrency=concurrency,
        request_rate=request_rate,
        range_ratio=SPREAD,
        output_range_ratio=0.0 if output_len else None,
    )
