"""What servetune's errors say, in Traditional Chinese (Taiwan): the twin of `errors_en`.
Flags, commands, ids, numbers, paths and the facts quoted from the system (an OS error, a JSON
parser's message, argparse's words) stay as they are."""

# RUF001: full-width punctuation is the correct punctuation in Chinese prose.

from __future__ import annotations

TEXTS: dict[str, str] = {
    "interrupted": "已中斷",
    # --- shared hints -----------------------------------------------------------------------
    "hint.did-you-mean": "您是不是要找 {guess}？",
    "hint.file-path": "請檢查 --file 指定的路徑",
    "hint.alert-rules": "請給 Prometheus 規則檔、PrometheusRule 或 Grafana 儀表板",
    "hint.vllm-log": "請給一個 vLLM 日誌檔",
    "hint.server-log": "請給伺服器的日誌",
    "hint.postmortem-input": "請給 vLLM 日誌、/metrics 快照、range query 匯出檔或壓力測試結果",
    "hint.result-files": (
        "請給 `servetune bench` 或 `vllm bench serve --save-result` 寫出的結果檔"
    ),
    "hint.quality-result": "請給 `servetune quality --output FILE` 寫出的檔案",
    "hint.executor-ray": "加上 --executor ray，才能讓多個試驗並排執行",
    "hint.base-url": "伺服器的 base URL 長得像 http://127.0.0.1:8000",
    "hint.question-line": '應為 {{"prompt": ..., "answer": ...}}',
    # --- an optional extra that is not installed --------------------------------------------
    "missing-extra": "{feature} 需要選用套件 '{extra}'",
    "missing-extra.hint": "請執行 pip install 'servetune[{extra}]'",
    "feature.tune-ray": "以 --executor ray 執行 tune",
    "feature.tune-report": "tune 的 report.html",
    "feature.plan-plot": "plan 的 --plot",
    "feature.postmortem-plot": "postmortem 的 --plot",
    "plot.cannot-write": "無法寫入圖檔 {path}：{reason}",
    "plot.cannot-write.hint": "請換一個 --plot 路徑",
    # --- files ------------------------------------------------------------------------------
    "cannot-read": "無法讀取 {path}：{reason}",
    "cannot-write": "無法寫入 {path}：{reason}",
    # --- the command line (argparse's own words stay as argparse says them) ----------------
    "cli.usage": "{message}",
    "cli.usage.hint": "請看 `{prog} --help`",
    "cli.no-serve-command": "{name} 不接受 `--` 後面的指令",
    "cli.no-serve-command.hint": "請看 `servetune {name} --help`",
    "cli.command-twice": "指令請擇一給：放在 `--` 後面，或用 --file，不要兩個都給",
    "cli.bad-slo": "{option} 的項目 {item!r} 格式不對",
    "cli.bad-slo.hint": "請用 KEY:MS，KEY 是 {keys} 其中之一",
    "check.no-command": "沒有要檢查的指令",
    "check.no-command.hint": (
        "請放在 `--` 後面：servetune check --gpus 1xL4 -- vllm serve MODEL ..."
    ),
    "watch.command-twice": "指令請擇一給：用 --serve-command 或 --file，不要兩個都給",
    "compare.two-sides": "compare 需要 BEFORE 和 AFTER 兩邊",
    "compare.two-sides.hint": "例如 servetune compare OLD.json NEW.json",
    "plan.lengths": "plan 需要請求的長度",
    "plan.lengths.hint": "請給 --input-len N 和 --output-len N",
    "plan.load": "--concurrency 和 --request-rate 請剛好給其中一個",
    "plan.load.hint": ("--concurrency 50 代表同時 50 位使用者；--request-rate 4 代表每秒 4 個請求"),
    # --- a `vllm serve` command -------------------------------------------------------------
    "command.unsplittable": "無法把指令拆成一個個字詞：{reason}",
    "command.unsplittable.hint": "請檢查指令裡每個引號都有成對關上",
    "command.none": "文字中找不到 `vllm serve` 指令",
    "command.none.hint": (
        "文字裡必須有一行以 `vllm serve`、"
        "`python -m vllm.entrypoints.openai.api_server` 或 `docker run ... vllm/vllm-openai` 開頭"
    ),
    "command.no-image": "這個 docker 指令沒有指定映像檔",
    "command.no-image.hint": "請給 vLLM 的映像檔，例如 vllm/vllm-openai:latest",
    "command.not-serve": "`vllm {sub}` 不是 `vllm serve`",
    "command.not-serve.hint": "servetune 檢查的是啟動伺服器的指令：`vllm serve MODEL [flags]`",
    "command.not-vllm": "不是 vLLM 伺服器指令：{words!r}",
    "command.not-vllm.hint": (
        "應為 `vllm serve MODEL ...`、`python -m vllm.entrypoints.openai.api_server ...` "
        "或 `docker run ... vllm/vllm-openai ...`"
    ),
    # --- GPUs -------------------------------------------------------------------------------
    "gpus.unknown": "不認得的 GPU 名稱：{name!r}",
    "gpus.known": "已知的 GPU：{names}",
    "gpus.mixed-unreadable": "混合 GPU 組合中的 {part!r} 看不懂",
    "gpus.mixed-unreadable.hint": "請逐張寫出顯示卡，例如 --gpus 1xRTX-5070-Ti+1xRTX-5090-D",
    "gpus.mixed-platforms": "vLLM 一次只能跑一種平台：CUDA 和 ROCm 的顯示卡無法一起服務同一個模型",
    "gpus.mixed-platforms.hint": "請給同一家廠商的顯示卡",
    "gpus.count-min": "--gpus 至少要是 1",
    "gpus.count-min.hint": "例如 --gpus 2xA100-80GB",
    "gpus.unreadable": "看不懂 --gpus {text!r}",
    "gpus.unreadable.hint": "請用 N、NAME 或 NxNAME，例如 2xA100-80GB",
    "gpus.name-min": "--gpus 至少要指定 1 張 GPU",
    "gpus.name-min.hint": "例如 --gpus 2xA100-80GB",
    # --- serve: launching vLLM; doctor: reading its log -------------------------------------
    "launch.no-vllm": "找不到 vLLM 執行檔",
    "launch.no-vllm.hint": "請用 {vllm} PATH 指定、設定 SERVETUNE_VLLM，或把 `vllm` 放進 PATH",
    "launch.not-executable": "不是可執行檔：{path}",
    "launch.not-executable.hint": "請給 `vllm` 程式的路徑",
    "launch.docker": "serve 只啟動 `vllm serve` 指令，不啟動 docker",
    "launch.docker.hint": "請自己執行容器，再用 `servetune doctor` 診斷它的日誌",
    "launch.bench": "這是離線基準測試（它自己跑一個引擎），不是伺服器",
    "launch.bench.hint": "serve 只啟動 `vllm serve`；請給它那樣的指令，或自己執行這個基準測試",
    "doctor.not-vllm": (
        "這不是 vLLM 的日誌：沒有任何一行是 vLLM 會印出的（像是 `INFO 05-01 12:00:00 "
        "[file.py:1]` 開頭、`(APIServer pid=1)` 這類行程標記、traceback 中的 vLLM 檔案、"
        "它的橫幅或它自己的訊息）"
    ),
    "doctor.not-vllm.hint": (
        "請給 doctor vLLM 伺服器自己的輸出（stdout 和 stderr）：`docker logs CONTAINER`、"
        "`kubectl logs POD`，或 `vllm serve ... 2>&1 | tee vllm.log` 寫出的檔案"
    ),
    # --- bench: the server, the options, the workload ---------------------------------------
    "client.not-a-url": "不是 http(s) 的 base URL：{url!r}",
    "client.bad-port": "{url!r} 裡的連接埠不正確",
    "bench.unreachable": "連不上位於 {url} 的伺服器：{why}",
    "bench.unreachable.hint": "請檢查 {base_url}，並確認伺服器已啟動（curl BASE_URL/v1/models）",
    "bench.key-refused": "伺服器拒絕了這個 API 金鑰（{status}）",
    "bench.key-refused.hint": "請用 {api_key} 指定，或設定 OPENAI_API_KEY",
    "bench.workers-min": "{workers} 至少要是 1",
    "bench.workers-over-slots": "{max_concurrency} {cap} 小於 {workers} {count}",
    "bench.workers-over-slots.hint": "每個 worker 至少需要一個並行名額：請減少 worker 數量",
    "bench.workers-count": "{workers} 必須是正整數或 auto，不能是 {text!r}",
    "bench.worker-start": "有一個壓力測試的 worker 行程沒有啟動",
    "bench.worker-start.hint": "請減少 {workers}",
    "bench.dataset-needs-path": "{dataset_name} {name} 需要 {dataset_path}",
    "bench.dataset-needs-path.hint": "請給檔案的路徑",
    "bench.dataset-path": "--dataset-name {name} 需要 --dataset-path",
    "bench.no-such-file": "沒有這個檔案：{path}",
    "bench.no-such-file.hint": "請檢查 --dataset-path",
    "bench.duration": "--duration 需要搭配 --request-rate 或 --max-concurrency",
    "bench.duration.hint": "否則請求會毫無限制地送出",
    "bench.cannot-save": "無法寫入 {path}：{reason}；結果已另存到 {rescue}",
    "bench.cannot-save.hint": "請檢查 --output / --result-dir",
    "workload.not-json": "{path} 不是有效的 JSON：{reason}",
    "workload.not-object": "{where}：應為 JSON 物件",
    "workload.max-tokens": "{where}：max_tokens 必須是正整數",
    "workload.no-prompt": "{where}：需要字串 'prompt' 或 'messages' 清單",
    "workload.no-prompt.hint": (
        '每一行：{{"prompt": "..."}} 或 {{"messages": [{{"role": "user", "content": "..."}}]}}'
    ),
    "workload.line-not-json": "{path}:{number}：不是有效的 JSON（{reason}）",
    "workload.no-prompts": "{path} 裡沒有任何 prompt",
    "workload.not-sharegpt": "{path} 不是 ShareGPT 檔案（對話組成的 JSON 清單）",
    "workload.no-conversations": "{path} 裡沒有可用的對話",
    "workload.no-conversations.hint": "應為 ShareGPT 格式",
    # --- compare and accept: result files ---------------------------------------------------
    "runs.none": "沒有給任何結果檔",
    "runs.empty-folder": "{path}：這個資料夾裡沒有 *.json 檔案",
    "runs.no-such": "{path}：沒有這個檔案或資料夾",
    "runs.not-json": "{path}：不是 JSON（{reason}，第 {line} 行第 {column} 欄）",
    "runs.empty-file": "{path}：檔案是空的",
    "runs.not-a-result": "{source}：不是壓力測試結果（沒有 `completed` 和 `duration`）",
    "compare.unknown-metric": "不認得的指標 {name!r}",
    "compare.unknown-metric.hint": "可用的指標：{names}",
    "compare.empty-side": "每一邊至少要有一次測試",
    # --- tune -------------------------------------------------------------------------------
    "tune.slo-percentile": "--slo-percentile 必須小於 100",
    "tune.slo-percentile.hint": "例如 99 或 95",
    "tune.dataset-path": "--dataset-name {name} 需要一個存在的 --dataset-path",
    "tune.no-command": "沒有要調校的指令",
    "tune.no-command.hint": "請放在 `--` 後面：servetune tune ... -- vllm serve MODEL ...",
    "tune.bad-knob": "--knob {text!r}：應為 FLAG=V1,V2,...",
    "tune.bad-knob.hint": "例如 --knob max-num-seqs=64,128,256",
    "tune.ray-address": "--ray-address 需要搭配 --executor ray",
    "tune.parallel": "--parallel 需要搭配 --executor ray：目前試驗一次只跑一個",
    "tune.interference-check": "--interference-check 需要搭配 --executor ray",
    "tune.bad-address": "{address} {text!r} 不正確",
    "tune.bad-address.hint": (
        "請用 auto（這台機器的叢集）、local（在這裡起一個私用的 Ray）或 ray://HOST:PORT"
    ),
    "tune.no-ray-cluster": "連不上位於 {at} 的 Ray 叢集：{why}",
    "tune.no-ray-cluster.hint": (
        "請先啟動一個（在這個節點執行 `ray start --head`），或改用 {address} local"
    ),
    # --- quality ----------------------------------------------------------------------------
    "quality.no-builtin": "沒有名為 {name!r} 的內建資料集",
    "quality.no-builtin.hint": "內建資料集：{names}",
    "quality.cannot-read-dataset": "無法讀取資料集 {spec}：{reason}",
    "quality.cannot-read-dataset.hint": (
        '請給 JSON lines 檔案，每行一個 {{"prompt": ..., "answer": ...}}，或 builtin:math'
    ),
    "quality.no-questions": "資料集 {source} 裡沒有任何題目",
    "quality.no-questions.hint": "每行一個 JSON 物件",
    "quality.line": "{source} 第 {number} 行",
    "quality.not-json": "{where} 不是 JSON：{reason}",
    "quality.not-object": "{where} 不是 JSON 物件",
    "quality.needs-prompt": "{where} 需要非空字串的 `prompt` 和 `answer`",
    "quality.answer-not-number": "{where}：答案 {answer!r} 不是數字，但 kind 是 'number'",
    "quality.bad-kind": "{where}：kind 必須是 'number' 或 'text'，不能是 {kind!r}",
    "quality.num-min": "{num} 至少要是 1",
    "quality.cannot-read-result": "無法讀取品質檢查結果 {path}：{reason}",
    "quality.not-a-result": "{path} 不是 servetune 的品質檢查結果（沒有 verdict）",
    "quality.not-a-url": "{url!r} 不是伺服器的 URL",
    "quality.not-a-url.hint": "請給 base URL，例如 http://127.0.0.1:8000",
    "quality.unreachable": "連不上位於 {url} 的伺服器：{why}",
    "quality.unreachable.hint": "請檢查 URL，並確認伺服器已啟動（curl URL/v1/models）",
    "quality.no-answer": "GET /v1/models 在 {timeout_s:g} 秒內沒有回應",
    "quality.not-http": "它的回應不是 HTTP（{detail}）",
    "quality.key-refused": "{url} 拒絕了這個 API 金鑰（{status}）",
    "quality.key-refused.hint": "請用 {api_key} 指定",
    "quality.models-not-json": "{url} 對 GET /v1/models 的回應不是 JSON",
    "quality.models-not-json.hint": "請確認這個 URL 是相容 OpenAI 的伺服器（vLLM：http://HOST:8000）",
    "quality.wrong-model": "{url} 沒有提供名為 {model!r} 的模型",
    "quality.wrong-model.hint": "它提供的模型：{names}",
    "quality.serves-guess": "它提供的模型：{names}（您是不是要找 {guess}？）",
    "quality.timeout": "--request-timeout 必須是正數",
    "hint.output-path": "請換一個 --output 路徑",
    # --- alerts, report, monitor, model config --------------------------------------------
    "alerts.mode": "請給 --output DIR（寫出規則）或 --lint FILE（檢查規則），擇一",
    "alerts.mode.hint": "請看 `servetune alerts --help`",
    "alerts.lint-caps": "--lint 只檢查指標名稱：它接受 --vllm-version，不接受上限設定",
    "alerts.lint-caps.hint": "請拿掉 --serve-command、--file、--gpus 與 --log",
    "report.needs-both": "比較需要同時給 --before 與 --after",
    "report.needs-both.hint": "例如 --before OLD --after NEW",
    "report.nothing": "沒有可以報告的內容",
    "report.nothing.hint": "例如 servetune report RESULT.json --output report.html",
    "report.no-such-path": "{path}：沒有這個檔案或資料夾",
    "report.not-object": "{path}：不是 JSON 物件",
    "report.trial-no-flags": "tune.json 的第 {number} 個試驗沒有參數",
    "report.no-trials": "{path}：沒有任何試驗",
    "monitor.not-a-version": "不是 vLLM 的版本：{version}",
    "monitor.not-a-version.hint": "請給像 0.11.0 這樣的版本",
    "monitor.version-too-old": "servetune 認得 {first} 起的 vLLM /metrics 名稱，不包括 {asked}",
    "monitor.version-too-old.hint": "請給 --vllm-version {first} 或更新的版本",
    "monitor.no-samples": "{name}：找不到 vLLM 的統計行、/metrics 頁面或取樣",
    "monitor.mixed-clocks": "無法把 vLLM 的「月-日」時間戳記與純秒數放在同一條時間軸上",
    "monitor.mixed-clocks.hint": "請把日誌與指標匯出分成兩次 postmortem",
    "monitor.nothing": "{name}：沒有可以分析的內容",
    "monitor.nothing.hint": "請給含有取樣的檔案",
    "monitor.cannot-scrape": "無法抓取 {url}/metrics：{reason}",
    "monitor.cannot-scrape.hint": "請確認網址，以及伺服器是否在執行",
    "monitor.no-metrics": "{url} 沒有 /metrics 頁面",
    "monitor.no-metrics.hint": "watch 需要 vLLM 的 Prometheus 端點",
    "model.not-object": "{path} 的內容是 JSON {kind}，不是物件",
    "model.not-object.hint": "這個檔案必須是模型的 config.json",
    "model.url-not-object": "{url} 不是 config.json 物件",
    "model.cannot-read": "無法讀取 {path}：{reason}",
    "model.cannot-read.hint": "請檢查 config.json 的路徑",
    "model.not-json": "{path} 不是有效的 JSON：{reason}",
    "model.not-json.hint": "這個檔案必須是模型的 config.json",
    "model.hub-status": "模型庫對 {url} 回應 {status}",
    "model.cannot-fetch": "無法取得 {url}：{reason}",
    "model.cannot-fetch.hint": "請用 --model-config PATH 指向本機的 config.json",
    "hint.report-input": (
        "請給 bench 結果檔或資料夾、tune 的輸出資料夾，"
        "或 `plan --format json`、`postmortem --format json` 的 JSON"
    ),
    "hint.tune-dir": "請給 `servetune tune` 的 --output 資料夾（裡面有 tune.json）",
    "hint.gated-model": "需授權的模型請設定 HF_TOKEN",
    "hint.model-id": "請檢查模型 ID",
    "monitor.not-rules": "{path} 既不是 JSON 也不是 YAML：{reason}",
    "vllm.not-a-version": "不是 vLLM 的版本：{version}",
    "vllm.not-a-version.hint": "請給像 0.8.5 或 0.33.0 這樣的版本號",
    "plan.model-unknown": "plan 需要模型的規格，但不認得 {model}",
    "plan.model-unknown.hint": "請用 --model-config PATH/config.json 指定",
    "plan.gpu-unknown": "plan 需要知道 GPU 型號",
    "plan.gpu-unknown.hint": "請給 --gpus，例如 --gpus 1xH100-80GB",
    "plan.request-too-long": (
        "一個請求有 {tokens} 個 token（輸入 {input_len} + 輸出 {output_len}），超過 "
        "--max-model-len {length}：vLLM 會對每個這樣的請求回錯誤（400，「maximum context "
        "length」），所以沒有東西可以規劃"
    ),
    "plan.request-too-long.hint": (
        "把 --max-model-len 提高到 {tokens} 以上（前提是 KV cache 放得下），或改用使用者"
        "實際會送的長度來規劃"
    ),
    "plan.no-calibration": "可用來校準的測量結果都沒有吞吐量或延遲數字",
    "plan.no-calibration.hint": (
        "請給 servetune bench 或 vllm bench serve --save-result 寫出的結果檔"
    ),
}
