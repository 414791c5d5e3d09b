"""`tune` 的繁體中文文字（鍵與 tune_en.py 相同）。"""

from __future__ import annotations

TEXTS: dict[str, str] = {
    "limit.kv-cache": ("KV cache：快取滿了，請求被搶佔（preemption），或在還有座位時仍在等待區塊"),
    "limit.max-num-seqs": ("--max-num-seqs：所有座位都坐滿了，請求在排隊，而 KV cache 還有空間"),
    "limit.max-num-batched-tokens": (
        "--max-num-batched-tokens：prefill 吃不飽；座位和 KV 空間都還有，請求卻在排隊，"
        "是每一步的 token 預算卡住了"
    ),
    "limit.compute": "運算：沒有排隊、快取也沒滿，是每一步本身的時間達不到目標",
    "limit.client": (
        "壓測端：負載產生器跟不上自己的排程，數字反映的不是伺服器；請換一台較空閒的機器跑 tune"
    ),
    "limit.failed-start": "伺服器沒有啟動成功",
    "limit.slo-unreachable": "即使只有一位使用者也達不到目標",
    "next.better": (
        "改用最佳指令：在目標內可服務 {best} 位使用者（原本 {baseline} 位），"
        "容量下的輸出吞吐量 {pct}（{ci}）。上線前請先用 `servetune bench` 在 {best} "
        "位使用者下重複量測確認。"
    ),
    "next.same": (
        "保留你的指令：試過的 {tried} 種設定都沒有在雜訊之外勝過它。它的瓶頸是 {limit}。"
    ),
    "next.none": (
        "沒有任何設定達到目標（{limit}）。請放寬目標、縮短請求，或給模型更多 GPU，"
        "再用同一個 --output 重跑 tune。"
    ),
    "summary.best": "最佳：",
    "summary.baseline": "你的指令：",
    "summary.capacity": "目標內 {users} 位使用者（把握度 {sure}），輸出 {tokens} tok/s",
    "summary.none": "沒有容量（沒有任何負載達到目標）",
    "summary.limit": "瓶頸：{limit}",
    "summary.trials": "試驗：",
    "summary.users": "位使用者",
    "summary.starts": "伺服器啟動 {starts} 次；啟動花了 {start_s}，量測花了 {measure_s}",
    "summary.report": "報告：{path}",
    "summary.next": "下一步：{text}",
    "interrupted": "已中斷：完成的試驗保留在 {output}；再執行一次同樣的指令即可接續",
    "summary.diff": "與你的指令相比的變更：",
    "summary.no-diff": "（無：你的指令就是最佳）",
    "report.title": "servetune tune 報告",
    "report.targets": "目標：{targets} ms；{spent}",
    "report.starts": "啟動 {starts} 次，啟動花了 {start_s} 秒，量測花了 {measure_s} 秒",
    "report.latency": "{metric} p{percentile}（毫秒）對同時使用者數",
    "report.throughput": "輸出吞吐量（tok/s）對同時使用者數",
    "report.col.trial": "試驗",
    "report.col.changes": "變更",
    "report.col.status": "狀態",
    "report.col.capacity": "容量（使用者）",
    "report.col.throughput": "輸出 tok/s",
    "report.col.limit": "瓶頸",
    "report.col.runs": "次數",
    "report.col.time": "啟動／量測（秒）",
    "report.command": "最佳指令與你的指令的差異",
    "report.slo": "目標",
    # --interference-check（tune/parallel.py）；diff 與 threshold 為百分比
    "interference.comparable": (
        "干擾檢查：你的指令與其他試驗並行時，在容量上限的輸出吞吐量相對單獨執行為 {diff}"
        "（門檻 {threshold}）；並行執行的試驗結果可以互相比較。"
    ),
    "interference.not-comparable": (
        "干擾檢查：你的指令與其他試驗並行時，在容量上限的輸出吞吐量相對單獨執行為 {diff}"
        "（門檻 {threshold}）：並行執行的試驗數字無法與單獨執行的數字比較；檢查之後的每個"
        "試驗都在自己的節點上單獨執行。"
    ),
}
