r"""The table of vLLM's own failure messages that `doctor` knows, and the facts each one gives.

Each entry is a diagnosis id (shared with `check` where the cause is the same), an optional
variant (which text to show), the message patterns in vLLM's exact words (see
../shared/reference/vllm-rules.md) and how to derive the numbers the texts need. `table_hits`
runs the table on the lines `telling` picks (the loud ones, and quiet ones that already tell the
cause) with the facts `log_facts.context` found in the whole log, and returns hits in priority
order.
argparse's refusals are read token by token in `flag_errors.py`. A hit carries facts, never
words: `doctor.diagnose` turns it into a `Diagnosis` whose texts are `doctor` text keys.

To add a diagnosis:
1. Add an entry to `_PATTERNS` below, where its priority puts it (the most specific first):

       _p("swap-space-too-large", r"(?P<gib>[\d.]+) GiB of CPU swap space is too large"),

   Named groups become facts, beside those `log_facts.context` reads from the log (`port`,
   `model`, `tp`, `world`, `gpus`, `available_kv`, `weights_gib`, `oom_phase`). `variant=`
   picks the texts `<id>:<variant>.*`; `derive=` computes more facts from them (it may return
   `{"variant": ...}`, or raise `_NotThis` when the facts show the message means something
   else). Reuse `check`'s rule id where the cause is the same (`review/rules/`), and list in
   `_COVERS` a diagnosis whose evidence this one already explains.
2. Write its texts in `texts/doctor_en.py` and `texts/doctor_zh_tw.py`: `<id>.title`, `.why`
   and `.fix` (per variant `<id>:<variant>.title` ...), with the same placeholders in both; a
   fact an excerpt does not give reads `?`.
3. Add a log excerpt that triggers it, in vLLM's exact words and prefixes, to `CASES` in
   `tests/launch/test_doctor.py` (with a part of its English title), and the id to
   `CONTRACT_IDS` or `EXTRA_IDS` there; a real log goes to `tests/data/vllm-logs/real/`, with
   its source URL and expected status, root cause, diagnosis and title words in `index.json`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from servetune.launch import log_facts
from servetune.launch.log_facts import Facts
from servetune.vllm import log as vllm_log


@dataclass(frozen=True)
class _Pattern:
    id: str
    regexes: tuple[re.Pattern[str], ...]  # alternatives (re allows a group name once a pattern)
    variant: str | None = None
    derive: Callable[[Facts], Facts] | None = None
    printer: str = "vllm"  # who prints the message: only vLLM's own tell a vLLM log apart


@dataclass(frozen=True)
class Hit:
    """One diagnosis found: its id, which text to show, the facts for it, the line it rests on."""

    id: str
    variant: str | None
    facts: Facts
    evidence: str


def _cc(value: str) -> str:
    """vLLM prints capability 75 in some messages and 7.5 in others; show 7.5."""
    return value if "." in value or not value.isdigit() else f"{int(value) // 10}.{value[-1]}"


def _heads(facts: Facts) -> Facts:
    heads = int(facts["heads"])
    valid = [d for d in range(1, min(heads, 64) + 1) if heads % d == 0 and (d <= 8 or d % 8 == 0)]
    return {"valid": ", ".join(map(str, valid))}


def _busy(facts: Facts) -> Facts:
    free, total = float(facts["free"]), float(facts["total"])
    fit = math.floor((free / total - 0.01) * 100) / 100 if total > 0 else 0.0
    return {"used": f"{total - free:.2f}", "fit_util": f"{max(fit, 0.0):.2f}"}


def _placement(facts: Facts) -> Facts:
    """The GPUs a Ray placement group asked for: one bundle with a GPU per worker."""
    if "specs" in facts and "world" not in facts:
        return {"world": str(facts["specs"].count("'GPU'"))}
    return {} if "world" in facts else {"variant": "other"}


def _fit_tokens(facts: Facts) -> Facts:
    """The length that fits, in proportion to the KV memory there is (vLLM's own estimate when
    the excerpt cut it off)."""
    needed, available = float(facts["needed"]), float(facts["available"])
    if needed <= 0:
        raise _NotThis
    return {"fit": str(math.floor(int(facts["max_model_len"]) * available / needed))}


def _shape(facts: Facts) -> Facts:
    """Which tensor-parallel sizes keep the layer's share a multiple of the kernel's tile."""
    size, tile, tp = facts.get("size"), facts.get("tile"), facts.get("tp")
    if size is None or tile is None:
        return {"variant": "aligned"}
    if facts.get("what", "").startswith("block_"):
        return {"variant": "block"}  # FP8 block quantization: no other kernel to switch to
    if tp is None:
        return {}
    width = int(size) * int(tp)  # the whole layer: every GPU got `size` of it
    fits = [t for t in (1, 2, 4, 8, 16) if width % t == 0 and (width // t) % int(tile) == 0]
    if not fits:
        return {}
    return {"variant": "sizes", "width": str(width), "valid": ", ".join(map(str, fits))}


def _no_room(facts: Facts) -> Facts:
    """No KV room is the weights' fault when vLLM said how little was left after them."""
    available = facts.get("available_kv")
    if available is None or float(available) > 0:
        raise _NotThis
    return {}


