"""What `serve` says, in Traditional Chinese (Taiwan): the twin of `serve_en`."""

# RUF001: full-width punctuation is the correct punctuation in Chinese prose.

from __future__ import annotations

TEXTS: dict[str, str] = {
    "starting": "正在啟動 vLLM（pid {pid}）；日誌：{log}",
    "ready": (
        "就緒：{url}（pid {pid}；vLLM 回報 KV cache {tokens} 個 token，最大並行數 "
        "{concurrency}x；check 估計 {estimated_tokens} 個 token，{estimated_concurrency}x）"
    ),
    "unknown": "未知",
    "stopped-early": "vLLM 就緒前就停止了",
    "stopping": "正在停止 vLLM",
    "stopped": "vLLM 已停止（結束代碼 {code}）",
    "failed": "vLLM 沒有啟動成功：{why}",
    "failed.log": "日誌：{log}",
    "why.exited": "程序已結束",
    "why.fatal": "日誌裡有致命錯誤",
    "why.timeout": "{seconds} 秒後仍未就緒",
    "why.died": "vLLM 就緒後又結束了",
    "refused": "error: 拒絕啟動：請先修正上面的錯誤，或加上 --force",
}
