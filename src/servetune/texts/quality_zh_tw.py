"""What `quality` says, in Traditional Chinese (Taiwan): the zh-TW twin of `quality_en`."""

# RUF001: full-width punctuation is correct in Chinese prose.

from __future__ import annotations

TEXTS: dict[str, str] = {
    "header": "回答品質：{dataset}，兩台伺服器各問了 {n} 題",
    "side.before": "之前",
    "side.after": "之後",
    "side.line": (
        "答對 {accuracy}：已回答的 {answered} 題中答對 {correct} 題（{errors} 個請求失敗）"
    ),
    "accuracy.none": "沒有任何回答",
    "difference": (
        "之後減之前：{difference} 個百分點（95% 信賴區間 {low} 到 {high}）；"
        "兩邊在 {agreement} 的題目上判定一致。"
    ),
    "difference.none": "沒有任何一題兩台伺服器都有回答，無法比較。",
    "verdict.no-detectable-loss": (
        "結論 no-detectable-loss：在這份樣本上，這個改動最多損失 {tolerance} 個百分點的準確率"
        "（區間下限高於 -{tolerance}）。如果吞吐量的提升值得，就可以採用。"
    ),
    "verdict.better": "結論 better：之後的伺服器答對的題目比較多，而且超出雜訊範圍。",
    "verdict.worse": (
        "結論 worse：之後的伺服器答對的題目比較少，而且超出雜訊範圍。對數學、程式和需要仔細推理的"
        "任務，這正是量化要付出的代價：請保留原始模型，或改用較溫和的量化（8-bit、FP8）後再量一次。"
    ),
    "verdict.insufficient-data": (
        "結論 insufficient-data：區間仍然低於 -{tolerance} 個百分點，"
        "還不能排除超過你可接受範圍的損失。"
    ),
    "settle": "依目前看到的差異，總共大約需要 {count} 題才能下定論。",
    "differing.header": "一邊答對、另一邊答錯的題目（{count} 題）：",
    "differing.answer": "正確答案 {answer}",
    "differing.before": "之前：{reply}",
    "differing.after": "之後：{reply}",
    "differing.more": "……還有 {count} 題（完整內容請看 --output 或 --format json）",
    "failed": "有 {count} 題的請求失敗（{kinds}）；這些算作錯誤，不算答錯。",
    "interrupted": "已中斷：數字只涵蓋按下 Ctrl-C 之前已回答的題目。",
    "progress": "已問 {done}/{total}",
    "warning.low-accuracy": (
        "警告：兩台伺服器答對的題目都不到 10%，所以兩邊一致也說明不了改動的代價："
        "請改用原始模型答得出來的題目。"
    ),
}