def _collective(facts: Facts) -> Facts:
    """The timeout in seconds, and whether the collective that hung was the group's first
    (`SeqNum` counts a process group's collectives: 1 from torch 2.2, 0 before): one that never
    completed once is GPUs that cannot reach each other the way NCCL chose, a later one a peer
    that stopped while serving."""
    found: dict[str, str] = {}
    if "timeout_ms" in facts:
        found["timeout_s"] = f"{int(facts['timeout_ms']) / 1000:g}"
    if "seq" in facts and int(facts["seq"]) <= 1:
        found["variant"] = "first"
    return found


def _oom(facts: Facts) -> Facts:
    """Which phase ran out of memory (`log_facts`), where the log shows it."""
    phase = facts.get("oom_phase")
    return {"variant": phase} if phase else {}


class _NotThis(Exception):
    """Raised by a `derive` when the facts show the pattern does not apply."""


def _p(
    rule_id: str,
    *patterns: str,
    variant: str | None = None,
    derive: Callable[[Facts], Facts] | None = None,
    printer: str = "vllm",
) -> _Pattern:
    return _Pattern(rule_id, tuple(re.compile(p) for p in patterns), variant, derive, printer)


# Priority order: the most specific first. One diagnosis per id; the first pattern that matches
# any line wins. Messages are vLLM's own (../shared/reference/vllm-rules.md, by section) unless
# `printer` names the library that prints them (argparse, the OS, huggingface_hub, transformers,
# torch, NCCL): those appear in other programs' logs too.
_PATTERNS: tuple[_Pattern, ...] = (
    # argparse (8.1); "unrecognized arguments" is read token by token in _argparse_hits
    _p(
        "bool-flag-value",
        r"argument (?P<flag>--[\w-]+)(?:/--[\w-]+)*: ignored explicit argument '(?P<value>[^']*)'",
        derive=lambda f: {"negative": "--no-" + f["flag"].removeprefix("--")},
        printer="argparse",
    ),
    _p(
        "invalid-value",
        r"argument (?P<flag>[-\w/]+): invalid \w+(?: value)?: '(?P<value>[^']*)'",
        printer="argparse",
    ),
    _p(
        "missing-value",
        r"argument (?P<flag>[-\w/]+): expected (?:one|at least one) argument",
        printer="argparse",
    ),
    # before the model loads (9)
    _p("port-in-use", r"[Aa]ddress already in use|\[Errno (?:98|48)\]", printer="os"),
    _p(
        "model-access-denied",
        r"Access to model (?P<model>\S+?) is restricted",
        r"gated repo for url https://huggingface\.co/(?P<model>[^/\s]+/[^/\s]+)/",
        r"GatedRepoError|[Cc]annot access gated repo|trying to access a gated repo"
        r"|403 Client Error|Invalid credentials in Authorization header|Invalid user token",
        printer="huggingface_hub",
    ),
    _p(
        "trust-remote-code-required",
        r"`trust_remote_code=True`|requires you to execute the (?:configuration|modeling) file"
        r"|contains custom code which must be executed",
        printer="transformers",
    ),
    _p(
        "model-not-found",
        r"OfflineModeIsEnabled|LocalEntryNotFoundError|couldn't connect to 'https://huggingface"
        r"|outgoing traffic has been disabled",
        variant="offline",
        printer="huggingface_hub",
    ),
    _p(
        "model-not-found",
        r"Invalid repository ID or local directory specified: '(?P<model>[^']+)'",
    ),
    _p(
        "model-not-found",
        r"Repo id must be in the form 'repo_name' or 'namespace/repo_name': '(?P<model>[^']+)'",
        r"(?P<model>\S+) is not a local folder and is not a valid model identifier",
        r"RepositoryNotFoundError|Repository Not Found for url"
        r"|does not appear to have a file named config\.json",
        printer="huggingface_hub",
    ),
    _p(
        "architecture-unsupported",
        r"Model architecture (?P<arch>\w+) was supported in vLLM until v?(?P<until>\d[\d.]*\d)",
        variant="dropped",
    ),
    _p(
        "architecture-unsupported",
        r"Model architecture (?P<arch>\w+) is not supported in-tree anymore",
        variant="plugin",
    ),
    _p(
        "architecture-unsupported",
        r"model type .(?P<model_type>[\w-]+). but Transformers does not recognize this "
        r"architecture",
        variant="model-type",
        printer="transformers",
    ),
    # A GGUF file whose architecture the release's GGUF loader cannot map to a model: vLLM's
    # loader (`_get_gguf_weights_map`, 0.5.5 on) or transformers' `load_gguf_checkpoint`, which
    # vLLM calls to read the config out of the file.
    _p("gguf-arch-unsupported", r"Unknown gguf model_type: (?P<model_type>[\w.-]+)"),
    _p(
        "gguf-arch-unsupported",
        r"GGUF model with architecture (?P<model_type>[\w.-]+) is not supported yet",
        printer="transformers",
    ),
    _p(
        "architecture-unsupported",
        r"Model architectures? (?P<arch>\[[^\]]*\]|\S+) (?:are|is) not supported",
        r"Model architectures (?P<arch>\[[^\]]*\]) failed to be inspected",
    ),
    # --- parallelism, section 1
    _p(
        "tp-exceeds-gpus",
        r"World size \((?P<world>\d+)\) is larger than the number of available GPUs "
        r"\((?P<gpus>\d+)\)",
    ),
    _p(
        "tp-exceeds-gpus",
        r"Tensor parallel size \((?P<world>\d+)\) exceeds available GPUs \((?P<gpus>\d+)\)",
    ),
    _p(
        "tp-exceeds-gpus",
        r"Cannot provide a placement group requiring (?P<world>\d+) GPUs",
        r"Cannot provide a placement group of placement_group_specs=(?P<specs>\[.*?\]) within",
        r"Waiting for creating a placement group of specs for \d+ seconds\. "
        r"specs=(?P<specs>\[.*?\])",
        r"The number of required GPUs exceeds the total number of available GPUs in the "
        r"(?:placement group|cluster)",
        variant="ray",
        derive=_placement,
    ),
    _p(
        "tp-exceeds-gpus",
        r"Unable to load Ray|DP adjusted local rank \d+ is out of bounds"
        r"|Ray does not allocate any GPUs on the driver node",
        variant="other",
    ),
    _p("tp-exceeds-gpus", r"invalid device ordinal", variant="other", printer="torch"),
    _p(
        "tp-heads-indivisible",
        r"Total number of attention heads \((?P<heads>\d+)\) must be divisible by tensor parallel "
        r"size \((?P<tp>\d+)\)",
        derive=_heads,
    ),
    _p(
        "quant-tp-shape",
        r"(?:Weight (?P<dim>input|output)_(?:size_per_partition|partition_size)"
        r"|The (?:input|output)_size of [\w' ]+ weight)"
        r" = f?(?P<size>\d+) is not divisible by\s+(?:weight "
        r"quantization\s+)?(?P<what>\w+) = (?P<tile>\d+)",
        r"(?P<what>prob_[mnk]) = (?P<size>\d+) is not divisible by thread_[mnk] = (?P<tile>\d+)",
        r"(?P<what>size_[kn]) must divisible by BLOCK_SIZE_[KN]",
        r"The (?P<dim>input|output) size is not aligned with the quantized weight shape",
        derive=_shape,
    ),
    _p(
        "tp-heads-indivisible",
        r"^AssertionError: (?P<a>\d+) is not divisible by (?P<b>\d+)$",
        variant="kv",
    ),
    # --- quantization and dtype, sections 2 and 3
    _p(
        "quant-method-mismatch",
        r"Quantization method specified in the model config \((?P<checkpoint>[^)]*)\) does not "
        r"match the quantization method specified in the .quantization. argument "
        r"\((?P<flag>[^)]*)\)",
    ),
    _p("quant-on-unquantized", r"Cannot find the config file for (?P<method>[\w-]+)"),
    _p(
        "quant-unsupported-gpu",
        r"The quantization method (?P<method>[\w-]+) is not supported for the current GPU\. "
        r"Minimum capability: (?P<needed>\d+)\. Current capability: (?P<have>\d+)",
        derive=lambda f: {"needed": _cc(f["needed"]), "have": _cc(f["have"])},
    ),
    _p(
        "quant-unsupported-gpu",
        r"(?P<dtype>\S+) is not supported for quantization method (?P<method>[\w-]+)\. "
        r"Supported dtypes: (?P<supported>.+)$",
        variant="dtype",
    ),
    _p(
        "quant-unsupported-gpu",
        r"(?P<method>[\w-]+) quantization is currently not supported in (?P<device>.+?)\.?$",
        variant="platform",
    ),
    _p(
        "dtype-unsupported-gpu",
        r"Bfloat16 is only supported on GPUs with compute capability of at least 8\.0\. Your "
        r"(?P<gpu>.+?) GPU (?:has compute capability (?P<have>[\d.]*\d)|does not have)",
    ),
    _p(
        "dtype-unsupported-model",
        r"The model type '(?P<model_type>[^']+)' does not support float16",
    ),
    # lengths and scheduler limits (4.3, 4.4, 4.6)
    _p(
        "model-len-exceeds-model",
        r"User-specified max_model_len \((?P<asked>\d+)\) is greater than the derived "
        r"max_model_len \((?P<key>\w+)=(?P<limit>\d+)",
    ),
    _p(
        "batched-tokens-below-model-len",
        r"max_num_batched_tokens \((?P<mbt>\d+)\) is smaller than max_model_len "
        r"\((?P<max_model_len>\d+)\)",
    ),
    _p(
        "batched-tokens-below-num-seqs",
        r"max_num_batched_tokens \((?P<mbt>\d+)\) must be greater than or equal to max_num_seqs "
        r"\((?P<seqs>\d+)\)",
    ),
    _p(
        "gpu-memory-utilization-range",
        r"gpu_memory_utilization: Input should be (?:less|greater).*?input_value=(?P<util>[^,\]]+)",
        r"(?i:gpu memory utilization) must be less than 1\.0\. Got (?P<util>[\d.]*\d)",
    ),
    # --- memory, sections 4.5, 4.6 and 9
    _p(
        "gpu-memory-busy",
        r"Free memory on device.*?\((?P<free>[\d.]+)/(?P<total>[\d.]+) GiB\) on startup is less "
        r"than desired GPU memory utilization \((?P<util>[\d.]+), (?P<requested>[\d.]*\d) GiB\)",
        # 0.32+, when weights are held outside the process: the budget left after them
        r"Free memory on device.*?\((?P<free>[\d.]+)/(?P<total>[\d.]+) GiB\) on startup is less "
        r"than the engine's budget after excluding external process's weights "
        r"\((?P<util>[\d.]+), (?P<requested>[\d.]*\d) GiB\)",
        derive=_busy,
    ),
    _p("gpu-memory-busy", r"Error in memory profiling\. Initial free memory", variant="profiling"),
    _p("weights-dont-fit", r"Failed to load model - not enough GPU memory"),
    _p(
        "weights-dont-fit",
        r"Available KV cache memory: (?P<available>-[\d.]+) GiB",
        r"the rest of the memory reserved for KV Cache is (?P<available>-[\d.]+) ?GiB",
        variant="negative",
    ),
    _p(
        "kv-cache-too-small",
        r"max seq len \((?P<max_model_len>\d+)\).*?estimated maximum model length is "
        r"(?P<estimate>\d+)",
        r"The model's max seq len \((?P<max_model_len>\d+)\) is larger than the maximum number "
        r"of tokens that can be stored in KV cache \((?P<estimate>\d+)\)",
        variant="estimate",
    ),
    _p(
        "kv-cache-too-small",
        r"max seq len \((?P<max_model_len>\d+)\), \((?P<needed>[\d.]+) GiB KV cache is needed, "
        r"which is larger than the available KV cache memory \((?P<available>[\d.]+) GiB\)",
        variant="gib",
        derive=_fit_tokens,
    ),
    _p(
        "kv-cache-too-small",
        r"To serve at least one request with the models?'s max seq len \((?P<max_model_len>\d+)\)",
        # V0's message cut before its number (a paste, a line a viewer shortened)
        r"max seq len \((?P<max_model_len>\d+)\) is larger than the maximum number of tokens",
    ),
    _p(
        "weights-dont-fit",
        r"No available memory for the cache blocks|# (?:GPU|CUDA|NPU|XPU) blocks: 0,",
        variant="no-room",
        derive=_no_room,
    ),
    _p(
        "kv-cache-too-small",
        r"No available memory for the cache blocks|Cannot auto-fit max_model_len"
        r"|# (?:GPU|CUDA|NPU|XPU) blocks: 0,",
        variant="none",
    ),
    _p(
        "out-of-memory",
        r"CUDA Error: out of memory at \S*cumem_allocator\.cpp",  # vLLM's sleep-mode allocator
        derive=_oom,
    ),
    _p("out-of-memory", log_facts.OOM.pattern, derive=_oom, printer="torch"),
    # the process was killed from outside (SIGKILL: the shell's `Killed`, exit code 128 + 9)
    _p(
        "process-killed",
        r"Out of memory: Killed process (?P<pid>\d+)",
        r"^Killed$|\bexited with code 137\b|\b[Ee]xit [Cc]ode:? 137\b|\bOOMKilled\b",
        printer="os",
    ),
    # multi-GPU communication (9)
    # torch's ProcessGroupNCCL watchdog: `[Rank 4] Watchdog caught collective operation timeout:
    # WorkNCCL(SeqNum=20518, OpType=ALLREDUCE, NumelIn=106496, NumelOut=106496,
    # Timeout(ms)=1800000) ran for 1800270 milliseconds before timing out.` (torch 1.x-2.x)
    _p(
        "nccl-timeout",
        r"Watchdog caught collective operation timeout: WorkNCCL\(SeqNum=(?P<seq>\d+), "
        r"OpType=(?P<op>\w+).*?Timeout\(ms\)=(?P<timeout_ms>\d+)\)",
        r"Watchdog caught collective operation timeout",
        derive=_collective,
        printer="torch",
    ),
    _p(
        "nccl-error",
        r"NCCL error.*unhandled system error|\bncclSystemError\b|NCCL_ERROR_SYSTEM_ERROR",
        variant="system",
        printer="nccl",
    ),
    _p(
        "nccl-error",
        r"NCCL error.*unhandled cuda error|\bncclUnhandledCudaError\b|NCCL_ERROR_UNHANDLED_CUDA",
        variant="cuda",
        printer="nccl",
    ),
    _p(
        "nccl-error",
        r"\bNCCL error\b|\bnccl(?:Internal|InvalidUsage|Remote)Error\b|ncclCommInitRank failed",
        printer="nccl",
    ),
)

