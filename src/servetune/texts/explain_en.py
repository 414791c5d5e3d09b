"""What `explain` says about each flag, in English.

`tp.*`, `max-num-seqs.*`, `max-num-batched-tokens.*`, `quantization.*` and `dtype.*` are built
for the command's own values (`review/explain.py` picks the pieces and fills them in);
`note.<flag>` is a fixed note on a common flag; `generic.*` covers every other flag.
"""

from __future__ import annotations

TEXTS: dict[str, str] = {
    "model": "The model to serve (a Hugging Face id or a local folder).",
    # --- tensor parallelism ---
    "tp.one": (
        "Tensor parallelism 1: the whole model runs on one GPU (the default). A larger value "
        "splits every layer across that many GPUs, each holding a share of the weights, so "
        "more memory is left for the KV cache; it usually equals the GPUs in one machine."
    ),
    "tp.many": (
        "Tensor parallelism: each layer of the model is split across {tp} GPUs that work on "
        "every token together. Each GPU holds 1/{tp} of the weights, and the memory this frees "
        "becomes KV cache.{heads} The GPUs synchronise on every layer, so TP usually equals "
        "the number of GPUs in one machine (fast NVLink), not more. Default: 1."
    ),
    "tp.heads": " {model} has {heads} attention heads, so each GPU computes {share}.",
    # --- max-num-seqs ---
    "max-num-seqs": (
        "At most {seqs} requests are decoded together in one batch{note}. "
        "Continuous batching is a shared taxi: this is how many seats it has. Requests beyond "
        "it wait in the queue (time to first token grows); a fuller batch raises total "
        "throughput but makes each user's tokens come a little slower (TPOT). The KV cache "
        "must also have room for them: with seats but no memory, vLLM preempts requests."
    ),
    "max-num-seqs.default": " ({default})",
    "max-num-seqs.replaced": " (replacing vLLM's default here, {vllm_default})",
    # --- max-num-batched-tokens ---
    "max-num-batched-tokens": (
        "Token budget of one scheduler step (one forward pass): at most {mbt} tokens{replaced}, "
        "shared by all running requests. Each decoding request takes 1; the rest reads new "
        "prompts (prefill). {mode} Too small starves the GPU and raises time to first token "
        "with no error anywhere; larger speeds up prefill but makes each step longer, so users "
        "who are mid-answer see small stalls."
    ),
    "max-num-batched-tokens.default": " (vLLM's default)",
    "max-num-batched-tokens.replaced": " (replacing vLLM's default here, {vllm_default})",
    "max-num-batched-tokens.chunked": (
        "Chunked prefill is on, so a long prompt is read in pieces over several steps."
    ),
    "max-num-batched-tokens.whole": (
        "Chunked prefill is off, so a whole prompt must fit in one step: this must be at "
        "least max-model-len."
    ),
    # --- quantization ---
    "quantization": "Weight quantization. {how} {checkpoint}",
    "quantization.online": "`{method}` quantizes plain weights while loading them (online).",
    "quantization.offline": (
        "`{method}` tells vLLM how to read a checkpoint that is already {method}-quantized; "
        "it never quantizes on the fly. vLLM detects it from config.json, so it is usually best "
        "left out."
    ),
    "quantization.quantized": "This checkpoint is quantized with {checkpoint_method}.",
    "quantization.plain": "This checkpoint has no quantization config (plain weights).",
    # --- dtype ---
    "dtype": (
        "Number format for computing: here {dtype}. bfloat16 and float16 are both 16-bit; "
        "bfloat16 has float32's range (no overflow) but needs an Ampere or newer GPU (A100, A10, "
        "RTX 30xx); float16 runs on older GPUs (V100, T4) but models trained in bfloat16 can "
        "overflow in it. The default, auto, uses the checkpoint's own dtype."
    ),
    # --- fixed notes ---
    "note.--max-model-len": (
        "The longest context (prompt + answer, in tokens) one request may have. vLLM "
        "must fit at least one request of this length in the KV cache, so a shorter value "
        "leaves room for more users at once. Default: the model's own limit."
    ),
    "note.--gpu-memory-utilization": (
        "The fraction of each GPU's memory vLLM takes (it reserves all of it at start). "
        "Weights and activations come out of it; the rest becomes KV cache."
    ),
    "note.--enforce-eager": (
        "Turns off CUDA graphs: faster startup and a little less memory, but slower "
        "decoding. Meant for debugging."
    ),
    "note.--kv-cache-dtype": (
        "Number format of the KV cache. fp8 halves its size (twice the tokens fit) at a "
        "small accuracy cost; auto uses the model's dtype."
    ),
    "note.--enable-chunked-prefill": (
        "Lets vLLM read long prompts in pieces, mixed with decoding of other requests, "
        "so one long prompt does not freeze everyone else."
    ),
    "note.--enable-prefix-caching": (
        "Reuses the KV cache of identical prompt beginnings (system prompts, chat "
        "history) across requests. On by default in recent vLLM."
    ),
    "note.--pipeline-parallel-size": (
        "Splits the layers into consecutive stages on different GPUs (often across "
        "machines); slower per token than tensor parallelism inside one machine."
    ),
    "note.--data-parallel-size": (
        "Runs that many independent copies of the model behind one API: more throughput, "
        "each copy needs its own GPUs."
    ),
    "note.--served-model-name": (
        "The model name clients send in requests (`model` field) instead of the path."
    ),
    "note.--host": "The address the server listens on (0.0.0.0 = every network interface).",
    "note.--port": "The TCP port of the OpenAI-compatible API (default 8000).",
    "note.--trust-remote-code": (
        "Allows running Python code shipped inside the model repository. Needed by some "
        "models; only for repositories you trust."
    ),
    "note.--api-key": "Clients must send this key (Authorization: Bearer ...).",
    "note.--kv-cache-memory-bytes": (
        "Sets the KV cache size directly in bytes, ignoring --gpu-memory-utilization."
    ),
    # --- any other flag ---
    "generic": (
        "A vLLM {kind}{default}. servetune has no plain-language note for it yet; see "
        "`vllm serve --help={name}`."
    ),
    "generic.switch": "switch (on/off)",
    "generic.option": "option taking a value",
    "generic.default": ", default {default}",
}
