"""What `watch`, `postmortem` and `alerts` say, in Traditional Chinese (Taiwan): the zh-TW twin of
`monitor_en`, in the vocabulary of the review texts. Flags, limit ids, numbers and units stay in
ASCII, so they can be pasted into a terminal or matched against a log as they are.
"""

from __future__ import annotations

TEXTS: dict[str, str] = {
    "evidence.none": "沒有排隊：{running} 個執行中、{waiting} 個等待中，KV cache 用了 {kv:.0%}",
    "evidence.none:idle": "閒置：沒有執行中或等待中的請求",
    "evidence.none:quiet": "{seconds:.0f} 秒沒有統計行：閒置（vLLM 只在忙碌時才印統計行）",
    "evidence.kv-cache:preempting": "每秒 {preemptions:.2f} 次搶占，KV cache 用了 {kv:.0%}",
    "evidence.kv-cache:full": "KV cache 用了 {kv:.0%}，還有 {waiting} 個請求在等待",
    "evidence.max-num-seqs": "{running} 個執行中，已達上限 {cap}；{waiting} 個等待中，KV cache "
    "用了 {kv:.0%}",
    "evidence.max-num-seqs:unconfirmed": "執行中的數量卡在 {running}，同時有 {waiting} "
    "個在等待，KV cache 用了 {kv:.0%}（上限未確認：請給 --serve-command 或 --log）",
    "evidence.max-num-batched-tokens": "{waiting} 個等待中，還有 {free} 個序列空位、KV cache 用了 "
    "{kv:.0%}：每步的 token 預算（{budget}）讓 prefill 吃不飽",
    "evidence.compute": "沒有排隊，但執行中的請求從 {few} 個增加到 {many} 個時，token 間延遲從 "
    "{low:.0f} ms 升到 {high:.0f} ms",
    "evidence.admission": "伺服器每秒在入口拒絕 {rejections:.2f} 個請求",
    "evidence.deferred": "{waiting} 個等待中的請求裡，有 {deferred} 個被 vLLM 延後處理",
    "evidence.stalled": "引擎裡有 {requests} 個請求，卻已經 {seconds:.0f} 秒沒有產生任何 token",
    "evidence.unknown:no-data": "這段時間窗內沒有任何樣本",
    "evidence.unknown:queue": "{waiting} 個等待中、{running} 個執行中，KV cache 用了 "
    "{kv:.0%}；是哪個上限卡住還無法確認：請給 --serve-command 或 --log",
    "evidence.unknown:gap": "沒抓到 /metrics：{reason}",
    "next.kv-cache": "給 KV cache 更多空間：調高 --gpu-memory-utilization，或縮短 "
    "--max-model-len；這些都用完了，就再加一個副本。",
    "next.max-num-seqs": "把 --max-num-seqs 從 {seqs} 調到 {twice}：KV cache "
    "還有空間，請求卻在排隊。",
    "next.max-num-seqs:unconfirmed": "把 --max-num-seqs 調到 {running} 以上：KV cache "
    "還有空間，請求卻在排隊。",
    "next.max-num-batched-tokens": "把 --max-num-batched-tokens 從 {budget} 調到 {twice}，"
    "讓每一步能收進更多 prompt token。",
    "next.compute": "瓶頸是每一步本身的運算時間：加一個副本（或加大 "
    "--tensor-parallel-size）；調排程器的上限沒有幫助。",
    "next.admission": "入口在拒絕請求：調高 --max-num-queued-reqs，"
    "或在負載平衡器後面再加一個副本。",
    "next.deferred": "vLLM 是因為自己的原因延後這些請求，不是缺序列空位或 KV 空間（例如 LoRA "
    "adapter 超過 --max-loras、KV 傳輸）：先找出它們在等什麼。",
    "next.stalled": "引擎握著請求卻不產生 token：看它的日誌（servetune doctor LOG）然後重啟；"
    "只靠 /health 健康檢查看不出這個狀況。",
    "limit.none": "沒有瓶頸",
    "limit.kv-cache": "KV cache 滿了",
    "limit.max-num-seqs": "序列上限（--max-num-seqs）",
    "limit.max-num-batched-tokens": "每步 token 預算（--max-num-batched-tokens）",
    "limit.compute": "GPU 每一步的運算時間（算力）",
    "limit.admission": "入口拒絕請求",
    "limit.deferred": "請求被 vLLM 延後",
    "limit.stalled": "引擎卡住了",
    "limit.unknown": "不明",
    "gap.timeout": "抓取逾時",
    "gap.refused": "連線被拒絕",
    "gap.http": "伺服器回應 HTTP {status}",
    "gap.error": "抓取失敗（{detail}）",
    "panel.title": "servetune watch {url}：已觀察 {seconds:.0f} 秒，時間窗 {window:.0f} 秒",
    "panel.running": "執行中      {running} / {cap}      等待中 {waiting}",
    "panel.kv": "KV cache    {kv}         搶占 {preemptions}/s",
    "panel.tokens": "tokens/s    prompt {prompt}   生成 {generation}",
    "panel.latency": "延遲        TTFT p50 {ttft50} p99 {ttft99}   ITL p50 {itl50} p99 {itl99}",
    "panel.limit": "瓶頸        {limit}：{name}",
    "panel.evidence": "依據        {evidence}",
    "panel.next": "下一步      {next}",
    "panel.gap": "上次抓取    {reason}",
    "panel.cap-unknown": "上限 ?",
    "line.interval": "{elapsed:>6.0f} 秒  執行中 {running}/{cap}  等待中 {waiting}  KV {kv}  "
    "搶占 {preemptions}/s  prompt {prompt} tok/s  生成 {generation} tok/s  TTFT p50/p99 "
    "{ttft}  ITL p50/p99 {itl}  {limit}：{evidence}",
    "line.gap": "{elapsed:>6.0f} 秒  空檔：{reason}",
    "summary.watched": "共觀察 {seconds:.0f} 秒：{parts}。主要瓶頸：{dominant}。",
    "summary.part": "{limit} {seconds:.0f} 秒",
    "summary.separator": "、",
    "summary.next": "下一步：{next}",
    "end.gone": "伺服器不見了（{reason}），觀察結束。",
    "pm.title": "{source} 的事後分析：{start} 到 {end}",
    "pm.timeline": "時間軸：",
    "pm.interval": "  {start} 到 {end}  {limit}：{evidence}",
    "pm.incidents": "事件（出現排隊）：",
    "pm.incident": "  {start} 到 {end}（{seconds:.0f} 秒）：最多 {peak} 個在等待，{limit}",
    "pm.no-incidents": "沒有出現排隊。",
    "pm.dominant": "主要瓶頸：{dominant}（{name}）",
    "pm.next": "下一步：{next}",
    "pm.no-next": "下一步：不需要調整。",
    "pm.unknown-next": "下一步：提供伺服器的指令（--serve-command 或 --file），"
    "才能判斷是哪一個上限卡住了排隊。",
    "alerts.summary": "vLLM {server}：{name}",
    "alerts.why.stalled": "引擎裡有請求，卻已經 {seconds:.0f} 秒沒有產生任何 token。",
    "alerts.why.admission": "伺服器在入口拒絕請求（vllm:admission_rejections_total 在增加）。",
    "alerts.why.kv-cache": "KV cache 滿了：{preemptions} 在增加，或 KV cache 用到 {kv:.0%} "
    "以上時還有請求在等待。",
    "alerts.why.deferred": "大部分等待中的請求（{share:.0%} 以上）是被 vLLM 延後，不是被上限卡住。",
    "alerts.why.max-num-seqs": "KV cache 還有空間，請求卻在等待，同時執行中的序列已達上限 {cap} "
    "的 {at} 個以上。",
    "alerts.why.max-num-seqs:unconfirmed": "KV cache 還有空間，請求卻在等待，而執行中的數量 "
    "{window} 都沒有變：有個上限卡住了它（未確認：請用 --serve-command 產生規則）。",
    "alerts.why.max-num-batched-tokens": "KV cache 和序列空位都還有（執行中少於 {at} 個），"
    "請求卻在等待：每步的 token 預算（{budget}）讓 prefill 吃不飽。",
    "alerts.why.compute": "沒有排隊，但 token 間延遲是過去一小時平均的 {itl:g} 倍，執行中的請求也"
    "增加了 {running:g} 倍：瓶頸是每一步本身的運算時間。",
    "alerts.next.max-num-seqs:unconfirmed": "把 --max-num-seqs 調到依據查詢顯示的執行中數量以上："
    "KV cache 還有空間，請求卻在排隊。",
    "alerts.knob.stalled": "重啟伺服器（先看它的日誌：servetune doctor LOG）",
    "alerts.knob.admission": "--max-num-queued-reqs，或在負載平衡器後面加副本",
    "alerts.knob.kv-cache": "--gpu-memory-utilization、--max-model-len，然後是副本數",
    "alerts.knob.deferred": "vLLM 延後請求的原因（--max-loras、KV 傳輸），不是上限",
    "alerts.knob.max-num-seqs": "--max-num-seqs（序列上限）",
    "alerts.knob.max-num-batched-tokens": "--max-num-batched-tokens（每步 token 預算）",
    "alerts.knob.compute": "副本數，或 --tensor-parallel-size",
    "alerts.skip.metric": "這個版本沒有匯出 {metric}",
    "alerts.skip.caps": "需要上限值：請給 --serve-command 或 --file",
    "alerts.title": "vLLM {version}{names_of} 的告警規則，{engine} 引擎；上限：{caps}。",
    "alerts.names-of": "（採用 {table} 的 /metrics 名稱）",
    "alerts.caps": "max-num-seqs {seqs}、max-num-batched-tokens {budget}（{source}）",
    "alerts.caps-none": "未提供（給 --serve-command 就會成為門檻值）",
    "alerts.written": "已寫入：",
    "alerts.file.rules": "  {path}  Prometheus 規則：{alerts} 條告警、{records} 條 recording rule",
    "alerts.file.operator": "  {path}  同樣的規則，Prometheus Operator 的 PrometheusRule 格式",
    "alerts.file.tests": "  {path}  promtool 單元測試：一個健康的伺服器，每條告警各一個情境",
    "alerts.file.dashboard": "  {path}  Grafana 儀表板：{panels} 個面板",
    "alerts.list": "告警，依 watch 判斷瓶頸的順序：",
    "alerts.alert": "  {alert:<30} {limit:<24} 旋鈕：{knob}",
    "alerts.skipped": "未產生：",
    "alerts.skip": "  {limit:<24} {reason}",
    "alerts.check": "檢查它們：promtool check rules {rules} && promtool test rules {tests}",
    "lint.title": "{file}：依 vLLM {version}{names_of}（{engine} 引擎）檢查了 {count} 個 vLLM "
    "指標名稱。",
    "lint.none": "{file}：查詢裡沒有 vLLM 指標名稱（沒有可檢查的）。",
    "lint.clean": "沒有失效的名稱：查詢用到的每個 vLLM 指標在那個版本都存在。",
    "lint.dead": "{dead} 個失效：用到它們的查詢永遠不會有資料。",
    "lint.name": "  {status:<12} {name}  {where}",
    "lint.reason": "               {reason}",
    "lint.status.live": "正常",
    "lint.status.hidden": "隱藏",
    "lint.status.other-engine": "另一個引擎",
    "lint.status.dead": "失效",
    "lint.why.gone": "{last} 之後就沒有了；請改用 {use}",
    "lint.why.gone:bare": "{last} 之後就沒有了",
    "lint.why.not-yet": "{first} 之前沒有匯出",
    "lint.why.no-total": "這是 counter：Prometheus 抓到的名稱是 {use}",
    "lint.why.bare-histogram": "這是 histogram：請查詢 {use}（或 _sum、_count）",
    "lint.why.suffix": "這不是 histogram：請查詢 {use}",
    "lint.why.never": "沒有任何 vLLM 版本匯出它；您是指 {use} 嗎？",
    "lint.why.never:bare": "沒有任何 vLLM 版本匯出它",
    "lint.why.hidden": "只有加上 {flag} 才會匯出",
    "lint.why.other-engine": "只在 {engine} 引擎裡，這個版本要特別指定才會用它（VLLM_USE_V1）",
    "lint.where.alert": "告警 {name}",
    "lint.where.record": "記錄規則 {name}",
    "lint.where.panel": "面板「{name}」",
    "lint.where.path": "位於 {path}",
    "lint.where.separator": "、",
    "dash.title": "vLLM 瓶頸（{version}）",
    "dash.limit": "觸發中的瓶頸（servetune alerts）",
    "dash.running": "執行中對照上限、等待中",
    "dash.kv": "KV cache 使用率",
    "dash.preemptions": "每秒搶占次數",
    "dash.admission": "每秒在入口被拒絕的請求",
    "dash.tokens": "每秒 token 數",
    "dash.ttft": "首個 token 延遲",
    "dash.itl": "token 間延遲",
    "dash.queue": "排隊時間",
    "dash.step": "每步 token 數對照預算",
}
