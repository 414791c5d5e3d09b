"""What `plan` says, in Traditional Chinese (Taiwan): the zh-TW twin of `plan_en`."""

# RUF001: full-width punctuation is correct in Chinese prose.

from __future__ import annotations

TEXTS: dict[str, str] = {
    "header": "規劃：{model} 在 {machine} 上，{load}，輸入 {input_len} / 輸出 {output_len} token",
    "load.closed": "{users} 位使用者同時使用（每人在上一個請求結束後才送下一個）",
    "load.open": "每秒隨機送達 {rate} 個請求（共 {num} 個）",
    "col.config": "設定",
    "col.gpus": "GPU",
    "col.out": "輸出 tok/s",
    "col.req": "請求/s",
    "col.ttft": "TTFT 平均/p99 ms",
    "col.tpot": "TPOT 平均/p99 ms",
    "col.users": "可承載人數",
    "col.verdict": "結論",
    "col.verdict.meets": "達標",
    "col.verdict.marginal": "勉強",
    "col.verdict.fails": "未達標",
    "row.this": "目前的指令",
    "bound": "瓶頸：{bound}。KV cache：{kv} token。",
    "bound.kv-cache": "KV cache（請求因區塊不足而等待或被搶佔）",
    "bound.max-num-seqs": "--max-num-seqs（KV cache 還有空間，請求卻在排隊）",
    "bound.max-num-batched-tokens": "--max-num-batched-tokens（prefill 在等 token 預算）",
    "bound.compute": "運算量（prefill 的 FLOPs）",
    "bound.memory-bandwidth": "記憶體頻寬（每個 decode 步驟都要讀權重和 KV）",
    "bound.interconnect": "GPU 之間的互連（張量平行的 all-reduce）",
    "kv.unknown": "未知",
    "targets": "目標（p{percentile}）：{targets}。",
    "targets.verdict": "{targets}{verdict}。",
    "verdict.meets": "達標",
    "verdict.marginal": "難以判定：某個目標差距不到 10%，或落在預測的 80% 區間內",
    "verdict.fails": "未達標",
    "capacity": "最多 {users} 位使用者能達標：每張 GPU 每秒 {qps} 個請求。",
    "capacity.none": "在這個設定下，即使只有一位使用者也達不到目標。",
    "what_if.header": "如果（每次只改一項）：",
    "what_if.refused": "略過：{note}",
    "what_if.refused.rules": "vLLM 會拒絕這個設定：{rules}",
    "what_if.refused.error": "無法檢查：{error}",
    "batching.header": "同樣的負載下，連續批次 vs 靜態批次：",
    "batching.line": (
        "連續批次（vLLM，共乘計程車）：{c_out} tok/s，平均 TTFT {c_ttft} ms，平均延遲 {c_e2el} ms；"
        "靜態批次（等客滿才發車、要等最後一位乘客下車的公車）：{s_out} tok/s，平均 TTFT "
        "{s_ttft} ms，平均延遲 {s_e2el} ms：吞吐量是 {factor} 倍。"
    ),
    "answer.header": "回答：",
    "answer.lag.yes": "{users} 人同時用會卡嗎？會：{detail}大約 {ok} 人以內才能達標。",
    "answer.lag.yes.none": "{users} 人同時用會卡嗎？會：{detail}",
    "answer.lag.no": "{users} 人同時用會卡嗎？不會：{detail}大約可以撐到 {ok} 人。",
    "answer.lag.marginal": (
        "{users} 人同時用會卡嗎？難以判定：{detail}某個目標差距不到 10%，或落在預測的 80% 區間內；"
        "大約 {ok} 人是上限。"
    ),
    "answer.lag.unknown": (
        "{users} 人同時用會卡嗎？平均首字延遲 {ttft} ms，平均每個輸出 token {tpot} ms"
        "（加上 --slo ttft:MS --slo tpot:MS 才能回答會或不會）。"
    ),
    "answer.detail": "p{percentile} TTFT {ttft} ms、p{percentile} TPOT {tpot} ms。",
    "answer.qps": "在目標內，每張 GPU 的 QPS：{qps}。",
    "answer.qps.none": "在目標內，每張 GPU 的 QPS：無（達不到目標）。",
    "answer.qps.unknown": "每張 GPU 的 QPS：此負載下為 {qps}（未設定目標）。",
    "answer.best": "最划算的改動：{change}（{gpus}）：{what}。",
    "answer.best.users": "可達標的使用者從 {base} 人變成 {users} 人",
    "answer.best.throughput": "輸出從 {base} tok/s 變成 {out} tok/s",
    "answer.best.none": "這個設定沒有任何可預測的改動。",
    "notes": "附註：",
    "plot.written": "圖：{path}",
    "refused": "這個設定無法執行；check 找到：",
    "corrected": (
        "已照 check 的修正來規劃：原指令無法執行（{rules}），check 知道怎麼修；"
        "以下數字都是這條指令的："
    ),
    "note.uncalibrated": (
        "未校準：每步耗時的常數是依公開測量結果擬合的預設值（頻寬效率 {bandwidth}、運算效率 "
        "{compute}、每步 {step_ms} ms、每個請求每步 {seq_us} us）；要得到準確的數字，請用 "
        "--calibrate RESULT 提供在這套環境上量到的結果"
    ),
    "note.calibrated": (
        "已依 {runs} 次測量校準：頻寬效率 {bandwidth}、運算效率 {compute}、每步 {step_ms} "
        "ms、每個請求每步 {seq_us} us；在這些測量上的最大誤差 {worst}%"
    ),
    "note.moe": (
        "MoE：每一步只讀取 token 被分配到的專家（B 個 token 各選 E 中的 k 個時，每層約 "
        "E x (1 - (1 - k/E)^B) 個；專家平行時看最忙的 GPU），依公開的 MoE 測量結果擬合"
    ),
    "note.mla": (
        "MLA：每個 token 在每張 GPU 上存一份潛在向量（KV 快取不隨 TP 切分），prefill 走 MHA，"
        "decode 走潛在向量（vLLM 的吸收路徑）"
    ),
    "note.interval": (
        "80% 區間（來自 {group} 組保留驗證的公開測量）：輸出 {out} tok/s、平均 TPOT {tpot} ms、"
        "平均 TTFT {ttft} ms；目標落在區間內即為勉強"
    ),
}
