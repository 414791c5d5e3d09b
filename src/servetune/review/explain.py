"""`explain`: every flag of a command in plain words, for this command's own values.

The five knobs people tune most (tensor parallelism, max-num-seqs, max-num-batched-tokens,
quantization, dtype) get an explanation built from the model, the GPUs and vLLM's defaults;
other common flags get a fixed note; the rest say what kind of option they are.
"""

from __future__ import annotations

from collections.abc import Callable

from servetune.review.check import Report
from servetune.review.settings import batch_defaults
from servetune.texts import Language
from servetune.vllm import flags as vllm_flags

Explanation = tuple[str, str | None, str]  # (flag, value as written, meaning)
_Explainer = Callable[[Report, str | None, Language], str]


def _tp(report: Report, _value: str | None, lang: Language) -> str:
    s, model = report.settings, report.model
    tp = s.tensor_parallel_size
    heads_total = model.num_attention_heads if model else None
    share = heads_total // tp if heads_total and heads_total % tp == 0 else "?"
    heads = (
        f" {model.model_id} has {heads_total} attention heads, so each GPU computes {share}."
        if model and heads_total
        else ""
    )
    if lang == "zh-TW":
        heads_zh = (
            f"{model.model_id} 有 {model.num_attention_heads} 個注意力頭，TP 必須能整除它。"
            if model and model.num_attention_heads
            else ""
        )
        return (
            f"張量並行（TP）= {tp}：把模型的每一層切成 {tp} 份，分給 {tp} 張 GPU 一起算，"
            f"每張 GPU 只放 1/{tp} 的權重，省下的記憶體變成 KV cache。GPU 之間每層都要同步，"
            f"所以 TP 通常等於一台機器上的 GPU 數，不跨機器。{heads_zh}預設值是 1。"
        )
    if tp == 1:
        return (
            "Tensor parallelism 1: the whole model runs on one GPU (the default). A larger value "
            "splits every layer across that many GPUs, each holding a share of the weights, so "
            "more memory is left for the KV cache; it usually equals the GPUs in one machine."
        )
    return (
        f"Tensor parallelism: each layer of the model is split across {tp} GPUs that work on "
        f"every token together. Each GPU holds 1/{tp} of the weights, and the memory this frees "
        f"becomes KV cache.{heads} The GPUs synchronise on every layer, so TP usually equals "
        "the number of GPUs in one machine (fast NVLink), not more. Default: 1."
    )


def _vllm_defaults(report: Report) -> tuple[int, int]:
    """(max_num_batched_tokens, max_num_seqs) vLLM would pick here without the flags."""
    gpu = report.hardware.spec if report.hardware else None
    mbt, seqs, _ = batch_defaults(report.command.version, gpu)
    return mbt, seqs


def _max_num_seqs(report: Report, _value: str | None, lang: Language) -> str:
    s = report.settings
    default = s.defaults.get("--max-num-seqs")
    _, vllm_default = _vllm_defaults(report)
    if lang == "zh-TW":
        note = (
            "（這是 vLLM 依版本與 GPU 選的預設值）"
            if default
            else f"（取代 vLLM 在這裡的預設值 {vllm_default}）"
        )
        return (
            f"同時服務的請求上限 = {s.max_num_seqs}{note}。連續批次處理就像共乘計程車："
            f"這是車上最多能坐幾個人。再多的請求只能排隊等，首字延遲（TTFT）會變長；"
            "坐得越滿，總吞吐量越高，但每個人的出字速度（TPOT）會變慢一些。"
            "能坐多少還受 KV cache 大小限制：位子夠但記憶體不夠時，vLLM 會把請求搶佔（preempt）。"
        )
    note = f" ({default})" if default else f" (replacing vLLM's default here, {vllm_default})"
    return (
        f"At most {s.max_num_seqs} requests are decoded together in one batch{note}. "
        "Continuous batching is a shared taxi: this is how many seats it has. Requests beyond "
        "it wait in the queue (time to first token grows); a fuller batch raises total "
        "throughput but makes each user's tokens come a little slower (TPOT). The KV cache "
        "must also have room for them: with seats but no memory, vLLM preempts requests."
    )


