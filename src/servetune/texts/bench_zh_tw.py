"""What `bench` says, in Traditional Chinese (Taiwan): the twin of `bench_en`. Metric names
(TTFT, TPOT, ITL, E2EL) and units stay as `vllm bench serve` writes them."""

# RUF001: full-width punctuation is the correct punctuation in Chinese prose.

from __future__ import annotations

TEXTS: dict[str, str] = {
    "live": "{elapsed} 秒  完成 {done}{total}  失敗 {failed}  進行中 {in_flight}  {rate} tok/s",
    "title": " 壓力測試結果 ",
    "partial": "部分結果：測試中途被中斷",
    "na": "無",
    # --- rows of the table ---
    "row.completed": "成功的請求：",
    "row.failed": "失敗的請求：",
    "row.duration": "測試時間（秒）：",
    "row.input_tokens": "輸入 token 總數：",
    "row.output_tokens": "生成 token 總數：",
    "row.request_throughput": "請求吞吐量（req/s）：",
    "row.request_goodput": "達標請求吞吐量 goodput（req/s）：",
    "row.output_throughput": "輸出 token 吞吐量（tok/s）：",
    "row.peak_output_throughput": "輸出 token 吞吐量峰值（tok/s）：",
    "row.peak_concurrency": "同時進行的請求峰值：",
    "row.total_throughput": "總 token 吞吐量（tok/s）：",
    # --- latency sections ---
    "latency.ttft": "首字延遲 TTFT",
    "latency.tpot": "每個輸出 token 的時間 TPOT（不含第一個）",
    "latency.itl": "token 間延遲 ITL",
    "latency.e2el": "端到端延遲 E2EL",
    "latency.mean": "{metric} 平均（ms）：",
    "latency.median": "{metric} 中位數（ms）：",
    "latency.percentile": "{metric} P{p}（ms）：",
    # --- notes under the table ---
    "note.errors": "各類錯誤次數：{kinds}",
    "note.send_lag": "用戶端送出延遲 p99：{ms} ms",
    "note.saturated": (
        "警告：用戶端自己跟不上排程（送出延遲 p99 超過 {limit_ms} ms），量到的延遲包含"
        "用戶端本身的拖延。請降低請求速率，或換一台比較空閒的機器跑用戶端。"
    ),
    "note.good_share": "符合 SLO 的請求：{percent}%",
    "note.server": (
        "伺服器：執行中峰值 {running}，排隊峰值 {waiting}，KV cache 使用率峰值 {kv_cache}，"
        "搶佔次數 {preemptions}"
    ),
    "note.prefix_cache": "前綴快取（prefix cache）命中率：{rate}（{how}）",
    "note.isolation.reset": "測試前已清空伺服器的快取",
    "note.isolation.fresh-prompts": "本次使用新的提示詞文字，--prompt-seed {seed}",
    "note.isolation.none": "先前用同樣提示詞跑過的測試可能已把快取填好",
    "note.prefix_cache_warning": (
        "警告：伺服器在前綴快取裡找到了 {rate} 的提示詞 token，但這個隨機工作負載共用的前綴"
        "最多只能解釋 {expected}。這些請求跳過了部分 prefill，TTFT 與吞吐量會比換成全新提示詞"
        "時好看。不要對同一台伺服器重複使用同一個 --prompt-seed，或以 VLLM_SERVER_DEV_MODE=1 "
        "啟動 vLLM，讓 bench 能在測試前先清空快取。"
    ),
    "note.written": "結果已寫入 {path}",
}
