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
}