# A diagnosis that already explains another one's evidence (the gated-repo error is wrapped in
# "Invalid repository ID"; the weights OOM carries the torch OOM text).
_COVERS: Mapping[str, tuple[str, ...]] = {
    "model-access-denied": ("model-not-found",),
    "trust-remote-code-required": ("model-not-found", "architecture-unsupported"),
    "weights-dont-fit": ("out-of-memory", "kv-cache-too-small"),
    # NCCL allocates GPU memory for its buffers, and a peer that ran out aborts the collective:
    # an `unhandled cuda error` beside an out-of-memory is that memory.
    # A peer that died of it leaves the others' collectives waiting until the watchdog's timeout.
    "out-of-memory": ("nccl-error", "nccl-timeout"),
}

# Lines below ERROR, or raw, that already tell the cause; read like the loud ones: a negative KV
# cache memory, vLLM's own sleep-mode allocator out of memory (it prints to stderr, no level),
# and V0's `# GPU blocks: 0`, after which `initialize_cache` always refuses to start (0.2-0.10:
# "No available memory for the cache blocks").
_TELLING = re.compile(
    r"Available KV cache memory: -|reserved for KV Cache is -|exceeds available GPUs \(\d+\)"
    r"|Waiting for creating a placement group|# (?:GPU|CUDA|NPU|XPU) blocks: 0,"
    r"|^CUDA Error: out of memory at \S*cumem_allocator\.cpp"
)


