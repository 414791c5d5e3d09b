"""What `doctor` says, in English: the title, why and fix of each diagnosis, and the labels of
its text report.

Keys: `<id>.<field>` or `<id>:<variant>.<field>` (fields `title`, `why`, `fix`), and
`report.<label>`. Templates are `str.format` over the facts the diagnosis table
(`launch/diagnoses.py`) parsed from the log, plus `port` and `model` from the whole log; a fact
the log lacks shows `?`.
"""

from __future__ import annotations

TEXTS: dict[str, str] = {
    "dash-typo.title": "`{token}` starts with a typographic dash, not `--`",
    "dash-typo.why": "Chat apps and word processors turn `--` into an en or em dash. vLLM does "
    "not recognise the flag and stops before loading anything (exit code 2).",
    "dash-typo.fix": "Retype the flag with two ASCII hyphens: `{fixed}`.",
    "removed-flag.title": "`{token}` no longer exists in vLLM",
    "removed-flag.why": "The flag was removed in a newer vLLM; commands written by AI assistants "
    "or copied from older guides still use it. vLLM stops at once ('unrecognized "
    "arguments', exit code 2). What it did is gone or is now the default.",
    "removed-flag.fix": "Delete `{token}` (and its value, if it has one).",
    "removed-flag:replaced.title": "`{token}` no longer exists in vLLM; use {replacement}",
    "removed-flag:replaced.why": "The flag was removed in a newer vLLM; commands written by AI "
    "assistants or copied from older guides still use it. vLLM stops at once "
    "('unrecognized arguments', exit code 2).",
    "removed-flag:replaced.fix": "Replace `{token}` with {replacement}.",
    "unknown-flag.title": "vLLM has no flag `{token}`",
    "unknown-flag.why": "vLLM stops at startup ('unrecognized arguments', exit code 2) on any "
    "flag it does not know, before it loads the model.",
    "unknown-flag.fix": "Remove `{token}`, or find the option you meant with `vllm serve "
    "--help=all`.",
    "unknown-flag:did-you-mean.title": "vLLM has no flag `{token}` (did you mean `{suggestion}`?)",
    "unknown-flag:did-you-mean.why": "vLLM stops at startup ('unrecognized arguments', exit code "
    "2) on any flag it does not know; this looks like a misspelling of `{suggestion}`.",
    "unknown-flag:did-you-mean.fix": "Use `{suggestion}`.",
    "unknown-flag:too-new.title": "`{token}` needs vLLM {first_seen} or newer; this server is "
    "{version}",
    "unknown-flag:too-new.why": "The flag first appears in vLLM {first_seen}. Older releases "
    "stop at startup with 'unrecognized arguments'.",
    "unknown-flag:too-new.fix": "Upgrade vLLM to {first_seen} or newer, or remove `{token}`.",
    "unknown-flag:other-release.title": "`{token}` is not a flag of this vLLM release",
    "unknown-flag:other-release.why": "Some vLLM releases have `{token}`, but the one that wrote "
    "this log does not: flags come and go between releases, and it stops at startup on any "
    "flag it does not know.",
    "unknown-flag:other-release.fix": "Check the installed release (`vllm --version`) and its "
    "flags (`vllm serve --help=all`); upgrade vLLM, or remove `{token}`.",
    "unknown-flag:stray.title": "Stray value `{token}` in the command",
    "unknown-flag:stray.why": "vLLM found `{token}` where it expected a flag. Usually it is a "
    "value given to an on/off switch (`--enforce-eager True`), or a flag lost to a line "
    "break or a missing `\\`.",
    "unknown-flag:stray.fix": "If `{token}` follows a switch, delete it (switches take no value: "
    "`--x` turns it on, `--no-x` off); otherwise put back the flag it belongs to.",
    "bool-flag-value.title": "`{flag}` is a switch and takes no value (got '{value}')",
    "bool-flag-value.why": "Since vLLM 0.8 on/off options are switches: `{flag}` turns it on and "
    "`{negative}` turns it off. A value after the switch stops the startup.",
    "bool-flag-value.fix": "Write `{flag}` alone to turn it on, or `{negative}` to turn it off.",
    "bool-flag-value:value-only.title": "A switch was given the value '{token}'",
    "bool-flag-value:value-only.why": "Since vLLM 0.8 on/off options are switches: `--x` turns "
    "one on and `--no-x` turns it off. vLLM reads the '{token}' after a switch as a stray "
    "argument and stops (exit code 2).",
    "bool-flag-value:value-only.fix": "Delete '{token}'; to turn the switch off, write it as "
    "`--no-...` instead.",
    "invalid-value.title": "`{flag}`: '{value}' is not a valid value",
    "invalid-value.why": "vLLM checks option types and choices before it loads anything and "
    "stops on a value it cannot read (exit code 2).",
    "invalid-value.fix": "Use one of the values the error line lists, or see `vllm serve "
    "--help=all`.",
    "missing-value.title": "`{flag}` has no value",
    "missing-value.why": "The flag needs a value, but the next word was another flag or the end "
    "of the command.",
    "missing-value.fix": "Give `{flag}` its value, or remove it.",
    "tp-exceeds-gpus.title": "The command needs {world} GPUs; vLLM sees {gpus}",
    "tp-exceeds-gpus.why": "vLLM starts one worker per GPU of the tensor x pipeline parallel "
    "grid (world size {world}), but only {gpus} GPUs are visible (CUDA_VISIBLE_DEVICES and "
    "the container's GPU list count).",
    "tp-exceeds-gpus.fix": "Make --tensor-parallel-size x --pipeline-parallel-size at most "
    "{gpus}, or make all GPUs visible (check `nvidia-smi -L`, CUDA_VISIBLE_DEVICES, "
    "`docker run --gpus all`).",
    "tp-exceeds-gpus:other.title": "vLLM cannot place its workers on the GPUs it sees",
    "tp-exceeds-gpus:other.why": "With more workers than visible GPUs, vLLM 0.11 and older turn "
    "to Ray for a multi-node cluster: they fail when Ray is missing or wait 30 minutes for "
    "GPUs that never come; newer releases fail on a GPU number that does not exist.",
    "tp-exceeds-gpus:other.fix": "Make tensor x pipeline x data parallel sizes fit this "
    "machine's GPUs (`nvidia-smi -L`) and check CUDA_VISIBLE_DEVICES. For real multi-node "
    "serving, start Ray first and check `ray status`.",
    "tp-heads-indivisible.title": "{heads} attention heads cannot be split evenly over TP {tp}",
    "tp-heads-indivisible.why": "Tensor parallelism gives every GPU the same number of attention "
    "heads, so the tensor parallel size must divide {heads}. vLLM checks this before "
    "loading anything.",
    "tp-heads-indivisible.fix": "Use a --tensor-parallel-size that divides {heads}: {valid}. Use "
    "GPUs left over for another replica (--data-parallel-size or a second server).",
    "tp-heads-indivisible:kv.title": "{a} does not divide evenly by {b} (KV heads and tensor "
    "parallel size)",
    "tp-heads-indivisible:kv.why": "With grouped-query attention every GPU holds a whole number "
    "of KV heads, or the heads are copied when TP is larger; the KV head count and TP must "
    "divide one another.",
    "tp-heads-indivisible:kv.fix": "Pick a --tensor-parallel-size that divides "
    "num_key_value_heads in the model's config.json, or is a multiple of it.",
    "quant-on-unquantized.title": "`--quantization {method}` on a model that is not "
    "{method}-quantized",
    "quant-on-unquantized.why": "For this method the flag says how to read weights that are "
    "already quantized; it does not quantize on the fly. vLLM found no {method} config in "
    "the checkpoint: it holds the original weights.",
    "quant-on-unquantized.fix": "Serve the {method} checkpoint of this model (often the same "
    "name with an -AWQ or -GPTQ suffix), or drop `--quantization {method}` to serve the "
    "original weights. To quantize on the fly, use `--quantization fp8` instead.",
    "quant-method-mismatch.title": "`--quantization {flag}`, but the checkpoint is quantized "
    "with {checkpoint}",
    "quant-method-mismatch.why": "A quantized checkpoint can only be read with its own method, "
    "so vLLM refuses the mismatch.",
    "quant-method-mismatch.fix": "Drop `--quantization`: vLLM reads {checkpoint} from the "
    "checkpoint and picks the fastest kernel itself.",
    "quant-unsupported-gpu.title": "{method} needs compute capability {needed}; this GPU has "
    "{have}",
    "quant-unsupported-gpu.why": "This vLLM has no {method} kernels for this GPU generation.",
    "quant-unsupported-gpu.fix": "Serve a checkpoint in a method this GPU supports (GPTQ from "
    "6.0, AWQ from 7.5), the unquantized model on more GPUs, or use a newer GPU.",
    "quant-unsupported-gpu:dtype.title": "The {method} kernels cannot run in {dtype}",
    "quant-unsupported-gpu:dtype.why": "In this vLLM the {method} kernels accept only these "
    "activation types: {supported}.",
    "quant-unsupported-gpu:dtype.fix": "Add `--dtype half`, or drop `--quantization {method}` so "
    "that vLLM can choose a kernel (Marlin) that runs in {dtype}.",
    "quant-unsupported-gpu:platform.title": "{method} quantization is not available on {device}",
    "quant-unsupported-gpu:platform.why": "This vLLM build has no {method} kernels for this "
    "device.",
    "quant-unsupported-gpu:platform.fix": "Serve a checkpoint in a method this device supports, "
    "or the unquantized model.",
    "dtype-unsupported-gpu.title": "bfloat16 needs compute capability 8.0; {gpu} has {have}",
    "dtype-unsupported-gpu.why": "GPUs before Ampere (V100, T4) have no bfloat16, and vLLM stops "
    "when it is asked for it.",
    "dtype-unsupported-gpu.fix": "Use `--dtype half` (float16). Models trained in bfloat16 "
    "usually run well in float16; check a few answers for garbled text.",
    "dtype-unsupported-model.title": "{model_type} models cannot run in float16",
    "dtype-unsupported-model.why": "This model family overflows in float16, so vLLM refuses it "
    "('Numerical instability').",
    "dtype-unsupported-model.fix": "Use `--dtype bfloat16` (needs compute capability 8.0: A100, "
    "L4, H100...), or `--dtype float32` on older GPUs (twice the weight memory).",
    "batched-tokens-below-model-len.title": "--max-num-batched-tokens {mbt} is below "
    "max-model-len {max_model_len} with chunked prefill off",
    "batched-tokens-below-model-len.why": "Without chunked prefill a whole prompt must fit into "
    "one step's token budget, so vLLM refuses to start.",
    "batched-tokens-below-model-len.fix": "Raise --max-num-batched-tokens to at least "
    "{max_model_len}, lower --max-model-len to {mbt}, or turn chunked prefill back on "
    "(remove --no-enable-chunked-prefill).",
    "batched-tokens-below-num-seqs.title": "--max-num-batched-tokens {mbt} is below "
    "--max-num-seqs {seqs}",
    "batched-tokens-below-num-seqs.why": "Every running sequence needs at least one token of a "
    "step's budget, so the budget must be at least the number of sequences.",
    "batched-tokens-below-num-seqs.fix": "Raise --max-num-batched-tokens to at least {seqs}, or "
    "lower --max-num-seqs to {mbt} or less.",
    "model-len-exceeds-model.title": "--max-model-len {asked} is longer than the model supports "
    "({limit})",
    "model-len-exceeds-model.why": "The model's config.json sets {key} = {limit}. Past the "
    "length it was trained for, a model writes garbage or crashes, so vLLM refuses.",
    "model-len-exceeds-model.fix": "Use --max-model-len {limit} or less, or drop the flag to get "
    "{limit}. Note that vLLM reads `32k` as 32000 and `32K` as 32768.",
    "gpu-memory-utilization-range.title": "--gpu-memory-utilization {util} is outside (0, 1]",
    "gpu-memory-utilization-range.why": "It is the fraction of each GPU's memory vLLM may use, "
    "not a percentage or GiB.",
    "gpu-memory-utilization-range.fix": "Use a fraction such as 0.9.",
    "gpu-memory-busy.title": "Only {free} of {total} GiB is free on the GPU; vLLM wants "
    "{requested} GiB",
    "gpu-memory-busy.why": "vLLM takes --gpu-memory-utilization ({util}) of the whole GPU at "
    "startup, but something else already holds about {used} GiB: another vLLM, a leftover "
    "process, a notebook or the display.",
    "gpu-memory-busy.fix": "Find the other process with `nvidia-smi` and stop it, or share the "
    "GPU by lowering --gpu-memory-utilization to {fit_util} or less.",
    "gpu-memory-busy:profiling.title": "GPU memory changed while vLLM was measuring it",
    "gpu-memory-busy:profiling.why": "Another process on the same GPU took or freed memory "
    "during vLLM's startup profiling, so the KV cache size it computed cannot be trusted.",
    "gpu-memory-busy:profiling.fix": "Give vLLM the GPU to itself (see `nvidia-smi`), or start "
    "other jobs only after vLLM is ready.",
    "weights-dont-fit.title": "The model's weights do not fit in GPU memory",
    "weights-dont-fit.why": "vLLM ran out of GPU memory while loading the weights, before any KV "
    "cache: the model is too large for the memory vLLM was given.",
    "weights-dont-fit.fix": "Split the model over more GPUs (--tensor-parallel-size), serve a "
    "quantized checkpoint (AWQ, GPTQ, FP8) or a smaller model, or free memory held by "
    "other processes. `servetune check` estimates the fit before launch.",
    "kv-cache-too-small.title": "No room in the KV cache for one request of {max_model_len} tokens",
    "kv-cache-too-small.why": "After the weights, vLLM needs KV cache for at least one "
    "full-length request. {max_model_len} tokens do not fit; often --max-model-len was not "
    "set and the model's whole context length was assumed.",
    "kv-cache-too-small.fix": "Set a smaller --max-model-len (e.g. 8192), raise "
    "--gpu-memory-utilization, use --kv-cache-dtype fp8, or add GPUs with "
    "--tensor-parallel-size.",
    "kv-cache-too-small:estimate.title": "The KV cache holds about {estimate} tokens; "
    "max-model-len is {max_model_len}",
    "kv-cache-too-small:estimate.why": "After the weights, vLLM needs KV cache for at least one "
    "request of max-model-len tokens. What is left fits about {estimate}, so vLLM refuses "
    "to start. Often --max-model-len was left at the model's full context length.",
    "kv-cache-too-small:estimate.fix": "Use --max-model-len {estimate} or less, or make more "
    "room: raise --gpu-memory-utilization (or --kv-cache-memory-bytes), use "
    "--kv-cache-dtype fp8, or add GPUs with --tensor-parallel-size.",
    "kv-cache-too-small:gib.title": "One request of {max_model_len} tokens needs {needed} GiB of "
    "KV cache; {available} GiB is there",
    "kv-cache-too-small:gib.why": "After the weights, vLLM needs KV cache for at least one "
    "request of max-model-len tokens, and refuses to start without it. What is left fits about "
    "{fit} tokens. Often --max-model-len was left at the model's full context length.",
    "kv-cache-too-small:gib.fix": "Use --max-model-len {fit} or less, or make more room: raise "
    "--gpu-memory-utilization (or --kv-cache-memory-bytes), use --kv-cache-dtype fp8, or add "
    "GPUs with --tensor-parallel-size.",
    "kv-cache-too-small:none.title": "No memory is left for the KV cache",
    "kv-cache-too-small:none.why": "The weights and the activations of the startup profiling run "
    "took all the memory vLLM may use, leaving nothing for the KV cache.",
    "kv-cache-too-small:none.fix": "Raise --gpu-memory-utilization, lower "
    "--max-num-batched-tokens and --max-num-seqs (a smaller profiling peak), or use more "
    "GPUs or a quantized checkpoint.",
    "out-of-memory.title": "The GPU ran out of memory",
    "out-of-memory.why": "A GPU allocation failed. During startup that is usually the profiling "
    "run or the CUDA graph capture at the configured batch sizes; while serving, a burst "
    "of long requests.",
    "out-of-memory.fix": "Lower --max-num-seqs and --max-num-batched-tokens, try --enforce-eager "
    "(no CUDA graphs), lower --gpu-memory-utilization if other processes share the GPU, or "
    "add GPUs or use a quantized checkpoint.",
    "port-in-use.title": "Port {port} is already in use",
    "port-in-use.why": "vLLM binds its port before loading the model, and another process (often "
    "an earlier vLLM that is still running) already listens there.",
    "port-in-use.fix": "Stop the process holding it (find it with `ss -ltnp | grep :{port}`), or "
    "start vLLM with another `--port`.",
    "model-not-found.title": "Model `{model}` not found",
    "model-not-found.why": "vLLM found neither a local folder with a config.json nor a Hugging "
    "Face repository of that name: a typo, a path relative to another directory, or a "
    "private repository without a token.",
    "model-not-found.fix": "Check the name on huggingface.co, or the path (`ls "
    "{model}/config.json`); for a private repository set HF_TOKEN.",
    "model-not-found:offline.title": "Model `{model}` is not in the local cache and the Hub is "
    "unreachable",
    "model-not-found:offline.why": "vLLM runs offline (HF_HUB_OFFLINE=1, or no network), and the "
    "model was never downloaded into the Hugging Face cache it reads.",
    "model-not-found:offline.fix": "Download it where there is network (`huggingface-cli "
    "download {model}`) and give vLLM that cache (HF_HOME) or the local folder, or allow "
    "network access.",
    "model-access-denied.title": "No access to the gated model `{model}`",
    "model-access-denied.why": "The repository is gated or private. Hugging Face refused the "
    "download (401/403): no token was sent, the token is invalid, or its account has not "
    "accepted the model's license.",
    "model-access-denied.fix": "Accept the license on the model's page on huggingface.co, then "
    "give vLLM a token: `export HF_TOKEN=hf_...` (or `--hf-token`). Fine-grained tokens "
    "need access to gated repositories turned on.",
    "architecture-unsupported.title": "This vLLM cannot run the architecture {arch}",
    "architecture-unsupported.why": "vLLM has no implementation of this model architecture, or "
    "could not import it.",
    "architecture-unsupported.fix": "Check vLLM's supported-models list: upgrade vLLM for newer "
    "models, try `--model-impl transformers`, or add `--trust-remote-code` for models with "
    "their own code.",
    "gguf-arch-unsupported.title": "This vLLM's GGUF loader does not know the architecture "
    "{model_type}",
    "gguf-arch-unsupported.why": "A GGUF file names its architecture in its own words, and the "
    "loader of this release (vLLM's, or transformers' that vLLM reads the config with) has no "
    "mapping for {model_type}: loading stops before any weight is read.",
    "gguf-arch-unsupported.fix": "Upgrade vLLM (and transformers) to a release whose GGUF loader "
    "knows {model_type} (`servetune check` says which), or serve the original safetensors "
    "checkpoint or an AWQ/GPTQ one of it.",
    "architecture-unsupported:dropped.title": "vLLM dropped {arch} after v{until}",
    "architecture-unsupported:dropped.why": "This architecture was removed from vLLM; this "
    "release cannot load it.",
    "architecture-unsupported:dropped.fix": "Serve this model with vLLM {until} or older, or "
    "move to a newer model family.",
    "architecture-unsupported:plugin.title": "{arch} moved out of vLLM into a plugin",
    "architecture-unsupported:plugin.why": "This release no longer ships the architecture itself.",
    "architecture-unsupported:plugin.fix": "Install the plugin named in the error line, then "
    "start again.",
    "architecture-unsupported:model-type.title": "The installed transformers does not know model "
    "type `{model_type}`",
    "architecture-unsupported:model-type.why": "The model is newer than the transformers library "
    "beside vLLM, so its config cannot even be read.",
    "architecture-unsupported:model-type.fix": "Upgrade vLLM, which brings a newer transformers "
    "(`pip install -U vllm`), or upgrade transformers alone if your vLLM allows it.",
    "trust-remote-code-required.title": "The model needs its own code: add --trust-remote-code",
    "trust-remote-code-required.why": "Its config or model code lives in the model's repository "
    "rather than in transformers, and vLLM runs such code only when told to.",
    "trust-remote-code-required.fix": "Add `--trust-remote-code` if you trust that repository's "
    "code (read it first).",
    "nccl-error.title": "NCCL, the GPU-to-GPU communication library, failed",
    "nccl-error.why": "The workers of a multi-GPU setup could not connect. In containers it is "
    "usually too little shared memory (/dev/shm) or missing IPC rights; on hosts, GPU "
    "peer-to-peer or network interface problems.",
    "nccl-error.fix": "In Docker, run with `--ipc=host` (or `--shm-size=16g`). Rerun with "
    "`NCCL_DEBUG=INFO` to see the cause; try `NCCL_P2P_DISABLE=1`; across nodes set "
    "`NCCL_SOCKET_IFNAME` and `GLOO_SOCKET_IFNAME`.",
    "nccl-timeout.title": "A collective between the GPUs hung until torch's NCCL watchdog timed "
    "it out",
    "nccl-timeout.why": "torch's watchdog found collective {seq} of its process group ({op}, "
    "between the GPUs) still unfinished after the group's timeout of {timeout_s} s. The engine's "
    "step waits on it, so the engine hangs, and torch then takes the process down: the server "
    "serves nothing since. Long after startup this is usually one rank that stopped: a worker "
    "that crashed or a GPU that stalled (its own error is in its lines), or a network between "
    "nodes that dropped.",
    "nccl-timeout.fix": "Look in the other ranks' lines before the timeout for their own error "
    "(out of memory, an exception) and fix that; check `dmesg` and `nvidia-smi` for a GPU that "
    "fell off the bus (Xid errors); rerun with `NCCL_DEBUG=INFO`, and across nodes check "
    "`NCCL_SOCKET_IFNAME`. Then restart the server, under a supervisor that restarts it when it "
    "exits.",
    "nccl-timeout:first.title": "The GPUs never completed their first collective: torch's NCCL "
    "watchdog timed it out",
    "nccl-timeout:first.why": "NCCL set its communicator up, but the first collective between the "
    "GPUs ({op}, number {seq} of its process group) did not finish within the group's timeout of "
    "{timeout_s} s: the GPUs cannot reach one another the way NCCL chose. Usually GPU "
    "peer-to-peer over PCIe that the machine advertises but cannot do (PCIe ACS or an IOMMU "
    "on, virtual machines, some consumer boards), or the network between nodes.",
    "nccl-timeout:first.fix": "Try `NCCL_P2P_DISABLE=1` (with `--disable-custom-all-reduce`); "
    "check `nvidia-smi topo -m` and turn PCIe ACS off (or the IOMMU to passthrough); rerun with "
    "`NCCL_DEBUG=INFO` to see the transport NCCL picked; across nodes set `NCCL_SOCKET_IFNAME`, "
    "or `NCCL_IB_DISABLE=1` without working InfiniBand.",
    "engine-init-failed.title": "vLLM failed to start",
    "engine-init-failed.why": "The error in the evidence line stopped vLLM. servetune has no "
    "specific advice for it yet.",
    "engine-init-failed.fix": "Read the traceback just above that line in the log, search the "
    "message in vLLM's GitHub issues, and rerun with `VLLM_LOGGING_LEVEL=DEBUG` for more "
    "detail.",
    # --- added for pasted excerpts (issue 8) ---
    "tp-exceeds-gpus:ray.title": "The command needs {world} GPUs; Ray cannot provide them",
    "tp-exceeds-gpus:ray.why": "vLLM asks Ray for one GPU per worker of the tensor x pipeline "
    "parallel grid and waits (up to 30 minutes) for that placement group; the Ray cluster "
    "does not have {world} free GPUs where vLLM looks for them.",
    "tp-exceeds-gpus:ray.fix": "Check `ray status` and `ray list nodes`: the cluster needs "
    "{world} free GPUs. Lower --tensor-parallel-size x --pipeline-parallel-size to what it "
    "has, start the missing worker nodes, and set VLLM_HOST_IP to the address Ray uses on "
    "each node.",
    "quant-tp-shape.title": "Each GPU's share of a quantized layer ({size}) is not a multiple "
    "of the kernel's tile ({tile})",
    "quant-tp-shape.why": "Tensor parallelism gives every GPU 1/TP of each weight matrix. The "
    "quantized kernel (Marlin for GPTQ and AWQ, or FP8 blocks) works on tiles of {tile}, and "
    "this share ({what} = {size}) does not split into whole tiles, so vLLM stops while it "
    "builds the layers.",
    "quant-tp-shape.fix": "Try another --tensor-parallel-size (a smaller one gives each GPU a "
    "bigger share), or the other kernel: `--quantization gptq` or `--quantization awq` "
    "instead of the Marlin one (slower, without this constraint).",
    "quant-tp-shape:sizes.title": "At TP {tp} each GPU's share of a quantized layer ({size} of "
    "{width}) is not a multiple of {tile}",
    "quant-tp-shape:sizes.why": "Tensor parallelism gives every GPU 1/TP of each weight "
    "matrix. The quantized kernel (Marlin for GPTQ and AWQ, or FP8 blocks) works on tiles "
    "of {tile}, and {width} / {tp} = {size} does not split into whole tiles, so vLLM stops "
    "while it builds the layers.",
    "quant-tp-shape:sizes.fix": "Use a --tensor-parallel-size that keeps the share a multiple "
    "of {tile}: {valid}; or keep TP {tp} with the other kernel, `--quantization gptq` or "
    "`--quantization awq` instead of the Marlin one (slower, without this constraint).",
    "quant-tp-shape:block.title": "Each GPU's share of an FP8 block-quantized layer ({size}) "
    "is not a multiple of the {tile}-wide blocks",
    "quant-tp-shape:block.why": "The checkpoint is quantized in blocks of {tile} ({what}), and "
    "tensor parallelism gives every GPU 1/TP of each weight matrix; at this tensor-parallel "
    "size a share cuts through a block, so vLLM cannot load it.",
    "quant-tp-shape:block.fix": "Use a smaller --tensor-parallel-size and spend the other GPUs on "
    "--pipeline-parallel-size or --data-parallel-size; for MoE models try "
    "--enable-expert-parallel, which splits the experts instead of their weights.",
    "quant-tp-shape:aligned.title": "A quantized layer does not split evenly at this "
    "tensor-parallel size",
    "quant-tp-shape:aligned.why": "Tensor parallelism gives every GPU 1/TP of each weight "
    "matrix, and the quantized kernel needs each share to be a whole number of its tiles "
    "(or quantization groups); at this size it is not.",
    "quant-tp-shape:aligned.fix": "Try another --tensor-parallel-size (often a smaller one), "
    "or the other kernel: `--quantization gptq` or `--quantization awq` instead of the "
    "Marlin one.",
    "weights-dont-fit:negative.title": "The weights leave no memory for the KV cache "
    "({available} GiB)",
    "weights-dont-fit:negative.why": "vLLM may use --gpu-memory-utilization of the GPU. After "
    "the weights and the activation peak of its profiling run, what is left for the KV "
    "cache is {available} GiB, below zero: the weights alone (this GPU's share of them) "
    "nearly fill or overfill that budget.",
    "weights-dont-fit:negative.fix": "Split the model over more GPUs (--tensor-parallel-size), "
    "serve a quantized checkpoint, raise --gpu-memory-utilization if nothing else uses the "
    "GPU, or lower --max-num-batched-tokens for a smaller activation peak.",
    "weights-dont-fit:no-room.title": "No room for the KV cache: {available} GiB left after "
    "the weights",
    "weights-dont-fit:no-room.why": "After the weights and the activation peak of the "
    "profiling run, vLLM had {available} GiB of its --gpu-memory-utilization budget left, "
    "not enough for a single KV cache block. The weights are too large for the memory "
    "vLLM was given.",
    "weights-dont-fit:no-room.fix": "Split the model over more GPUs (--tensor-parallel-size), "
    "serve a quantized checkpoint, raise --gpu-memory-utilization if nothing else uses the "
    "GPU, or lower --max-num-batched-tokens for a smaller activation peak.",
    "out-of-memory:loading.title": "The GPU ran out of memory while loading the weights",
    "out-of-memory:loading.why": "The allocation failed while vLLM built the model and copied "
    "its weights to the GPU: this GPU's share of the weights does not fit beside whatever "
    "else holds its memory.",
    "out-of-memory:loading.fix": "Split the model over more GPUs (--tensor-parallel-size), "
    "serve a quantized checkpoint or a smaller model, and check with `nvidia-smi` that no "
    "other process holds the GPU.",
    "out-of-memory:repacking.title": "The GPU ran out of memory while repacking the quantized "
    "weights",
    "out-of-memory:repacking.why": "After loading, vLLM converts quantized weights into the "
    "layout its kernels (Marlin, FP8) need; for a moment the old and the new copy of a "
    "layer are both in memory, and that peak did not fit.",
    "out-of-memory:repacking.fix": "Leave more headroom: add GPUs with --tensor-parallel-size, "
    "free memory other processes hold, or serve a checkpoint already in the kernel's format "
    "(an FP8 checkpoint rather than `--quantization fp8` on a 16-bit one).",
    "out-of-memory:profiling.title": "The GPU ran out of memory during the profiling run",
    "out-of-memory:profiling.why": "Before sizing the KV cache, vLLM runs one batch as large as "
    "--max-num-batched-tokens (for vision models, with the largest images) to measure the "
    "activation peak; that batch did not fit beside the weights.",
    "out-of-memory:profiling.fix": "Lower --max-num-batched-tokens and --max-num-seqs, limit "
    "images with --limit-mm-per-prompt, or add GPUs or serve a quantized checkpoint.",
    "out-of-memory:graphs.title": "The GPU ran out of memory while capturing CUDA graphs",
    "out-of-memory:graphs.why": "After sizing the KV cache, vLLM records CUDA graphs for batch "
    "sizes up to its capture size; the memory they need was not left over.",
    "out-of-memory:graphs.fix": "Add --enforce-eager (no CUDA graphs, slower decoding), lower "
    "--max-num-seqs (fewer graphs), or lower --gpu-memory-utilization a little so the "
    "graphs fit beside the KV cache.",
    "out-of-memory:serving.title": "The GPU ran out of memory while serving requests",
    "out-of-memory:serving.why": "The server was up and its engine was running requests when an "
    "allocation failed: one step's activations (long prompts in one batch, many sequences at "
    "once, large images) needed more than the startup profiling measured, beside the weights "
    "and the KV cache vLLM had reserved; or another process took GPU memory since the start.",
    "out-of-memory:serving.fix": "Lower --max-num-batched-tokens (smaller prefill chunks) and "
    "--max-num-seqs, or --gpu-memory-utilization a little to leave more room for activations; "
    "check with `nvidia-smi` that nothing else uses the GPU. Then restart the server.",
    "out-of-memory:kv-cache.title": "The GPU ran out of memory while allocating the KV cache",
    "out-of-memory:kv-cache.why": "vLLM sized the KV cache from a measurement of free memory, "
    "but the allocation failed: memory changed in between, usually because another "
    "process uses the same GPU.",
    "out-of-memory:kv-cache.fix": "Give vLLM the GPU to itself (see `nvidia-smi`), lower "
    "--gpu-memory-utilization, or set --kv-cache-memory-bytes explicitly.",
    "nccl-error:system.title": "NCCL failed with 'unhandled system error' while the GPUs connected",
    "nccl-error:system.why": "A system call under NCCL failed. In containers it is almost "
    "always too little shared memory (/dev/shm is 64 MB by default) or no IPC rights; "
    "otherwise the network interface or InfiniBand setup between nodes.",
    "nccl-error:system.fix": "In Docker run with `--ipc=host` (or `--shm-size=16g`); in "
    "Kubernetes mount a memory-backed emptyDir at /dev/shm. Rerun with `NCCL_DEBUG=INFO` to "
    "see the failing call; between nodes set `NCCL_SOCKET_IFNAME` and "
    "`GLOO_SOCKET_IFNAME`, or `NCCL_IB_DISABLE=1` without InfiniBand.",
    "nccl-error:cuda.title": "NCCL failed with 'unhandled cuda error' between the GPUs",
    "nccl-error:cuda.why": "A CUDA call inside NCCL failed: most often GPU peer-to-peer "
    "access that the machine advertises but cannot do (PCIe switches, virtual machines, "
    "IOMMU), or a driver too old for the CUDA and NCCL that vLLM ships.",
    "nccl-error:cuda.fix": "Try `NCCL_P2P_DISABLE=1` (with `--disable-custom-all-reduce`); "
    "rerun with `NCCL_DEBUG=INFO` to see the failing call; check `nvidia-smi topo -m`, and "
    "update the driver if it is older than vLLM's CUDA needs.",
    "process-killed.title": "The process was killed from outside (SIGKILL), most likely for "
    "lack of host memory",
    "process-killed.why": "vLLM itself did not fail: something ended it with SIGKILL, which a "
    "shell reports as `Killed` and docker or Kubernetes as exit code 137 (`OOMKilled`). "
    "Usually the kernel's OOM killer or the container's memory limit, because host RAM ran "
    "out: vLLM holds checkpoint shards in host memory while it loads them, V0 reserves CPU "
    "swap space for the KV cache (--swap-space, 4 GiB per GPU), and where the GPU shares "
    "host memory (Jetson, Grace Hopper) the weights and the KV cache are host memory too.",
    "process-killed.fix": "Look for the kill in `dmesg | grep -i 'killed process'` (or "
    "`kubectl describe pod`, `docker inspect` for OOMKilled). Give the container or the "
    "machine more memory, lower --swap-space, and on a device that shares host memory lower "
    "--gpu-memory-utilization and --max-model-len.",
    "dtype-unsupported-gpu:cut.title": "bfloat16 needs compute capability 8.0; this GPU has less",
    "dtype-unsupported-gpu:cut.why": "vLLM stopped in its bfloat16 check "
    "(`_check_if_gpu_supports_dtype`), which refuses bfloat16 on GPUs older than Ampere "
    "(V100, T4, Turing cards) and nothing else; the excerpt ends before its message.",
    "dtype-unsupported-gpu:cut.fix": "Use `--dtype half` (float16). Models trained in "
    "bfloat16 usually run fine in float16; spot-check a few answers for garbage.",
    "kv-cache-too-small:blocks.title": "The KV cache holds {estimate} tokens ({blocks} blocks); "
    "one request of max-model-len does not fit",
    "kv-cache-too-small:blocks.why": "vLLM stopped while setting up the KV cache. The first "
    "thing it checks there is that the blocks profiling found hold one request of "
    "max-model-len tokens; {estimate} tokens is what they hold. The excerpt ends before the "
    "error, which names the length it needed.",
    "kv-cache-too-small:blocks.fix": "Use --max-model-len {estimate} or less, or make more "
    "room: raise --gpu-memory-utilization, use --kv-cache-dtype fp8, or add GPUs with "
    "--tensor-parallel-size.",
    "out-of-memory:sleep-mode.title": "The GPU ran out of memory while vLLM woke up from sleep "
    "mode",
    "out-of-memory:sleep-mode.why": "In sleep mode vLLM hands its GPU memory back between "
    "rollouts and maps all of it again on `wake_up` (its CuMemAllocator); what the trainer "
    "beside it still holds on the GPU (weights, gradients, optimizer state, cached blocks) "
    "left too little for that.",
    "out-of-memory:sleep-mode.fix": "Free the trainer's GPU memory before waking vLLM up "
    "(offload parameters and optimizer state, `torch.cuda.empty_cache()`), lower vLLM's "
    "gpu_memory_utilization so the two fit together, or put the rollout engine on GPUs of its "
    "own.",
    "engine-dead-at-serving.title": "The server was up, then its engine died",
    "engine-dead-at-serving.why": "The API server had started and taken requests; then the "
    "engine process behind it stopped, and every request since fails (500, EngineDeadError). "
    "vLLM 0.5-0.8 end the API server themselves on the first such request ('terminating "
    "server process'). The engine's own error is printed before the first of these lines; "
    "this excerpt does not hold it.",
    "engine-dead-at-serving.fix": "Find the engine's first error above the first 'dead' line "
    "in the full log (often out of GPU memory under a burst of long requests: lower "
    "--max-num-seqs, --max-num-batched-tokens or --gpu-memory-utilization), then restart the "
    "server; run it under a supervisor that restarts it when it exits.",
    "engine-dead-at-serving:cause.title": "The server was up when this error stopped its engine",
    "engine-dead-at-serving:cause.why": "The API server had started and its engine was running "
    "requests when the error in the root cause stopped the engine: every request since fails "
    "(500, EngineDeadError), or the server ended itself. The diagnosis before this one says "
    "what the error means.",
    "engine-dead-at-serving:cause.fix": "Fix that error as the diagnosis before this one says, "
    "then restart the server; run it under a supervisor that restarts it when it exits, and "
    "watch whether the same load brings the error back.",
    "engine-dead-at-serving:timeout.title": "The engine stopped while serving: one step of its "
    "requests timed out",
    "engine-dead-at-serving:timeout.why": "The API server was up and its engine was running "
    "requests; vLLM's V0 engine loop gives each step VLLM_ENGINE_ITERATION_TIMEOUT_S (60 s by "
    "default), and when one takes longer it marks the engine errored: every request since "
    "fails. A step that long is usually a hung collective between GPUs (NCCL) or a stalled GPU.",
    "engine-dead-at-serving:timeout.fix": "Look above the timeout for an NCCL or GPU error and "
    "fix that; if the steps are only slow (very long prompts, CPU offload), raise "
    "VLLM_ENGINE_ITERATION_TIMEOUT_S. Then restart the server, under a supervisor that restarts "
    "it when it exits.",
    # --- the labels of the text report ---
    "report.status": "status: ",
    "report.root_cause": "root cause: ",
    "report.why": "why: ",
    "report.fix": "fix: ",
    "report.evidence": "evidence: ",
    "report.reported": "reported: ",
    "report.version": "vLLM {version}",
    "report.kv_cache": "KV cache {tokens:,} tokens",
    "report.concurrency": "max concurrency {concurrency:.2f}x",
    "report.weights": "weights {gib:g} GiB",
    "report.kv_memory": "KV cache memory {gib:g} GiB",
}