def _mbt(report: Report, _value: str | None, lang: Language) -> str:
    s = report.settings
    mbt = s.max_num_batched_tokens
    chunked = s.chunked_prefill
    vllm_default, _ = _vllm_defaults(report)
    user_set = "--max-num-batched-tokens" in s.user_set
    if lang == "zh-TW":
        mode = (
            "因為開著分段預填（chunked prefill），長的 prompt 會被切成多段，跨好幾步讀完。"
            if chunked
            else "分段預填關著，所以一整個 prompt 必須塞得進一步，這個值不能小於 max-model-len。"
        )
        replaced = (
            f"（取代 vLLM 在這裡的預設值 {vllm_default}）" if user_set else "（vLLM 的預設值）"
        )
        return (
            f"每一步（一次 GPU 前向計算）最多處理 {mbt} 個 token{replaced}，"
            "所有正在跑的請求共用這個預算："
            f"每個在解碼的請求佔 1 個，剩下的給新請求讀 prompt（prefill）。{mode}"
            "設太小，GPU 吃不飽、首字延遲變長卻不會報錯；設大一點，prefill 更快，"
            "但每一步變長，正在出字的人會卡一下。"
        )
    mode = (
        "Chunked prefill is on, so a long prompt is read in pieces over several steps."
        if chunked
        else "Chunked prefill is off, so a whole prompt must fit in one step: this must be at "
        "least max-model-len."
    )
    replaced = (
        f" (replacing vLLM's default here, {vllm_default})" if user_set else " (vLLM's default)"
    )
    return (
        f"Token budget of one scheduler step (one forward pass): at most {mbt} tokens{replaced}, "
        "shared by all running requests. Each decoding request takes 1; the rest reads new prompts "
        f"(prefill). {mode} Too small starves the GPU and raises time to first token with no "
        "error anywhere; larger speeds up prefill but makes each step longer, so users who "
        "are mid-answer see small stalls."
    )


def _quantization(report: Report, value: str | None, lang: Language) -> str:
    model = report.model
    quant = model.quantization if model else None
    method = (value or "").lower()
    online = method.startswith("fp8") or method in ("bitsandbytes", "experts_int8")
    if lang == "zh-TW":
        ckpt = (
            f"這個 checkpoint 本身是 {quant.method} 量化的。"
            if quant
            else "這個 checkpoint 沒有量化設定。"
        )
        how = (
            f"`{method}` 是「載入時即時量化」：把原本的權重在載入時轉成低精度。"
            if online
            else f"`{method}` 是告訴 vLLM「這個 checkpoint 已經是 {method} 格式，請這樣讀」，"
            "它不會幫你把原始模型量化；通常不用寫，vLLM 會從 config.json 自動偵測。"
        )
        return f"量化方式。{how}{ckpt}"
    ckpt = (
        f"This checkpoint is quantized with {quant.method}."
        if quant
        else "This checkpoint has no quantization config (plain weights)."
    )
    how = (
        f"`{method}` quantizes plain weights while loading them (online)."
        if online
        else f"`{method}` tells vLLM how to read a checkpoint that is already {method}-quantized; "
        "it never quantizes on the fly. vLLM detects it from config.json, so it is usually best "
        "left out."
    )
    return f"Weight quantization. {how} {ckpt}"


def _dtype(report: Report, _value: str | None, lang: Language) -> str:
    s = report.settings
    resolved = s.dtype or "?"
    if lang == "zh-TW":
        return (
            f"計算用的數值格式，這裡會用 {resolved}。bfloat16 和 float16 都是 16 位元，"
            "bfloat16 數值範圍大、不容易溢位，但要 Ampere（A100、A10、RTX 30 系列）以後的 GPU；"
            "float16 在舊卡（V100、T4）也能跑，但用 bfloat16 訓練的模型換成它可能溢位。"
            "預設 auto 會用 checkpoint 自己的格式。"
        )
    return (
        f"Number format for computing: here {resolved}. bfloat16 and float16 are both 16-bit; "
        "bfloat16 has float32's range (no overflow) but needs an Ampere or newer GPU (A100, A10, "
        "RTX 30xx); float16 runs on older GPUs (V100, T4) but models trained in bfloat16 can "
        "overflow in it. The default, auto, uses the checkpoint's own dtype."
    )