def telling_lines(lines: Sequence[vllm_log.LogLine]) -> list[str]:
    """Lines that tell the cause without an error message of their own (a negative KV cache
    memory, no GPU blocks), for a log without an exception or an error line."""
    return [line.text.strip() for line in lines if _TELLING.search(line.text)]


def telling(lines: Sequence[vllm_log.LogLine]) -> list[str]:
    """The texts the table reads: loud lines, and quiet ones that already tell the cause."""
    return [line.text.strip() for line in lines if line.loud or _TELLING.search(line.text)]


def _hit(pattern: _Pattern, match: re.Match[str], text: str, context: Facts) -> Hit | None:
    facts = dict(context)
    facts.update({k: v for k, v in match.groupdict().items() if v is not None})
    if pattern.derive is not None:
        try:
            facts.update(pattern.derive(facts))
        except _NotThis:
            return None
    variant = facts.pop("variant", None) or pattern.variant
    return Hit(pattern.id, variant, facts, text)


def _first(pattern: _Pattern, texts: Sequence[str], context: Facts) -> Hit | None:
    # Alternatives in order: an earlier one names more facts (the gated model's name).
    for regex in pattern.regexes:
        for text in texts:
            match = regex.search(text)
            if match is not None:
                return _hit(pattern, match, text, context)
    return None


def vllm_says(texts: Sequence[str]) -> bool:
    """Whether any text is a message of vLLM's own in the table (not one of a library's)."""
    return any(
        regex.search(text)
        for pattern in _PATTERNS
        if pattern.printer == "vllm"
        for regex in pattern.regexes
        for text in texts
    )


def table_hits(texts: Sequence[str], context: Facts) -> list[Hit]:
    """One hit per diagnosis id, in the table's priority order."""
    hits: list[Hit] = []
    for pattern in _PATTERNS:
        if any(hit.id == pattern.id for hit in hits):
            continue
        hit = _first(pattern, texts, context)
        if hit is not None:
            hits.append(hit)
    covered = {c for hit in hits for c in _COVERS.get(hit.id, ())}
    return [hit for hit in hits if hit.id not in covered]
