"""What `compare` and `accept` print, in Traditional Chinese (Taiwan): the twin of `judge_en`.
Metric keys, flags and the evidence quoted from logs and result files stay as they are."""

# RUF001: full-width punctuation is the correct punctuation in Chinese prose.

from __future__ import annotations

TEXTS: dict[str, str] = {
    # --- compare ---
    "compare.runs": (
        "之前：{before} 次測試，之後：{after} 次測試；{confidence} 信賴區間由重抽{method}估計。"
    ),
    "compare.method.runs": "各次測試",
    "compare.method.requests": "單次測試裡的請求",
    "compare.column.metric": "指標",
    "compare.column.before": "之前",
    "compare.column.after": "之後",
    "compare.column.change": "變化",
    "compare.column.ci": "信賴區間",
    "compare.column.verdict": "判定",
    "compare.changed_flags": "改過的參數（之前 -> 之後）：",
    "compare.unset": "未設定",
    "compare.default": "（預設值）",
    "compare.warnings": "警告：",
    "compare.next_step": "下一步：{step}",
    "verdict.better": "變好",
    "verdict.worse": "變差",
    "verdict.no-change": "沒有變化",
    "verdict.insufficient-data": "資料不足",
    # --- compare: what the judge writes ---
    "list.comma": "、",
    "list.semicolon": "；",
    "side.before": "之前",
    "side.after": "之後",
    "side.both": "之前與之後",
    "metric.mean": "平均 {family}",
    "metric.percentile": "{stat} {family}",
    "metric.request_throughput": "請求吞吐量",
    "metric.output_throughput": "輸出吞吐量",
    "metric.total_token_throughput": "總 token 吞吐量",
    "metric.request_goodput": "有效吞吐量（goodput）",
    "metric.other": "{name}",
    "conclusion": "{head}{knobs}。",
    "conclusion.single.both": "無法下結論：每邊只有一次測試{suggest}",
    "conclusion.single.before": "無法下結論：之前只有一次測試{suggest}",
    "conclusion.single.after": "無法下結論：之後只有一次測試{suggest}",
    "conclusion.suggest": "（單看請求，看起來是 {changes}）",
    "conclusion.trade_off": "有得有失：變好的是 {better}；變差的是 {worse}",
    "conclusion.better": "之後變好了：{changes}",
    "conclusion.worse": "之後變差了：{changes}",
    "conclusion.no_change": "沒有超出雜訊的變化",
    "conclusion.nothing": "無法下結論：沒有任何指標可以比較",
    "conclusion.change": "{metric} {change}",
    "conclusion.with_ci": "{change}{ci}",
    "conclusion.ci": "（信賴區間 {low}..{high}）",
    "conclusion.config_unknown": "；不知道伺服器的設定",
    "conclusion.no_knob": "；沒有改任何參數",
    "conclusion.knobs": "；改了 {n} 個參數",
    "conclusion.knob_spelled": "；改了 {n} 個參數：{changes}",
    "conclusion.knobs_spelled": "；改了 {n} 個參數：{changes}",
    "conclusion.knob": "{flag} {before} -> {after}",
    "config.no_command": "沒有記錄伺服器指令",
    "config.unreadable": "記錄下來的伺服器指令無法解讀（{error}）",
    "warning.config-mixed": (
        "{side}：這些測試的伺服器設定不一樣（{flags}）；比較時採用第一次測試的設定（{source}）。"
    ),
    "warning.config-unknown": (
        "{side}：{why}，所以不知道改了哪些參數（單純用 `vllm bench serve` 產生的檔案不會記錄"
        '伺服器指令）。請改用 `servetune bench --server-command "vllm serve ..."` 測試。'
    ),
    "workload.setting": "{option} {before} 對 {after}",
    "workload.tokens.input": "每個請求平均輸入 token 數 {before:.0f} 對 {after:.0f}",
    "workload.tokens.output": "每個請求平均輸出 token 數 {before:.0f} 對 {after:.0f}",
    "warning.workload-inside": "{side}：這些測試跑的負載不一樣（{diffs}），不算同一組的重複測試。",
    "warning.workload-between": (
        "兩邊的負載不一樣（{diffs}）：量的是不同的東西，所以這些變化不是伺服器造成的。"
        "請用相同的選項重跑。"
    ),
    "warning.client-saturated": (
        "{side}：{runs} 次測試中有 {behind} 次壓測端跟不上排程（送出延遲 p99 最高 "
        "{worst_ms:.1f} ms，上限 {limit_ms:g} ms）：延遲數字包含了壓測端自己的耽擱。"
        "請降低請求速率，或換一台比較空閒的機器跑壓測端。"
    ),
    "warning.failed-requests": (
        "{side}：{total} 個請求中有 {failed} 個失敗；延遲只算成功的請求，"
        "所以慢的請求都失敗的那一邊會看起來比較快。"
    ),
    "warning.prefix-cache-hits": (
        "{side}：{runs} 次測試中有 {hit} 次，伺服器在前綴快取裡找到了最多 {rate:.1%} 的提示詞 "
        "token，但這個隨機工作負載共用的前綴（--random-prefix-len）最多只能解釋 {expected:.1%}。"
        "這些請求跳過了部分預填計算：TTFT 與吞吐量會比換成全新提示詞時好看，兩邊也不是在相同"
        "條件下量的。{cause}"
    ),
    "prefix-cache.earlier-runs": (
        "沒有任何做法把先前測試的提示詞擋在快取外，重複使用別次測試提示詞（同一個 --prompt-seed）"
        "的測試一開始快取就是熱的。不要對同一台伺服器重複使用同一個 --prompt-seed，或以 "
        "VLLM_SERVER_DEV_MODE=1 啟動伺服器，讓 `servetune bench` 在測試前先清空快取。"
    ),
    "prefix-cache.during-run": (
        "測試前快取已清空，或提示詞是全新的，所以這些命中發生在測試期間：例如有其他用戶端"
        "對同一台伺服器送出相同的提示詞。請在沒有其他流量使用這台伺服器時重跑。"
    ),
    "warning.single-run.both": (
        "兩邊都只有一次測試：信賴區間來自重抽單次測試裡的請求，只反映請求之間的雜訊，"
        "反映不了測試之間的飄移（小於 {floor:g}% 的變化都算沒有變化），吞吐量也沒有區間。"
        "下結論前，每邊請重複測 3-5 次。{note}"
    ),
    "warning.single-run.before": (
        "之前只有一次測試：信賴區間來自重抽單次測試裡的請求，只反映請求之間的雜訊，"
        "反映不了測試之間的飄移（小於 {floor:g}% 的變化都算沒有變化），吞吐量也沒有區間。"
        "下結論前，每邊請重複測 3-5 次。{note}"
    ),
    "warning.single-run.after": (
        "之後只有一次測試：信賴區間來自重抽單次測試裡的請求，只反映請求之間的雜訊，"
        "反映不了測試之間的飄移（小於 {floor:g}% 的變化都算沒有變化），吞吐量也沒有區間。"
        "下結論前，每邊請重複測 3-5 次。{note}"
    ),
    "warning.single-run.note": (
        "沒有記錄每個請求的 {families} 數值（`vllm bench serve --save-detailed` 會記錄），"
        "所以這些指標沒有區間。"
    ),
    "warning.more-than-one-change": (
        "改了 {n} 個參數（{flags}）：無法判斷效果來自哪一個。每次比較只改一個參數。"
    ),
    "next.from": "（目前是 {seqs}）",
    "next.fewer-seqs": (
        "調低 --max-num-seqs{now}（或縮短 --max-model-len，或改用量化過的模型）："
        "KV cache 滿了（峰值 {kv:.0%}），請求被搶占後重新計算"
        "（單次測試最多 {preemptions:.0f} 次）。"
    ),
    "next.more-seqs": (
        "把 --max-num-seqs 調高到 {seqs} 以上（試試 {twice}）：所有序列名額都在忙"
        "（峰值 {running:.0f} 個在跑），KV cache 還有空間（峰值 {kv:.0%}），"
        "請求卻在排隊（峰值 {waiting:.0f}）。"
    ),
    "next.bigger-budget": (
        "把 --max-num-batched-tokens 調高到 {budget} 以上（試試 {twice}）：請求在排隊"
        "（峰值 {waiting:.0f}），卻只有 {running:.0f} 個序列在跑（上限 {ceiling}），"
        "KV cache 也只用到 {kv:.0%}，所以瓶頸是每一步的 token 預算。"
    ),
    # --- accept ---
    "accept.accepted": "驗收通過",
    "accept.not_accepted": "驗收不通過（{failed} 項失敗，{unknown} 項無法判斷）",
    "accept.check": "  [{status}] {name}：{evidence}",
    "status.pass": "通過",
    "status.fail": "失敗",
    "status.unknown": "未知",
    "check.hardware": "硬體與 TP 相符",
    "check.quantization": "量化方式與 checkpoint 相符",
    "check.started": "伺服器已成功啟動",
    "check.data": "之前與之後都有測試數據",
    "check.one-knob": "只改了一個參數",
    "check.quality": "回答品質沒有變差",
    # --- accept: each check's evidence ---
    "evidence.quoted": "{text}",
    "evidence.hardware.grid": "需要 {gpus} 張 GPU（TP {tp} x PP {pp} x DP {dp}）",
    "evidence.hardware.none": "沒有給 --gpus，NVML 也沒偵測到 GPU；{grid}",
    "evidence.hardware.found": "{source} {count} 張 GPU；{grid}",
    "evidence.hardware.named": "{source} {count} 張 GPU（{name}）；{grid}",
    "evidence.hardware.source.given": "--gpus 指定了",
    "evidence.hardware.source.nvml": "NVML 偵測到",
    "evidence.quantization.no-config": "找不到模型的 config.json",
    "evidence.quantization.auto": "未指定（自動判斷）",
    "evidence.quantization.plain": "checkpoint 沒有量化；--quantization {flag}",
    "evidence.quantization.method": "checkpoint 以 {method} 量化；--quantization {flag}",
    "evidence.started.ready": "{log}：日誌出現「Application startup complete」，伺服器已就緒",
    "evidence.started.failed": "啟動失敗，日誌裡的根本原因：{cause}",
    "evidence.started.failed-unsaid": "日誌顯示啟動失敗",
    "evidence.started.starting": "{log}：還在啟動中，日誌裡還沒有就緒的訊息",
    "evidence.started.health": "GET {url} 回應了 200",
    "evidence.started.no-answer": "沒有給 --log，{url} 也沒有回應",
    "evidence.data.missing": "沒有給 --before/--after 測試結果：請先用 `servetune bench` 測量",
    "evidence.data.unusable": "測試結果無法使用：{error}",
    "evidence.data.found": "兩邊都有測試結果{doubts}",
    "evidence.data.doubt": "（{warning}）",
    "evidence.knob.unknown": "測試結果裡沒有記錄伺服器指令",
    "evidence.knob.none": "兩邊的測試之間沒有改任何服務參數",
    "evidence.knob.one": "{change}",
    "evidence.knob.many": "改了 {n} 個參數：{changes}",
    "evidence.knob.unset": "未設定",
    "evidence.quality.unusable": "品質結果無法使用：{error}",
    "evidence.quality.result": (
        "{dataset}，{n} 題：之後減之前 = {difference} 個百分點（95% 信賴區間 {low} 到 "
        "{high}），結論：{verdict}"
    ),
    "evidence.quality.none": "無資料",
    "evidence.quality.verdict.no-detectable-loss": "沒有可偵測的品質損失",
    "evidence.quality.verdict.better": "變好",
    "evidence.quality.verdict.worse": "變差",
    "evidence.quality.verdict.insufficient-data": "資料不足，無法判斷",
}
