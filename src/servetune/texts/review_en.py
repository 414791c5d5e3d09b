"""What `check` says, in English: the findings and the labels of its report.

Findings are keyed `<rule id>.<field>` or `<rule id>:<variant>.<field>`, with the fields
`title`, `why`, `fix` and `ask_ai` (left out where there is nothing to ask an AI). Each is a
`str.format` template over the facts the rule reports, plus the facts every finding gets:
`machine` (e.g. "2x A100-80GB-SXM"), `model`, `version` (the vLLM release). The report's own
words are the `report.*` keys.
"""

from __future__ import annotations

TEXTS: dict[str, str] = {
    "dash-typo.title": "`{token}` starts with a typographic dash, not `--`",
    "dash-typo.why": (
        "Chat apps and word processors turn `--` into an en or em dash. vLLM does not "
        "recognise the flag and refuses to start (exit code 2, 'unrecognized arguments')."
    ),
    "dash-typo.fix": "Type the flag with two ASCII hyphens: `{fixed}`.",
    "dash-typo.ask_ai": (
        "The command you gave me has `{token}` with a typographic dash; vLLM rejects it. "
        "Please give me the command again as plain text with ASCII `--` in every flag."
    ),
    "unknown-flag.title": "vLLM {version} has no flag `{token}`",
    "unknown-flag.why": (
        "vLLM stops at startup with 'unrecognized arguments' on any flag it does not know."
    ),
    "unknown-flag.fix": (
        "Remove `{token}`, or check `vllm serve --help=all` for the option you meant."
    ),
    "unknown-flag.ask_ai": (
        "vLLM {version} does not have `{token}`. Which real `vllm serve` option did you "
        "mean, and is it needed at all?"
    ),
    "unknown-flag:did-you-mean.title": (
        "vLLM {version} has no flag `{token}` (did you mean `{suggestion}`?)"
    ),
    "unknown-flag:did-you-mean.why": (
        "vLLM stops at startup with 'unrecognized arguments' on any flag it does not know; "
        "this looks like a misspelling of `{suggestion}`."
    ),
    "unknown-flag:did-you-mean.fix": "Use `{suggestion}`.",
    "unknown-flag:did-you-mean.ask_ai": (
        "vLLM {version} has no `{token}`. Did you mean `{suggestion}`? Please confirm "
        "the value you intended for it."
    ),
    "unknown-flag:too-new.title": (
        "`{token}` needs vLLM {first_seen} or newer (reviewing for {version})"
    ),
    "unknown-flag:too-new.why": (
        "The flag first appears in vLLM {first_seen}; vLLM {version} refuses to start "
        "with 'unrecognized arguments'."
    ),
    "unknown-flag:too-new.fix": "Upgrade vLLM to {first_seen} or newer, or remove `{token}`.",
    "unknown-flag:too-new.ask_ai": (
        "My vLLM is {version}, which has no `{token}` (it appeared in {first_seen}). "
        "Please rewrite the command for vLLM {version}."
    ),
    "unknown-flag:entrypoint.title": "`vllm serve` after the image name is said twice",
    "unknown-flag:entrypoint.why": (
        "The vllm/vllm-openai image already starts the server itself (`vllm serve` from "
        "0.11.1, the API server module before), so the words after the image are its "
        "arguments: vLLM stops with 'unrecognized arguments: serve ...'."
    ),
    "unknown-flag:entrypoint.fix": (
        "Delete `vllm serve` after the image name (or give `--entrypoint` to docker)."
    ),
    "unknown-flag:demo-server.title": (
        "The demo server `python -m vllm.entrypoints.api_server` has no flag `{token}`"
    ),
    "unknown-flag:demo-server.why": (
        "vllm.entrypoints.api_server (a demo, removed after 0.24) parses only a few options "
        "of its own (host, port, SSL, root path, log level) and the engine's; `{token}` belongs "
        "to the OpenAI-compatible server, so the demo stops with 'api_server.py: error: "
        "unrecognized arguments: {token}'."
    ),
    "unknown-flag:demo-server.fix": (
        "Start the OpenAI-compatible server instead: `vllm serve MODEL ...` (or `python -m "
        "vllm.entrypoints.openai.api_server --model MODEL ...`), or remove `{token}`."
    ),
    "unknown-flag:stray.title": "Stray value `{token}` in the command",
    "unknown-flag:stray.why": (
        "A value that follows no flag (often a flag lost to a line break or a missing "
        "`\\`) makes vLLM refuse to start."
    ),
    "unknown-flag:stray.fix": "Find the flag `{token}` belongs to, or delete it.",
    "unknown-flag:stray.ask_ai": (
        "In the command you gave me, `{token}` stands alone without a flag. Which flag "
        "was it meant for?"
    ),
    "unknown-flag:unquoted-json.title": "The JSON value of `{flag}` is not quoted",
    "unknown-flag:unquoted-json.why": (
        "Without quotes around it the shell splits the JSON at its spaces and takes its "
        "double quotes away, so `{flag}` gets only the first piece and vLLM refuses the "
        "rest as unrecognized arguments."
    ),
    "unknown-flag:unquoted-json.fix": (
        'Put the whole JSON in single quotes: `{flag} \'{{"key": "value"}}\'`, as the '
        "corrected command does."
    ),
    "unknown-flag:unquoted-json.ask_ai": (
        "The JSON after `{flag}` in your command has no quotes around it, so the shell "
        "splits it. Please give it to me in single quotes."
    ),
    "unknown-flag:ambiguous.title": "`{token}` is short for more than one vLLM {version} flag",
    "unknown-flag:ambiguous.why": (
        "vLLM accepts the start of a long flag when only one flag begins that way "
        "(`--gpu-memory-util` means `--gpu-memory-utilization`). `{token}` begins {candidates}, "
        "so vLLM stops at startup with 'ambiguous option' instead of guessing."
    ),
    "unknown-flag:ambiguous.fix": "Write the whole flag you meant, one of: {candidates}.",
    "unknown-flag:ambiguous.ask_ai": (
        "vLLM {version} cannot tell which flag `{token}` means ({candidates}). Which one did "
        "you intend? Please write it out in full."
    ),
    "model-required.title": "vLLM {version} wants the model right after `vllm serve`",
    "model-required.why": (
        "Before 0.8.3 `vllm serve` took the model only as its first word; `--model {given}` "
        "alone leaves that word missing and vLLM stops with 'the following arguments are "
        "required: model_tag'."
    ),
    "model-required.fix": "Write `vllm serve {given} ...` (the model first, without `--model`).",
    "model-required:flag.title": "vLLM {version} refuses `--model` after `vllm serve`",
    "model-required:flag.why": (
        "From 0.8.3 to 0.11.0 vLLM stops before parsing with 'With `vllm serve`, you should "
        "provide the model as a positional argument or in a config file instead of via the "
        "`--model` option.' (0.11.1 and later only warn)."
    ),
    "model-required:flag.fix": (
        "Write `vllm serve {given} ...` (the model first, without `--model`)."
    ),
    "model-required:served-name.title": (
        "vLLM {version} wants the model first when `--served-model-name` is given"
    ),
    "model-required:served-name.why": (
        "From 0.20.0 vLLM refuses `--served-model-name` when no model comes right after "
        "`vllm serve` (and no `--model` or `--config` names one): '`model` should be provided "
        "as the first positional argument'."
    ),
    "model-required:served-name.fix": "Put the model right after `vllm serve`.",
    "model-required:none.title": "`vllm serve` of vLLM {version} needs a model",
    "model-required:none.why": (
        "Before 0.8.3 `vllm serve` has no default model: without one it stops with 'the "
        "following arguments are required: model_tag'."
    ),
    "model-required:none.fix": "Name the model right after `vllm serve`.",
    "model-required:older.title": (
        "vLLM before {since} refuses `--model` after `vllm serve`; write the model first"
    ),
    "model-required:older.why": (
        "The release is not known, so the newest is assumed, which takes `--model {given}` "
        "with a deprecation warning. Every release before {since} stops: before 0.8.3 with "
        "'the following arguments are required: model_tag', from 0.8.3 with 'you should "
        "provide the model as a positional argument'."
    ),
    "model-required:older.fix": (
        "Write `vllm serve {given} ...` (the model first, without `--model`): every release "
        "reads that, or pass `--vllm-version` to review for yours."
    ),
    "flag-without-dashes.title": "`{token}` is a flag written without its dashes",
    "flag-without-dashes.why": (
        "vLLM reads a word without a leading `--` as a positional argument; after the model "
        "there is none to fill, so it stops at once with 'unrecognized arguments: {token}'."
    ),
    "flag-without-dashes.fix": "Write it as a flag: `{fixed}`.",
    "extra-positional-after-entrypoint.title": (
        "`{token}` after the image `{image}` is one word too many"
    ),
    "extra-positional-after-entrypoint.why": (
        "The image already starts vLLM's server (`vllm serve` from 0.11.1, the API server "
        "module before), so the words after it are the server's arguments: `{token}` is taken "
        "for the model and the model for an extra argument, and vLLM stops with "
        "'unrecognized arguments'."
    ),
    "extra-positional-after-entrypoint.fix": (
        "Delete `{token}` after the image name: `docker run ... {image} MODEL --flags`."
    ),
    "extra-positional-after-entrypoint:other-image.title": (
        "`{token}` after the image `{image}` is one word too many if its entrypoint is vLLM's "
        "server"
    ),
    "extra-positional-after-entrypoint:other-image.why": (
        "`{token}` alone is no program, so the image's entrypoint is vLLM: if it is the "
        "server (`vllm serve`, or the API server module, as vLLM's images and images built "
        "FROM them are), `{token}` is taken for the model and the model for an extra "
        "argument, and vLLM stops with 'unrecognized arguments'. Only an entrypoint of bare "
        "`vllm` reads it as meant."
    ),
    "extra-positional-after-entrypoint:other-image.fix": (
        'Delete `{token}` after the image name, unless the image\'s ENTRYPOINT is ["vllm"] '
        "(`docker inspect {image}` shows it)."
    ),
    "default-model.title": "No model named: vLLM {version} serves its default, {default}",
    "default-model.why": (
        "With no model on the command line or in `--config`, vLLM loads its built-in default "
        "model, and this review is about that model. It is a small test model, rarely what "
        "a server is meant to run."
    ),
    "default-model.fix": "Name the model you mean: `vllm serve ORG/MODEL ...`.",
    "removed-flag.title": (
        "`{token}` was removed from vLLM (last in {last_seen}, gone by {gone_in})"
    ),
    "removed-flag.why": (
        "Assistants trained on older docs still write this flag. vLLM {version} no longer "
        "has it and refuses to start with 'unrecognized arguments'. What it did is gone or now "
        "the default."
    ),
    "removed-flag.fix": "Delete `{token}`.",
    "removed-flag.ask_ai": (
        "`{token}` no longer exists in vLLM {version} (removed after {last_seen}). "
        "Please update the command for vLLM {version} without outdated flags."
    ),
    "removed-flag:replaced.title": (
        "`{token}` was removed from vLLM (last in {last_seen}); use {replacement}"
    ),
    "removed-flag:replaced.why": (
        "Assistants trained on older docs still write this flag. vLLM {version} no longer "
        "has it and refuses to start with 'unrecognized arguments'."
    ),
    "removed-flag:replaced.fix": "Replace `{token}` with {replacement}.",
    "removed-flag:replaced.ask_ai": (
        "`{token}` no longer exists in vLLM {version}; its replacement is "
        "{replacement}. Please rewrite that part of the command."
    ),
    "bool-flag-value.title": "`{token}`: switches take no value in this vLLM",
    "bool-flag-value.why": (
        "vLLM's on/off flags are switches: `--flag` turns it on and `--no-flag` turns it "
        "off. A value after them ('True', '=False') makes vLLM refuse to start."
    ),
    "bool-flag-value.fix": "Write `{fixed}`.",
    "bool-flag-value.ask_ai": (
        "vLLM {version} rejects `{token}`; on/off options are written `--x` or "
        "`--no-x`. Please fix the command."
    ),
    "missing-value.title": "`{token}` has no value",
    "missing-value.why": (
        "This flag needs a value and the next word is another flag or the end of the "
        "command, so vLLM refuses to start."
    ),
    "missing-value.fix": "Give `{token}` its value, or remove it.",
    "missing-value.ask_ai": "In your command `{token}` has no value. What value did you intend?",
    "invalid-value.title": "`{token}`: `{value}` is not a valid value",
    "invalid-value.why": (
        "vLLM checks option types and choices before it loads anything and refuses to "
        "start on a value it cannot read."
    ),
    "invalid-value.fix": (
        "Use a value of the right kind (see `vllm serve --help=all`), or remove the flag to "
        "take vLLM's default, as the corrected command does."
    ),
    "invalid-value.ask_ai": "vLLM {version} rejects `{token}`. What value should it be?",
    "invalid-value:did-you-mean.title": "`{token}`: `{value}` is not a valid value",
    "invalid-value:did-you-mean.why": (
        "vLLM checks option types and choices before it loads anything and refuses to "
        "start on a value it cannot read."
    ),
    "invalid-value:did-you-mean.fix": "Use `{suggestion}`, the accepted value closest to it.",
    "invalid-value:did-you-mean.ask_ai": (
        "vLLM {version} rejects `{token}`. Did you mean `{suggestion}`?"
    ),
    "invalid-value:choices.title": "`{token}`: `{value}` is not a valid value",
    "invalid-value:choices.why": (
        "vLLM {version} accepts only these values here: {choices}. It checks them before it "
        "loads anything and refuses to start on any other."
    ),
    "invalid-value:choices.fix": (
        "Use one of those values, or remove the flag to take vLLM's default, as the "
        "corrected command does; a value a later release added needs that release."
    ),
    "invalid-value:choices.ask_ai": (
        "vLLM {version} rejects `{token}`: it accepts only {choices}. Which one fits, or "
        "which release did you mean?"
    ),
    "config-unreadable.title": "Cannot read the --config file `{path}`",
    "config-unreadable.why": (
        "{reason}. The settings in that file were not reviewed; on the server, vLLM will "
        "fail if it cannot read it either."
    ),
    "config-unreadable.fix": (
        "Run the check where the file is, or pass its flags on the command line."
    ),
    "config-unreadable.ask_ai": (
        "Please show me the full contents of `{path}` so I can check its settings."
    ),
    "tp-exceeds-gpus.title": (
        "The command needs {needed} GPUs (TP {tp} x PP {pp} x DP {dp}); the machine has {gpus}"
    ),
    "tp-exceeds-gpus.why": (
        "vLLM starts one worker per GPU of the tensor x pipeline x data parallel grid. "
        "With fewer GPUs it fails at startup ('World size ... is larger than the number of "
        "available GPUs') or, in older releases, waits for a Ray cluster that does not exist."
    ),
    "tp-exceeds-gpus.fix": (
        "Set the parallel sizes so that TP x PP x DP is at most {gpus} "
        "(usually `--tensor-parallel-size` = the number of GPUs)."
    ),
    "tp-exceeds-gpus.ask_ai": (
        "My machine has {machine}. Your command asks for {needed} GPUs "
        "(tensor-parallel-size {tp}). Please rewrite it for exactly {gpus} GPUs."
    ),
    "tp-below-gpus.title": "{idle} of {gpus} GPUs will sit idle (the command uses {needed})",
    "tp-below-gpus.why": (
        "vLLM only uses the GPUs of its parallel grid; the others hold no weights and no "
        "KV cache. You pay for them and get nothing back."
    ),
    "tp-below-gpus.fix": (
        "Use all of them: raise `--tensor-parallel-size` (fewer, larger shards; more KV "
        "cache room) or `--data-parallel-size` (independent replicas; more throughput), or "
        "start a second server on the idle GPUs."
    ),
    "tp-below-gpus.ask_ai": (
        "My machine has {machine} but the command only uses {needed}. Should I raise "
        "tensor-parallel-size or run data-parallel replicas for this model and traffic?"
    ),
    "pp-unsupported-model.title": (
        "vLLM {version} cannot run {architecture} with pipeline parallelism"
    ),
    "pp-unsupported-model.why": (
        "The release's {architecture} does not implement pipeline stages (`SupportsPP`), so "
        "`--pipeline-parallel-size {pp}` stops vLLM while it builds the model: 'Pipeline "
        "parallelism is not supported for this model'. No release so far adds it."
    ),
    "pp-unsupported-model.fix": (
        "Split the model with tensor parallelism instead (`--tensor-parallel-size {tp_all}` "
        "where the heads allow it), or use fewer GPUs."
    ),
    "pp-unsupported-model:later.title": (
        "vLLM {version} cannot run {architecture} with pipeline parallelism ({since} can)"
    ),
    "pp-unsupported-model:later.why": (
        "In vLLM {version} {architecture} does not implement pipeline stages (`SupportsPP`), "
        "so `--pipeline-parallel-size {pp}` stops vLLM while it builds the model: 'Pipeline "
        "parallelism is not supported for this model'. Support arrived in {since}."
    ),
    "pp-unsupported-model:later.fix": (
        "Upgrade vLLM to {since} or newer, or split the model with tensor parallelism "
        "(`--tensor-parallel-size {tp_all}` where the heads allow it)."
    ),
    "pp-unsupported-model:older.title": (
        "vLLM before {since} cannot run {architecture} with pipeline parallelism"
    ),
    "pp-unsupported-model:older.why": (
        "The release is not known, so the newest is assumed, which runs {architecture} over "
        "{pp} pipeline stages. Releases up to {older} do not (no `SupportsPP`): they stop "
        "while building the model with 'Pipeline parallelism is not supported for this model'."
    ),
    "pp-unsupported-model:older.fix": (
        "Run vLLM {since} or newer (pass `--vllm-version` to review for yours), or split the "
        "model with tensor parallelism (`--tensor-parallel-size {tp_all}`)."
    ),
    "tp-heads-indivisible.title": (
        "{model} has {heads} attention heads, which TP {tp} does not divide"
    ),
    "tp-heads-indivisible.why": (
        "Tensor parallelism splits the attention heads evenly across GPUs. vLLM refuses "
        "to start: 'Total number of attention heads ({heads}) must be divisible by tensor "
        "parallel size ({tp})'."
    ),
    "tp-heads-indivisible.fix": "Use a tensor parallel size that divides {heads}: {valid}.",
    "tp-heads-indivisible.ask_ai": (
        "{model} has {heads} attention heads, so --tensor-parallel-size {tp} cannot "
        "work. My machine has {machine}. Please pick a TP from {valid} (and say what to do with "
        "any GPUs left over)."
    ),
    "tp-heads-indivisible:kv.title": (
        "{model} has {kv_heads} KV heads; TP {tp} and {kv_heads} do not divide each other"
    ),
    "tp-heads-indivisible:kv.why": (
        "With grouped-query attention vLLM gives each GPU a whole number of KV heads, or "
        "replicates them when TP is larger. That needs KV heads and TP to divide one another; "
        "otherwise a worker fails with 'is not divisible by'."
    ),
    "tp-heads-indivisible:kv.fix": "Use a tensor parallel size from: {valid}.",
    "tp-heads-indivisible:kv.ask_ai": (
        "{model} has {kv_heads} KV heads, so --tensor-parallel-size {tp} cannot "
        "split them. My machine has {machine}. Please pick a TP from {valid}."
    ),
    "quant-on-unquantized.title": (
        "`--quantization {flag_method}` on {model}, which is not quantized with {family}"
    ),
    "quant-on-unquantized.why": (
        "For {family} the flag says how to read an already-quantized checkpoint; it never "
        "quantizes on the fly. {model} has no quantization config, so vLLM fails ('Cannot find "
        "the config file for {flag_method}'). Online quantization is a different method "
        "(`--quantization fp8`)."
    ),
    "quant-on-unquantized.fix": (
        "Either serve the {family} checkpoint of this model (often the same name ending in "
        "-{family}), or drop `--quantization` to serve the original weights."
    ),
    "quant-on-unquantized.ask_ai": (
        "My machine has {machine}. The model {model} is the original, non-{family} "
        "checkpoint, so `--quantization {flag_method}` cannot work. Either switch to the "
        "{family} checkpoint of this model or drop --quantization; which fits my GPUs, and "
        "what memory does each need?"
    ),
    "quant-method-mismatch.title": (
        "`--quantization {flag_method}` but {model} is quantized with {checkpoint_method}"
    ),
    "quant-method-mismatch.why": (
        "A quantized checkpoint can only be read with its own method. vLLM refuses to "
        "start ('Quantization method specified in the model config ({checkpoint_method}) does "
        "not match ...')."
    ),
    "quant-method-mismatch.fix": (
        "Drop `--quantization`: vLLM detects {checkpoint_method} from the checkpoint and "
        "picks the fastest kernel itself."
    ),
    "quant-method-mismatch.ask_ai": (
        "{model} is a {checkpoint_method} checkpoint, but your command says "
        "--quantization {flag_method}. Should I just drop the flag?"
    ),
    "quant-method-mismatch:release.title": (
        "vLLM {version} refuses `--quantization {flag_method}` on the {checkpoint_method} "
        "checkpoint {model}"
    ),
    "quant-method-mismatch:release.why": (
        "In this release the {checkpoint_method} checkpoint runs on Marlin only when vLLM picks "
        "the kernel itself: the name given is compared with the checkpoint's method and vLLM "
        "stops ('Quantization method specified in the model config ({checkpoint_method}) does "
        "not match the quantization method specified in the `quantization` argument "
        "({flag_method})'). Later releases take the name."
    ),
    "quant-method-mismatch:release.fix": (
        "Drop `--quantization`: vLLM detects {checkpoint_method} from the checkpoint and "
        "picks its Marlin kernel where the GPU has it."
    ),
    "quant-unsupported-gpu.title": "{method} needs compute capability {needed}; {gpu} has {have}",
    "quant-unsupported-gpu.why": (
        "vLLM {version} has no {method} kernels for this GPU generation and refuses to "
        "start ('The quantization method {method} is not supported for the current GPU')."
    ),
    "quant-unsupported-gpu.fix": (
        "Use a method this GPU supports (GPTQ runs from 6.0, AWQ from 7.5), a "
        "non-quantized checkpoint with more GPUs, or a newer GPU."
    ),
    "quant-unsupported-gpu.ask_ai": (
        "My GPUs are {machine} (compute capability {have}); {method} needs {needed}. "
        "Which checkpoint of this model can I serve on them instead?"
    ),
    "quant-unsupported-gpu:scheme.title": (
        "{method} needs compute capability {needed}; {gpu} has {have}"
    ),
    "quant-unsupported-gpu:scheme.why": (
        "The checkpoint's quantization_config describes this scheme, and vLLM {version} runs it "
        "from capability {needed} (its get_min_capability): it refuses to start ('Quantization "
        "scheme is not supported for the current GPU. Min capability: ...')."
    ),
    "quant-unsupported-gpu:scheme.fix": (
        "Serve a checkpoint of this model in a scheme the GPU supports (W8A8-INT8 runs from "
        "7.5, GPTQ from 6.0), a vLLM release that runs this scheme on {have}, or a newer GPU."
    ),
    "quant-unsupported-gpu:scheme.ask_ai": (
        "My GPUs are {machine} (compute capability {have}); the {method} checkpoint needs "
        "{needed} in vLLM {version}. Which quantized checkpoint of this model can I serve "
        "instead?"
    ),
    "quant-unsupported-gpu:moe.title": (
        "vLLM {version} cannot run this FP8 MoE model on {gpu} (capability {have}; {since} can)"
    ),
    "quant-unsupported-gpu:moe.why": (
        "Below capability {needed} FP8 has no native kernels. vLLM {version} runs FP8 linear "
        "layers weight-only (Marlin), but not the MoE experts: the Triton fused-MoE kernel "
        "stops with 'type fp8e4nv not supported in this architecture'. The weight-only "
        "Marlin path for FP8 experts arrived in {since}."
    ),
    "quant-unsupported-gpu:moe.fix": (
        "Upgrade vLLM to {since} or newer, or serve an AWQ/GPTQ checkpoint of this model."
    ),
    "kv-cache-dtype-unsupported-gpu.title": (
        "--kv-cache-dtype {kv_dtype} is not supported on {gpu} (capability {have}) in vLLM "
        "{version}"
    ),
    "kv-cache-dtype-unsupported-gpu.why": (
        "On this GPU vLLM {version} keeps the KV cache with its Triton attention backend, which "
        "needs capability 8.9 for FP8 (FlashInfer, which holds an fp8 cache on Ampere, is "
        "disabled below {needed}); it refuses to start ('FP8 KV cache is not supported by the "
        "Triton attention backend')."
    ),
    "kv-cache-dtype-unsupported-gpu.fix": (
        "Drop --kv-cache-dtype (a 16-bit cache), and make room with a shorter --max-model-len "
        "or more GPUs instead."
    ),
    "kv-cache-dtype-unsupported-gpu.ask_ai": (
        "On {gpu} (capability {have}) vLLM {version} cannot hold an {kv_dtype} KV cache. How "
        "else can I fit the context length I need: shorter --max-model-len, more GPUs, or a "
        "smaller model?"
    ),
    "kv-cache-dtype-unsupported-gpu:e5m2.title": (
        "--kv-cache-dtype {kv_dtype} (e4m3) is not supported on {gpu} (capability {have}) in "
        "vLLM {version}"
    ),
    "kv-cache-dtype-unsupported-gpu:e5m2.why": (
        "On this GPU vLLM {version} keeps the KV cache with its Triton attention backend, whose "
        "e4m3 type (fp8e4nv) needs capability 8.9; the start fails while Triton compiles the "
        "attention kernel ('type fp8e4nv not supported in this architecture'). Its e5m2 type "
        "works on older GPUs."
    ),
    "kv-cache-dtype-unsupported-gpu:e5m2.fix": (
        "Use --kv-cache-dtype fp8_e5m2 (same memory, coarser precision), or drop the flag for a "
        "16-bit cache."
    ),
    "kv-cache-dtype-unsupported-gpu:e5m2.ask_ai": (
        "On {gpu} vLLM {version} cannot hold an fp8 e4m3 KV cache. Is fp8_e5m2 accurate enough "
        "for my tasks, or should I keep a 16-bit cache?"
    ),
    "quant-tp-shape.title": (
        "At TP {tp} each GPU's share of a quantized layer ({size} of {width}) is not a "
        "multiple of {tile}"
    ),
    "quant-tp-shape.why": (
        "Tensor parallelism gives every GPU 1/TP of each weight matrix. {model}'s {what} is "
        "{width}, and {width} / {tp} = {size} does not split into whole quantization groups "
        "and kernel tiles of {tile}, so vLLM stops while it builds the layers ('... is not "
        "divisible by group_size' or 'min_thread_k')."
    ),
    "quant-tp-shape.fix": (
        "Use a --tensor-parallel-size that keeps the share a multiple of {tile}: {valid}; spend "
        "other GPUs on --pipeline-parallel-size or --data-parallel-size, or serve a checkpoint "
        "whose layers were padded for this TP."
    ),
    "quant-tp-shape.ask_ai": (
        "{model} is group-quantized and its {what} ({width}) does not split into whole groups "
        "of {tile} at TP {tp}. Which parallel layout works on {machine}: TP {valid}, pipeline "
        "parallelism, or another checkpoint?"
    ),
    "quant-tp-shape:sizes.title": (
        "At TP {tp} each GPU's share of a quantized layer ({size} of {width}) is not a "
        "multiple of {tile}"
    ),
    "quant-tp-shape:sizes.why": (
        "Tensor parallelism gives every GPU 1/TP of each weight matrix. {model}'s {what} is "
        "{width}, and {width} / {tp} = {size} does not split into whole quantization groups "
        "and kernel tiles of {tile}, so vLLM stops while it builds the layers ('... is not "
        "divisible by group_size' or 'min_thread_k')."
    ),
    "quant-tp-shape:sizes.fix": (
        "Use a --tensor-parallel-size that keeps the share a multiple of {tile}: {valid}; spend "
        "other GPUs on --pipeline-parallel-size or --data-parallel-size, or serve a checkpoint "
        "whose layers were padded for this TP."
    ),
    "quant-tp-shape:sizes.ask_ai": (
        "{model} is group-quantized and its {what} ({width}) does not split into whole groups "
        "of {tile} at TP {tp}. Which parallel layout works on {machine}: TP {valid}, pipeline "
        "parallelism, or another checkpoint?"
    ),
    "quant-tp-shape:experts.title": (
        "At TP {tp} each GPU's share of the experts' layers ({size} of {width}) is not a "
        "multiple of {tile}: requests may fail"
    ),
    "quant-tp-shape:experts.why": (
        "Tensor parallelism gives every GPU 1/TP of each expert's weights. {model}'s {what} is "
        "{width}, and {width} / {tp} = {size} does not split into whole quantization groups of "
        "{tile}. vLLM falls back from Marlin to its MoE WNA16 kernels and starts, but those "
        "can fail on the first request ('size_k must divisible by BLOCK_SIZE_K')."
    ),
    "quant-tp-shape:experts.fix": (
        "Add --enable-expert-parallel (experts are placed whole, not split), or use a "
        "--tensor-parallel-size that keeps the share whole groups: {valid}."
    ),
    "quant-tp-shape:experts.ask_ai": (
        "{model}'s experts ({what} {width}) do not split into whole groups of {tile} at TP "
        "{tp}. Should I enable expert parallelism on {machine}, or change the tensor-parallel "
        "size to {valid}?"
    ),
    "fp8-weight-only.title": "FP8 on {gpu}: weights shrink, compute does not speed up",
    "fp8-weight-only.why": (
        "This GPU has no FP8 tensor cores (they start with Ada/Hopper, capability 8.9). "
        "vLLM stores the weights in FP8 and runs them through a weight-only Marlin kernel in "
        "16-bit: half the weight memory, but no FP8 speed-up, and prefill-heavy work can get "
        "slower."
    ),
    "fp8-weight-only.fix": (
        "Fine if the goal is memory. For speed on this GPU, compare against AWQ/GPTQ "
        "4-bit checkpoints, and measure before/after with `servetune bench`."
    ),
    "fp8-weight-only.ask_ai": (
        "My GPUs are {machine}, without native FP8. Is FP8 here for memory or for "
        "speed? If speed, would an AWQ or GPTQ checkpoint be the better choice?"
    ),
    "quant-slow-kernel.title": (
        "`--quantization {flag_method}` forces the slow kernel; vLLM {version} would pick {marlin}"
    ),
    "quant-slow-kernel.why": (
        "Left alone, vLLM {version} runs this checkpoint with the much faster Marlin "
        "kernel on {gpu}. Naming the method explicitly forces the original {flag_method} "
        "kernel (the log says 'forcing {flag_method}')."
    ),
    "quant-slow-kernel.fix": "Drop `--quantization` (or write `--quantization {marlin}`).",
    "quant-slow-kernel.ask_ai": (
        "On vLLM {version}, `--quantization {flag_method}` forces the slow kernel "
        "while the checkpoint would run on {marlin}. Can I drop the flag?"
    ),
    "quant-dtype-unsupported.title": (
        "{method} in vLLM {version} does not compute in {dtype}: it needs {allowed}"
    ),
    "quant-dtype-unsupported.why": (
        "Each quantization method's kernels work in some activation dtypes only; vLLM checks "
        "the model's dtype against them before it loads anything and stops with 'torch."
        "{dtype} is not supported for quantization method {method}. Supported dtypes: "
        "[{allowed}]'."
    ),
    "quant-dtype-unsupported.fix": (
        "Use `--dtype {allowed}` (or drop `--dtype` and let vLLM choose); a GPU without that "
        "dtype cannot run this checkpoint's method."
    ),
    "quant-dtype-unsupported:auto.title": (
        "{method} in vLLM {version} does not compute in {dtype}, the checkpoint's dtype: it "
        "needs {allowed}"
    ),
    "quant-dtype-unsupported:auto.why": (
        "With `--dtype auto` vLLM computes in the checkpoint's own dtype ({dtype}), then checks "
        "it against the quantization method's kernels before it loads anything and stops with "
        "'torch.{dtype} is not supported for quantization method {method}. Supported dtypes: "
        "[{allowed}]'."
    ),
    "quant-dtype-unsupported:auto.fix": (
        "Add `--dtype {allowed}`; a GPU without that dtype cannot run this checkpoint's method."
    ),
    "quant-dtype-unsupported:older.title": ("vLLM before {since} does not run {method} in {dtype}"),
    "quant-dtype-unsupported:older.why": (
        "The release is not known, so the newest is assumed, whose {method} kernels compute in "
        "{dtype}. Releases before {since} take {allowed} only: they stop before loading with "
        "'torch.{dtype} is not supported for quantization method {method}'."
    ),
    "quant-dtype-unsupported:older.fix": (
        "On vLLM older than {since}, add `--dtype {allowed}` (pass `--vllm-version` to review "
        "for yours)."
    ),
    "arch-unsupported-in-release.title": (
        "vLLM {version} has no {architecture}: it arrived in {since}"
    ),
    "arch-unsupported-in-release.why": (
        "The release's model registry does not name {architecture}, so vLLM stops at startup: "
        "'Model architectures ['{architecture}'] are not supported for now'. The first release "
        "whose registry has it is {since}. Releases with the Transformers backend try that "
        "instead, which runs only where the installed transformers implements the model."
    ),
    "arch-unsupported-in-release.fix": "Upgrade vLLM to {since} or newer.",
    "arch-unsupported-in-release:removed.title": (
        "vLLM {version} no longer has {architecture} (the last release with it is {since})"
    ),
    "arch-unsupported-in-release:removed.why": (
        "The release's model registry no longer names {architecture}, so vLLM stops at "
        "startup: 'Model architectures ['{architecture}'] are not supported for now' (unless "
        "the Transformers backend can run it). {since} is the last release that registers it."
    ),
    "arch-unsupported-in-release:removed.fix": "Run vLLM {since}, or a model vLLM still has.",
    "gguf-arch-unsupported.title": (
        "vLLM {version}'s GGUF loader cannot read a {model_type} checkpoint ({since} can)"
    ),
    "gguf-arch-unsupported.why": (
        "GGUF names this model type differently from transformers, and the loader of this "
        "release lacks the rename: loading stops with 'Unknown gguf model_type' (or "
        "transformers' 'GGUF model with architecture ... is not supported yet'). The rename "
        "arrived in {since}."
    ),
    "gguf-arch-unsupported.fix": (
        "Upgrade vLLM to {since} or newer, or serve the original (safetensors) checkpoint or "
        "an AWQ/GPTQ one of it."
    ),
    "gguf-arch-unsupported:no-loader.title": (
        "vLLM {version} cannot load GGUF checkpoints ({since} can)"
    ),
    "gguf-arch-unsupported:no-loader.why": (
        "The release has no GGUF loader: the file is not a checkpoint it can read. GGUF "
        "support arrived in {since}."
    ),
    "gguf-arch-unsupported:no-loader.fix": (
        "Upgrade vLLM to {since} or newer, or serve the original (safetensors) checkpoint."
    ),
    "gguf-arch-unsupported:transformers.title": (
        "No transformers that vLLM {version} runs with reads a GGUF file of architecture "
        "{architecture}"
    ),
    "gguf-arch-unsupported:transformers.why": (
        "vLLM has transformers read a .gguf file's config from its metadata, and transformers "
        "stops on an architecture it has no table for: 'GGUF model with architecture "
        "{architecture} is not supported yet'. vLLM {version} requires transformers "
        "{requirement}; none of those releases (through {newest}) reads {architecture}."
    ),
    "gguf-arch-unsupported:transformers.fix": (
        "Give the original model's config with `--hf-config-path ORG/MODEL` (and "
        "`--tokenizer ORG/MODEL`), or serve the original (safetensors) checkpoint or an "
        "AWQ/GPTQ one of it."
    ),
    "gguf-arch-unsupported:transformers-depends.title": (
        "Whether vLLM {version} reads this GGUF file depends on the installed transformers "
        "({first} or newer reads {architecture})"
    ),
    "gguf-arch-unsupported:transformers-depends.why": (
        "vLLM has transformers read a .gguf file's config from its metadata. vLLM {version} "
        "requires transformers {requirement}; releases before {first} stop on this file: 'GGUF "
        "model with architecture {architecture} is not supported yet'."
    ),
    "gguf-arch-unsupported:transformers-depends.fix": (
        "Check `pip show transformers` says {first} or newer, or give the original model's "
        "config with `--hf-config-path ORG/MODEL`."
    ),
    "bnb-prequant-tp-unsupported.title": (
        "vLLM {version} cannot split a pre-quantized bitsandbytes checkpoint over TP {tp}"
    ),
    "bnb-prequant-tp-unsupported.why": (
        "A pre-quantized bitsandbytes checkpoint keeps quant states that cannot be split "
        "across GPUs, so the loader stops: 'Prequant BitsAndBytes models with tensor "
        "parallelism is not supported. Please try with pipeline parallelism.'"
    ),
    "bnb-prequant-tp-unsupported.fix": (
        "Use pipeline parallelism instead: `--tensor-parallel-size 1 "
        "--pipeline-parallel-size {pp_all}`, or serve the unquantized checkpoint with TP."
    ),
    "bnb-load-format-missing.title": (
        "vLLM {version} loads this bitsandbytes checkpoint with the wrong loader"
    ),
    "bnb-load-format-missing.why": (
        "Before {since} vLLM does not pick its bitsandbytes loader from the checkpoint: the "
        "default loader meets the quant-state tensors it does not expect and stops with "
        "`KeyError: '...weight.absmax'`."
    ),
    "bnb-load-format-missing.fix": (
        "Add `--quantization bitsandbytes --load-format bitsandbytes`, or upgrade vLLM to "
        "{since} or newer."
    ),
    "bnb-load-format-missing:older.title": (
        "vLLM before {since} loads this bitsandbytes checkpoint with the wrong loader"
    ),
    "bnb-load-format-missing:older.why": (
        "The release is not known, so the newest is assumed. Releases before {since} do not "
        "pick the bitsandbytes loader from the checkpoint: the default loader stops with "
        "`KeyError: '...weight.absmax'`."
    ),
    "bnb-load-format-missing:older.fix": (
        "Add `--quantization bitsandbytes --load-format bitsandbytes` (any release accepts "
        "them), or pass `--vllm-version` to review for yours."
    ),
    "dtype-unsupported-gpu.title": "bfloat16 needs compute capability 8.0; {gpu} has {have}",
    "dtype-unsupported-gpu.why": (
        "GPUs before Ampere (V100, T4) have no bfloat16. vLLM stops at startup "
        "('Bfloat16 is only supported on GPUs with compute capability of at least 8.0')."
    ),
    "dtype-unsupported-gpu.fix": "Use `--dtype {fix_dtype}`.",
    "dtype-unsupported-gpu.ask_ai": (
        "My GPUs are {machine} (compute capability {have}), without bfloat16. Please "
        "use --dtype {fix_dtype} and check the model is stable in it."
    ),
    "dtype-unsupported-model.title": "{model} ({model_type}) cannot run in float16",
    "dtype-unsupported-model.why": (
        "This model family overflows in float16, so vLLM refuses it ('does not support "
        "float16. Reason: Numerical instability')."
    ),
    "dtype-unsupported-model.fix": "Use `--dtype {fix_dtype}`.",
    "dtype-unsupported-model.ask_ai": (
        "vLLM refuses float16 for {model_type} models. Please use --dtype {fix_dtype}, "
        "and tell me if my GPUs ({machine}) can run that."
    ),
    "batched-tokens-too-small.title": (
        "--max-num-batched-tokens {mbt} starves the GPU (vLLM's default here: {default})"
    ),
    "batched-tokens-too-small.why": (
        "This is the token budget of one scheduler step, shared by every running "
        "request. At {mbt}, a {prompt}-token prompt needs {steps} steps just to be read, the GPU "
        "does too little work per step, and time to first token climbs as users queue. Nothing "
        "errors: it is just slow."
    ),
    "batched-tokens-too-small.fix": (
        "Remove the flag to get vLLM's default ({default}), or raise it; tune it with "
        "before/after numbers."
    ),
    "batched-tokens-too-small.ask_ai": (
        "Why is --max-num-batched-tokens set to {mbt}? On {machine} vLLM's default is "
        "{default}, and a small budget slows prefill for everyone. What measurement supports "
        "{mbt}?"
    ),
    "batched-tokens-below-model-len.title": (
        "--max-num-batched-tokens {mbt} is below max-model-len {max_model_len} with "
        "chunked prefill off"
    ),
    "batched-tokens-below-model-len.why": (
        "Without chunked prefill a whole prompt must fit into one step's token budget. "
        "vLLM refuses to start ('max_num_batched_tokens ({mbt}) is smaller than max_model_len "
        "({max_model_len})')."
    ),
    "batched-tokens-below-model-len.fix": (
        "Raise --max-num-batched-tokens to at least {max_model_len}, lower "
        "--max-model-len, or leave chunked prefill on."
    ),
    "batched-tokens-below-model-len.ask_ai": (
        "With chunked prefill off, --max-num-batched-tokens ({mbt}) must be at least "
        "--max-model-len ({max_model_len}). Why is chunked prefill disabled here?"
    ),
    "batched-tokens-below-num-seqs.title": (
        "--max-num-batched-tokens {mbt} is below --max-num-seqs {seqs}"
    ),
    "batched-tokens-below-num-seqs.why": (
        "Every running sequence needs at least one token of the step budget. vLLM "
        "refuses to start ('max_num_batched_tokens ({mbt}) must be greater than or equal to "
        "max_num_seqs ({seqs})')."
    ),
    "batched-tokens-below-num-seqs.fix": (
        "Raise --max-num-batched-tokens to at least {seqs} (or lower --max-num-seqs)."
    ),
    "batched-tokens-below-num-seqs.ask_ai": (
        "--max-num-batched-tokens {mbt} is smaller than --max-num-seqs {seqs}, which "
        "vLLM rejects. Which of the two did you mean to change?"
    ),
    "prefix-caching-sliding-window.title": (
        "vLLM {version} cannot cache prefixes of {model}, whose attention slides over "
        "{window} tokens"
    ),
    "prefix-caching-sliding-window.why": (
        "Every layer of {model} attends over a sliding window of {window} tokens. The V0 "
        "engine's KV cache cannot share blocks under a sliding window, so vLLM stops at "
        "startup ('Sliding window is not allowed with prefix caching enabled!', later 'Prefix "
        "caching is not supported with sliding window'). The V1 engine, the default from "
        "{since}, caches such models."
    ),
    "prefix-caching-sliding-window.fix": (
        "Add `--disable-sliding-window` (the context is then capped at {window} tokens; "
        "releases before 0.4.3 lack the flag: drop `--enable-prefix-caching`), or run vLLM "
        "{since} or newer."
    ),
    "prefix-caching-sliding-window:v0.title": (
        "The V0 engine (VLLM_USE_V1=0) cannot cache prefixes of {model}, whose attention "
        "slides over {window} tokens"
    ),
    "prefix-caching-sliding-window:v0.why": (
        "VLLM_USE_V1=0 runs the V0 engine, whose KV cache cannot share blocks under a sliding "
        "window: vLLM {version} stops at startup with 'Prefix caching is not supported with "
        "sliding window. Run with --disable-sliding-window to use prefix caching.' The default "
        "V1 engine caches such models."
    ),
    "prefix-caching-sliding-window:v0.fix": (
        "Drop VLLM_USE_V1=0, or add `--disable-sliding-window` (the context is then capped at "
        "{window} tokens)."
    ),
    "prefix-caching-sliding-window:older.title": (
        "vLLM before {since} cannot cache prefixes of {model} (sliding window of {window})"
    ),
    "prefix-caching-sliding-window:older.why": (
        "The release is not known, so the newest is assumed, whose V1 engine caches prefixes "
        "under a sliding window. Releases before {since} (and V0 under VLLM_USE_V1=0 up to "
        "0.10) stop at startup: 'Sliding window is not allowed with prefix caching enabled!' "
        "(later 'Prefix caching is not supported with sliding window')."
    ),
    "prefix-caching-sliding-window:older.fix": (
        "On vLLM older than {since}, add `--disable-sliding-window` (the context is then capped "
        "at {window} tokens) or drop `--enable-prefix-caching`; pass `--vllm-version` to review "
        "for yours."
    ),
    "quant-unneeded.title": (
        "{method} quantization is not needed here: the original checkpoint fits with room to spare"
    ),
    "quant-unneeded.why": (
        "On {machine} the original weights take about {weights} GiB per GPU and still leave a "
        "KV cache of about {kv_tokens} tokens: every one of the {seqs} sequences the server "
        "runs at once fits at {typical} tokens. Quantizing to save memory that is not short "
        "costs accuracy (most for math, code and careful reasoning) for little throughput."
    ),
    "quant-unneeded.fix": (
        "Serve the original checkpoint, or measure what the quantization costs first: "
        "`servetune quality --before URL --after URL --model ORIGINAL --model-after QUANTIZED`."
    ),
    "quant-unneeded.ask_ai": (
        "The original model fits on {machine} with room for {seqs} sequences of {typical} "
        "tokens, so why quantize with {method}? What accuracy would we lose on our tasks, and "
        "how much throughput would we really gain?"
    ),
    "quant-unneeded:small-gain.title": (
        "{method} quantization buys little here: {gain_pct}% more KV cache than the original "
        "checkpoint"
    ),
    "quant-unneeded:small-gain.why": (
        "On {machine} the original weights take about {weights} GiB per GPU and leave a KV "
        "cache of about {kv_tokens} tokens, {conversations} conversations of {typical} tokens "
        "at once ({covered_pct}% of --max-num-seqs {seqs} at that length); {method} makes it "
        "{quant_tokens} tokens, {gain_pct}% more, less than a tenth of that load. Quantizing "
        "costs accuracy (most for math, code and careful reasoning) for that little."
    ),
    "quant-unneeded:small-gain.fix": (
        "Serve the original checkpoint, or measure what the quantization costs first: "
        "`servetune quality --before URL --after URL --model ORIGINAL --model-after QUANTIZED`."
    ),
    "quant-unneeded:small-gain.ask_ai": (
        "The original model on {machine} already holds {conversations} conversations of "
        "{typical} tokens at once; {method} adds only {gain_pct}% KV cache. How many users do we "
        "really serve at once, and what accuracy would the quantization cost us?"
    ),
    "quant-memory-unused.title": (
        "Quantization freed memory for ~{fit} conversations, but --max-num-seqs is {seqs}"
    ),
    "quant-memory-unused.why": (
        "The KV cache has room for about {kv_tokens} tokens: about {fit} concurrent "
        "{typical}-token conversations. --max-num-seqs caps the batch at {seqs}, so the memory "
        "quantization saved never turns into serving more users at once."
    ),
    "quant-memory-unused.fix": (
        "Raise --max-num-seqs (e.g. {suggested}) and measure latency before and after."
    ),
    "quant-memory-unused.ask_ai": (
        "After quantizing, the KV cache on {machine} fits about {fit} conversations "
        "of {typical} tokens, but --max-num-seqs stays at {seqs}. Should it be about "
        "{suggested}, and what latency targets should I check?"
    ),
    "quant-memory-unused:explicit.title": (
        "--max-num-seqs {seqs} leaves about {idle_pct}% of the KV cache unused "
        "(room for ~{fit} conversations)"
    ),
    "quant-memory-unused:explicit.why": (
        "The KV cache has room for about {kv_tokens} tokens: about {fit} concurrent "
        "{typical}-token conversations. With --max-num-seqs {seqs}, at most {seqs} of them run "
        "at once, so the memory quantization freed mostly sits idle."
    ),
    "quant-memory-unused:explicit.fix": (
        "If the cap was not set for latency on purpose, raise --max-num-seqs (e.g. "
        "{suggested}) and measure latency before and after; otherwise a smaller GPU or a "
        "higher-precision checkpoint would serve the same load."
    ),
    "quant-memory-unused:explicit.ask_ai": (
        "On {machine} the KV cache fits about {fit} conversations of {typical} tokens, but I "
        "set --max-num-seqs {seqs}. Is that cap needed for my latency targets, or should it "
        "be about {suggested}?"
    ),
    "model-len-exceeds-model.title": (
        "--max-model-len {asked} is longer than {model} supports ({limit})"
    ),
    "model-len-exceeds-model.why": (
        "The model's config sets {key} = {limit}. vLLM refuses to start ('User-specified "
        "max_model_len ({asked}) is greater than the derived max_model_len'); forcing it produces "
        "garbage past the trained length."
    ),
    "model-len-exceeds-model.fix": "Use --max-model-len {limit} or less.",
    "model-len-exceeds-model.ask_ai": (
        "{model} supports at most {limit} tokens of context ({key}). Please size "
        "--max-model-len to what my users need, at most {limit}."
    ),
    "weights-dont-fit.title": "Weights need {weights} GiB per GPU; only {budget} GiB is allowed",
    "weights-dont-fit.why": (
        "{model} at tensor parallel {tp} needs about {weights} GiB of weights on each "
        "GPU, more than {memory} GiB x gpu-memory-utilization {util}. vLLM runs out of memory "
        "while loading."
    ),
    "weights-dont-fit.fix": (
        "Spread the model over more GPUs (higher --tensor-parallel-size), serve a "
        "quantized checkpoint, or pick a smaller model."
    ),
    "weights-dont-fit.ask_ai": (
        "My machine has {machine}. {model} needs about {weights} GiB per GPU at TP "
        "{tp}, more than fits. Which is better here: more tensor parallelism, a quantized "
        "checkpoint, or a smaller model?"
    ),
    "kv-cache-too-small.title": (
        "The KV cache cannot hold one {max_model_len}-token sequence (fits ~{fits})"
    ),
    "kv-cache-too-small.why": (
        "After {weights} GiB of weights and ~{reserve} GiB of activations per GPU, about "
        "{kv_gib} GiB is left for the KV cache. vLLM requires at least one full-length "
        "sequence to fit and refuses to start ('To serve at least one request with the model's "
        "max seq len ...')."
    ),
    "kv-cache-too-small.fix": (
        "Set --max-model-len {fits} or less (what your users actually need), raise "
        "--gpu-memory-utilization, add GPUs, or use --kv-cache-dtype fp8."
    ),
    "kv-cache-too-small.ask_ai": (
        "On {machine} the KV cache only fits about {fits} tokens per sequence, but "
        "max-model-len is {max_model_len}. How long are my real requests, and should "
        "--max-model-len be {fits} or less?"
    ),
    "kv-cache-too-small:uncertain.title": (
        "The KV cache may not hold one {max_model_len}-token sequence (~{fits} central, "
        "~{fits_most} at best)"
    ),
    "kv-cache-too-small:uncertain.why": (
        "After {weights} GiB of weights and ~{reserve} GiB of activations per GPU, the central "
        "estimate leaves {kv_gib} GiB for the KV cache, short of one full-length sequence; with "
        "the sampler warm-up, CUDA graph and non-torch memory at the low end of what vLLM has "
        "logged, {kv_gib_most} GiB would be left, enough. vLLM refuses to start if it is short "
        "('To serve at least one request with the model's max seq len ...')."
    ),
    "kv-cache-too-small:uncertain.fix": (
        "Start it and read vLLM's 'Available KV cache memory' line; if it refuses, set "
        "--max-model-len {fits} or less (what your users actually need), or raise "
        "--gpu-memory-utilization."
    ),
    "kv-cache-too-small:uncertain.ask_ai": (
        "On {machine} the KV cache fits between about {fits} and {fits_most} tokens per "
        "sequence, and max-model-len is {max_model_len}. How long are my real requests, and "
        "should --max-model-len be {fits} or less to be safe?"
    ),
    "kv-cache-too-small:none.title": "No memory is left for the KV cache",
    "kv-cache-too-small:none.why": (
        "Weights ({weights} GiB) plus activations (~{reserve} GiB) use up the {budget} "
        "GiB vLLM may take per GPU. vLLM refuses to start ('No available memory for the cache "
        "blocks')."
    ),
    "kv-cache-too-small:none.fix": (
        "Add GPUs (higher --tensor-parallel-size), serve a quantized checkpoint, or raise "
        "--gpu-memory-utilization if nothing else uses the GPU."
    ),
    "kv-cache-too-small:none.ask_ai": (
        "On {machine}, {model} leaves no memory for the KV cache. Should I add "
        "tensor parallelism or use a quantized checkpoint?"
    ),
    "profile-activation-oom.title": (
        "vLLM's startup profile runs the vision encoder on {images} images at once "
        "(~{encoder} GiB per GPU): no room is left for the KV cache"
    ),
    "profile-activation-oom.why": (
        "Before sizing the KV cache vLLM runs a dummy batch with {per_prompt} image(s) at their "
        "largest per sequence through {model}'s vision encoder, whatever --max-model-len says. "
        "With {weights} GiB of weights that pass needs ~{encoder} GiB of the {budget} GiB vLLM "
        "may take per GPU: it runs out of memory in the profile run or finds no memory for the "
        "cache blocks."
    ),
    "profile-activation-oom.fix": (
        "Lower --max-num-seqs to {seqs} or less (each sequence brings its images to the "
        "profile), or lower --limit-mm-per-prompt."
    ),
    "profile-activation-oom.ask_ai": (
        "On {machine}, vLLM's startup profile runs {model}'s vision encoder on {images} images "
        "at once and leaves no KV cache. How many concurrent requests and images per prompt do "
        "I really need: is --max-num-seqs {seqs} enough?"
    ),
    "profile-activation-oom:none.title": (
        "vLLM's startup profile runs the vision encoder on {images} images at once "
        "(~{encoder} GiB per GPU): no room is left for the KV cache"
    ),
    "profile-activation-oom:none.why": (
        "Before sizing the KV cache vLLM runs {per_prompt} image(s) at their largest per "
        "sequence through {model}'s vision encoder. Even one such sequence needs more than the "
        "{budget} GiB per GPU left beside {weights} GiB of weights."
    ),
    "profile-activation-oom:none.fix": (
        "Lower --limit-mm-per-prompt, add GPUs (higher --tensor-parallel-size), or raise "
        "--gpu-memory-utilization if nothing else uses the GPU."
    ),
    "profile-activation-oom:none.ask_ai": (
        "On {machine}, vLLM's startup profile of {model}'s vision encoder leaves no KV cache "
        "even with one sequence. Should I limit images per prompt or add GPUs?"
    ),
    "gpu-memory-utilization-range.title": "--gpu-memory-utilization {util} is outside (0, 1]",
    "gpu-memory-utilization-range.why": (
        "It is the fraction of each GPU's memory vLLM may use, not a percentage or GiB. "
        "vLLM rejects values outside (0, 1]."
    ),
    "gpu-memory-utilization-range.fix": "Use a fraction such as 0.9.",
    "gpu-memory-utilization-range.ask_ai": (
        "--gpu-memory-utilization must be a fraction between 0 and 1; did you mean 0.9?"
    ),
    "enforce-eager.title": "--enforce-eager turns CUDA graphs off",
    "enforce-eager.why": (
        "CUDA graphs replay each decode step with almost no CPU launch overhead. Without "
        "them every step pays it, and time per output token rises, most at small batch sizes. "
        "It saves little memory and startup time: a debugging switch, not a production one."
    ),
    "enforce-eager.fix": "Remove --enforce-eager unless a graph-capture bug forces it.",
    "enforce-eager.ask_ai": (
        "Why is --enforce-eager in the command? It slows decoding; is there a "
        "specific error it works around?"
    ),
    "model-unknown.title": "Model {model} not found locally or in the built-in catalog",
    "model-unknown.why": (
        "Without its config.json the model checks (heads vs TP, quantization, context "
        "length, memory) were skipped."
    ),
    "model-unknown.fix": (
        "Pass --model-config PATH (config.json or its folder), or --online to fetch it "
        "from the Hugging Face Hub."
    ),
    "model-inferred.title": "{model} is not in the catalog: taken to be a fine-tune of {taken}",
    "model-inferred.why": (
        "Its name matches {taken}, so the checks on layers, attention and KV heads, sizes, "
        "experts, dtype and quantization use that checkpoint's config.json. Its context length "
        "is not assumed (fine-tunes often change it)."
    ),
    "model-inferred.fix": (
        "If that is not its architecture, pass --model-config PATH (its config.json or its "
        "folder) for an exact review."
    ),
    "model-inferred:copy.title": "{model} is taken to be a copy of {taken}",
    "model-inferred:copy.why": (
        "The folder or repository carries the checkpoint's own name, so every check uses the "
        "config.json of {taken}, context length included."
    ),
    "model-inferred:copy.fix": (
        "If the files differ from {taken}, pass --model-config PATH (its config.json or its "
        "folder) for an exact review."
    ),
    # --- where the memory estimate is rough (capacity.Estimate.notes) ---
    "estimate-note.mxfp4-padding": (
        "MXFP4 experts are padded for vLLM's kernels (2880 -> 2944 x 3072 for gpt-oss): "
        "weights come out 6-9% above the checkpoint."
    ),
    "estimate-note.group-quant-layout": (
        "AWQ/GPTQ weights counted as b + (16 + z)/G bits each (z = b with zero points, 0 "
        "without; GGUF: b + 0.5); a repacked layout can differ by a few percent (+-3% is allowed "
        "for in the estimate's range)."
    ),
    "estimate-note.moe-activation": (
        "Mixture of experts: vLLM's profiling peak can exceed this estimate (by 2 GiB per GPU "
        "on Qwen3-235B-A22B-FP8 at TP 4 and 8192 batched tokens; none seen on gpt-oss), "
        "leaving up to 2.5 GiB less KV cache than shown."
    ),
    "estimate-note.multimodal-encoder": (
        "Vision-language model: vLLM also profiles the image encoder, which this estimate "
        "does not model for this family; expect up to ~2 GiB per GPU less KV cache than shown."
    ),
    "estimate-note.encoder-profile": (
        "Vision-language model: the image encoder's pass in vLLM's startup profile is counted "
        "from its config (images at their largest, as many as the profile batches), within "
        "about 20% (Llama 3.2 Vision fitted on one logged run; Qwen2.5-VL counted 2.05 GiB "
        "where vLLM logged 2.51 GiB with the decoder's pass)."
    ),
    "estimate-note.cuda-graphs-estimated": (
        "CUDA graph memory is counted at 0.1 GiB plus 0.4 GiB at the largest capture size "
        "(512 at the default 1024 sequences: 0.5 GiB per GPU); vLLM profiles it since 0.21, "
        "and what it takes ranges from about none to twice that."
    ),
    "estimate-note.cuda-graphs-outside": (
        "This release captures CUDA graphs after sizing the KV cache: they take memory beyond "
        "--gpu-memory-utilization (up to ~1 GiB per GPU)."
    ),
    "estimate-note.sampler-flashinfer": (
        "vLLM 0.8 to 0.11.0 warms up FlashInfer's sampler when FlashInfer is installed (vLLM's "
        "Docker image) and PyTorch's sort-based one otherwise (a pip install): counted as the "
        "sort, 9.6 logits-sized copies at --max-num-seqs; with FlashInfer that share of the "
        "reserve is about 2.7 times smaller and the KV cache larger by the difference."
    ),
    "estimate-note.encoder-no-kv": (
        "Encoder-only model (embeddings, reranking, classification): it keeps no KV cache, "
        "so only its weights and one forward pass at the token budget count."
    ),
    "estimate-note.no-kv-memory": (
        "The weights and the profiling reserve take more than --gpu-memory-utilization leaves: "
        "vLLM would stop at startup with no KV cache, so the figures show the shortfall, not a "
        "capacity."
    ),
    "estimate-note.mla-full-kv": (
        "This release caches K and V for every head of the MLA model instead of its latent "
        "(head size 256 before 0.7.1; 192 in 0.7.1 and 0.7.2 for checkpoints other than fp8 "
        "and compressed-tensors): 10 to 30 times more KV per token than from 0.7.3."
    ),
    "estimate-note.release-unknown-unchunked": (
        "No vLLM release was given, so the newest release's defaults are assumed (chunked "
        "prefill). Releases before 0.8 profile a whole --max-model-len prompt when they do not "
        "chunk (below 32K tokens, and at any length before 0.5.3), which holds back more than a "
        "GiB more per GPU here: pass --vllm-version for that release's figure."
    ),
    "hardware-unknown.title": "No GPU information: hardware checks skipped",
    "hardware-unknown.why": (
        "No --gpus was given and NVML found no NVIDIA GPU here, so GPU count, memory and "
        "compute-capability checks were skipped."
    ),
    "hardware-unknown.fix": (
        "Pass --gpus, e.g. --gpus 2xA100-80GB (what `nvidia-smi -L` shows on the server)."
    ),
    "hardware-unknown:count-only.title": "GPU model unknown: memory and capability checks skipped",
    "hardware-unknown:count-only.why": (
        "Only the GPU count ({count}) is known, so memory, dtype and quantization "
        "support checks were skipped."
    ),
    "hardware-unknown:count-only.fix": "Name the GPU too, e.g. --gpus {count}xA100-80GB.",
    "hardware-unknown:cpu.title": "vLLM's CPU backend: GPU checks skipped",
    "hardware-unknown:cpu.why": (
        "The command runs on CPUs (--gpus CPU), where there is no GPU memory, compute "
        "capability or GPU kernel to check: the memory estimate and the dtype, quantization and "
        "KV-cache dtype checks were skipped (the KV cache is VLLM_CPU_KVCACHE_SPACE GiB of host "
        "memory)."
    ),
    "hardware-unknown:cpu.fix": "If the server has GPUs, pass them instead, e.g. --gpus 1xL4.",
    "hardware-unknown:platform.title": "{gpu} ({platform}): CUDA checks skipped",
    "hardware-unknown:platform.why": (
        "The bfloat16, quantization-kernel and fp8 KV-cache checks read a CUDA compute "
        "capability, which {platform} devices do not have, so they were skipped; memory "
        "was reviewed with its {memory} GiB per device."
    ),
    "hardware-unknown:platform.fix": (
        "Check the dtype and quantization method against vLLM's {platform} backend's "
        "supported list."
    ),
    # --- the report around the findings ---
    "report.error": "ERRORS",
    "report.warning": "WARNINGS",
    "report.info": "NOTES",
    "report.why": "Why",
    "report.fix": "Fix",
    "report.ask": "Ask your AI",
    "report.corrected": "Corrected command",
    "report.capacity": "Capacity estimate (per GPU)",
    "report.model": "Model",
    "report.hardware": "Hardware",
    "report.vllm": "vLLM",
    "report.settings": "Effective settings",
    "report.stop": "DO NOT LAUNCH: {n} error(s) would stop vLLM at startup or break it.",
    "report.warn": "Will start, but {n} warning(s) cost speed, memory or money.",
    "report.ok": "Looks good: no red flags found.",
    "report.unknown": "unknown",
    "report.none": "none (checks skipped)",
    "report.weights": "weights",
    "report.kv_token": "KV cache per token",
    "report.reserve": "activation + overhead reserve",
    "report.kv_cache": "KV cache",
    "report.kv_tokens": "KV cache tokens",
    "report.concurrency": "sequences at max-model-len",
    "report.heads": "{heads} heads / {kv_heads} KV heads",
    "report.context": "context {tokens}",
    "report.experts": "MoE {experts} experts",
    "report.list_separator": ", ",
    "report.gpu_count": "{count}x GPU ({source})",
    "report.gpu_spec": (
        "{count}x {name} ({memory} GiB, compute capability {capability}, from {source})"
    ),
    "report.heading": "{name}: {text}",
    "report.model_source": "{model} ({source})",
    "report.source.local": "local",
    "report.source.hf-cache": "hf-cache",
    "report.source.catalog": "catalog",
    "report.source.inferred": "inferred",
    "report.source.hub": "hub",
    "report.default_note": "  ({note})",
    "report.version": "{version} ({source})",
    # where a default or the vLLM version came from (review.settings, vllm.serve_command)
    "default.batch.v0": "vLLM {version}'s default (V0 engine: 256 sequences on every GPU)",
    "default.batch.unknown-gpu": "vLLM's default for GPUs under 70 GiB (the GPU is not known)",
    "default.batch.160gib": "vLLM {version}'s default for GPUs with 160 GiB or more",
    "default.batch.70gib-not-a100": "vLLM {version}'s default for {gpu} (70 GiB or more, not A100)",
    "default.batch.70gib": "vLLM {version}'s default for GPUs with 70 GiB or more",
    "default.batch.gpu": "vLLM {version}'s default for {gpu}",
    "default.chunked.v0": "vLLM 0.6 turns chunked prefill on only above 32K context",
    "default.chunked.v1": "vLLM {version} (V1 engine) always chunks prefills",
    "default.chunked.on": "on by default for generative models",
    "default.dtype.float32-bf16": "auto: float32 checkpoints are served in bfloat16",
    "default.dtype.gemma2": "auto: vLLM serves float32 Gemma 2 in bfloat16",
    "default.dtype.float32-fp16": "auto: float32 checkpoints are served in float16",
    "default.dtype.float32-only": (
        "auto: no bfloat16 on this GPU and float16 is refused for this model"
    ),
    "default.dtype.no-bf16": "auto: this GPU has no bfloat16, vLLM falls back to float16",
    "default.dtype.checkpoint": "auto: the checkpoint's own dtype",
    "default.max-model-len": "the model's {key}",
    "default.gpu-memory-utilization": "vLLM {version}'s default",
    "version.flag": "--vllm-version",
    "version.image": "docker image tag {tag}",
    "version.installed": "installed vllm package",
    "version.newest": "newest known release",
    "version.stand-in": "{source}; {version} has no published source, {table}'s flags used",
    # facts that are words (review.rules: where a number or a name is not known)
    "memory-variant.why": (
        "{why} The GPU's name is sold with more than one memory size, and this holds for the "
        "{holds} only: on the {spared} it does not. Give `--gpus` with the card's memory "
        "(`H20-96GB`, `H20-3e`) for an exact verdict."
    ),
    "fact.machine-unknown": "an unknown number of GPUs",
    "fact.older-release": "an older release",
    "fact.later-release": "a later release",
    "fact.no-model": "(none given)",
}