_NOTES: dict[str, dict[Language, str]] = {
    "--max-model-len": {
        "en": "The longest context (prompt + answer, in tokens) one request may have. vLLM "
        "must fit at least one request of this length in the KV cache, so a shorter value "
        "leaves room for more users at once. Default: the model's own limit.",
        "zh-TW": "單一請求最長可以多長（prompt 加回答的 token 數）。KV cache 至少要裝得下一個"
        "這麼長的請求，所以設短一點，就能同時服務更多人。預設值是模型本身的上限。",
    },
    "--gpu-memory-utilization": {
        "en": "The fraction of each GPU's memory vLLM takes (it reserves all of it at start). "
        "Weights and activations come out of it; the rest becomes KV cache.",
        "zh-TW": "vLLM 啟動時向每張 GPU 預先拿走的記憶體比例。權重和計算暫存從裡面扣，"
        "剩下的全部變成 KV cache。",
    },
    "--enforce-eager": {
        "en": "Turns off CUDA graphs: faster startup and a little less memory, but slower "
        "decoding. Meant for debugging.",
        "zh-TW": "關掉 CUDA graph：啟動快一點、省一點記憶體，但出字變慢。通常只在除錯時用。",
    },
    "--kv-cache-dtype": {
        "en": "Number format of the KV cache. fp8 halves its size (twice the tokens fit) at a "
        "small accuracy cost; auto uses the model's dtype.",
        "zh-TW": "KV cache 的數值格式。fp8 讓它小一半（可存兩倍 token），精度略降；"
        "auto 跟模型一樣。",
    },
    "--enable-chunked-prefill": {
        "en": "Lets vLLM read long prompts in pieces, mixed with decoding of other requests, "
        "so one long prompt does not freeze everyone else.",
        "zh-TW": "讓 vLLM 把長 prompt 分段讀，和別人的出字穿插進行，一個長 prompt 不會卡住所有人。",
    },
    "--enable-prefix-caching": {
        "en": "Reuses the KV cache of identical prompt beginnings (system prompts, chat "
        "history) across requests. On by default in recent vLLM.",
        "zh-TW": "相同開頭的 prompt（系統提示、對話歷史）可以共用 KV cache，不必重算。"
        "新版 vLLM 預設開啟。",
    },
    "--pipeline-parallel-size": {
        "en": "Splits the layers into consecutive stages on different GPUs (often across "
        "machines); slower per token than tensor parallelism inside one machine.",
        "zh-TW": "把模型的層切成前後幾段，放在不同 GPU（常是跨機器）；單機內通常比張量並行慢。",
    },
    "--data-parallel-size": {
        "en": "Runs that many independent copies of the model behind one API: more throughput, "
        "each copy needs its own GPUs.",
        "zh-TW": "在同一個 API 後面跑好幾份完整的模型：吞吐量更高，每份都要自己的 GPU。",
    },
    "--served-model-name": {
        "en": "The model name clients send in requests (`model` field) instead of the path.",
        "zh-TW": "用戶端在請求裡填的模型名稱（`model` 欄位），取代原本的路徑。",
    },
    "--host": {
        "en": "The address the server listens on (0.0.0.0 = every network interface).",
        "zh-TW": "伺服器監聽的位址（0.0.0.0 代表所有網路介面）。",
    },
    "--port": {
        "en": "The TCP port of the OpenAI-compatible API (default 8000).",
        "zh-TW": "OpenAI 相容 API 的連接埠（預設 8000）。",
    },
    "--trust-remote-code": {
        "en": "Allows running Python code shipped inside the model repository. Needed by some "
        "models; only for repositories you trust.",
        "zh-TW": "允許執行模型倉庫裡附帶的 Python 程式。有些模型需要；只對信任的來源開啟。",
    },
    "--api-key": {
        "en": "Clients must send this key (Authorization: Bearer ...).",
        "zh-TW": "用戶端必須帶這把金鑰（Authorization: Bearer ...）才能呼叫。",
    },
    "--kv-cache-memory-bytes": {
        "en": "Sets the KV cache size directly in bytes, ignoring --gpu-memory-utilization.",
        "zh-TW": "直接指定 KV cache 大小（位元組），不看 --gpu-memory-utilization。",
    },
}

_KNOBS: dict[str, _Explainer] = {
    "--tensor-parallel-size": _tp,
    "--max-num-seqs": _max_num_seqs,
    "--max-num-batched-tokens": _mbt,
    "--quantization": _quantization,
    "--dtype": _dtype,
}


def _generic(flag: str, lang: Language) -> str:
    spec = vllm_flags.spec_any_version(flag)
    default = spec.default
    if lang == "zh-TW":
        kind = "開關（on/off）" if spec.kind in ("bool", "store_true") else "需要一個值的選項"
        suffix = f"，預設值 {default}" if default not in (None, "") else ""
        return f"vLLM 的{kind}{suffix}。servetune 還沒有這個參數的白話說明；細節請看 `vllm serve --help={flag.removeprefix('--')}`。"  # noqa: E501
    kind = "switch (on/off)" if spec.kind in ("bool", "store_true") else "option taking a value"
    suffix = f", default {default}" if default not in (None, "") else ""
    return (
        f"A vLLM {kind}{suffix}. servetune has no plain-language note for it yet; see "
        f"`vllm serve --help={flag.removeprefix('--')}`."
    )


def _value(report: Report, flag: str) -> str | None:
    value = report.command.args.get(flag)
    if value is True or value is None:
        return None
    if value is False:
        return "off"
    return " ".join(value) if isinstance(value, tuple) else value


def explain(report: Report) -> list[Explanation]:
    """One explanation per flag of the command, in the order written; the five knobs always."""
    lang = report.language
    items: list[Explanation] = []
    if report.command.model:
        meaning = (
            "要服務的模型（Hugging Face 名稱或本機資料夾）。"
            if lang == "zh-TW"
            else "The model to serve (a Hugging Face id or a local folder)."
        )
        items.append(("model", report.command.model, meaning))
    flags = list(report.command.order)
    flags += [k for k in _KNOBS if k not in flags]
    for flag in flags:
        value = _value(report, flag)
        if flag in _KNOBS:
            if flag == "--quantization" and value is None:
                continue
            items.append((flag, value, _KNOBS[flag](report, value, lang)))
        elif flag in _NOTES:
            items.append((flag, value, _NOTES[flag][lang]))
        else:
            items.append((flag, value, _generic(flag, lang)))
    return items
