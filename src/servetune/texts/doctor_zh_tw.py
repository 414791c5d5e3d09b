"""What `doctor` says, in Traditional Chinese (Taiwan): the zh-TW twin of `doctor_en`.

Same keys and `str.format` placeholders as the English table, and the same vocabulary as the
review texts. Flags, commands, environment variables, numbers and the error strings quoted from
vLLM stay in ASCII, so they can be matched against a log or pasted into a terminal as they are.
"""

# RUF001: the strings are Chinese prose; its full-width comma, colon, semicolon and parentheses
# are the correct punctuation there, not confusable stand-ins for ASCII.

from __future__ import annotations

TEXTS: dict[str, str] = {
    "dash-typo.title": "`{token}` 開頭是排版用的破折號，不是 `--`",
    "dash-typo.why": "聊天軟體和文書處理器常會自動把 `--` 換成長短破折號。vLLM "
    "認不得這樣的參數，在載入任何東西之前就會停下來（結束代碼 2）。",
    "dash-typo.fix": "請用兩個半形連字號重新打這個參數：`{fixed}`。",
    "removed-flag.title": "vLLM 已經沒有 `{token}` 這個參數了",
    "removed-flag.why": "這個參數在較新的 vLLM 已經移除了，但 AI 助理寫的指令、或從舊教學複製來的"
    "指令還是常常會用到它。vLLM 會立刻停下來（「unrecognized arguments」，結束代碼 "
    "2）。它原本的功能，不是已經拿掉，就是變成了預設行為。",
    "removed-flag.fix": "刪掉 `{token}`（如果後面有值，也一起刪掉）。",
    "removed-flag:replaced.title": "vLLM 已經沒有 `{token}` 這個參數了；請改用 {replacement}",
    "removed-flag:replaced.why": "這個參數在較新的 vLLM 已經移除了，但 AI "
    "助理寫的指令、或從舊教學複製來的指令還是常常會用到它。vLLM "
    "會立刻停下來（「unrecognized arguments」，結束代碼 2）。",
    "removed-flag:replaced.fix": "把 `{token}` 換成 {replacement}。",
    "unknown-flag.title": "vLLM 沒有 `{token}` 這個參數",
    "unknown-flag.why": "只要遇到不認識的參數，vLLM 在載入模型之前就會停下來（「unrecognized "
    "arguments」，結束代碼 2）。",
    "unknown-flag.fix": "拿掉 `{token}`，或用 `vllm serve --help=all` 找出你原本想用的選項。",
    "unknown-flag:did-you-mean.title": "vLLM 沒有 `{token}` 這個參數（是不是要打 "
    "`{suggestion}`？）",
    "unknown-flag:did-you-mean.why": "只要遇到不認識的參數，vLLM 在啟動時就會停下來（「unrecogniz"
    "ed arguments」，結束代碼 2）；這看起來像是 `{suggestion}` 打錯字了。",
    "unknown-flag:did-you-mean.fix": "改用 `{suggestion}`。",
    "unknown-flag:too-new.title": "`{token}` 需要 vLLM {first_seen} 以上的版本；這台伺服器是 "
    "{version}",
    "unknown-flag:too-new.why": "這個參數從 vLLM {first_seen} 才開始有，較舊的版本會以「unrecogni"
    "zed arguments」停下來。",
    "unknown-flag:too-new.fix": "把 vLLM 升級到 {first_seen} 或更新的版本，或拿掉 `{token}`。",
    "unknown-flag:other-release.title": "`{token}` 不是這個 vLLM 版本的參數",
    "unknown-flag:other-release.why": "有些 vLLM 版本有 `{token}`，但產生這份 log "
    "的版本沒有：參數會隨版本增減，而 vLLM 只要遇到不認識的參數就會在啟動時停下來。",
    "unknown-flag:other-release.fix": "確認安裝的版本（`vllm --version`）和它的參數（`vllm serve "
    "--help=all`）；升級 vLLM，或拿掉 `{token}`。",
    "unknown-flag:stray.title": "指令裡有一個落單的值 `{token}`",
    "unknown-flag:stray.why": "vLLM 在應該出現參數的位置讀到了 `{token}`。常見的原因是替開關型參"
    "數多給了一個值（`--enforce-eager True`），或是換行時把參數弄丟了、行尾少了 `\\`。",
    "unknown-flag:stray.fix": "如果 `{token}` 接在開關型參數後面，就把它刪掉（開關不接值：`--x` "
    "是打開，`--no-x` 是關閉）；不然就補回它原本所屬的參數。",
    "bool-flag-value.title": "`{flag}` 是開關型參數，後面不能接值（收到了「{value}」）",
    "bool-flag-value.why": "從 vLLM 0.8 起，開/關選項都是開關型參數：寫 `{flag}` 代表打開，寫 "
    "`{negative}` 代表關閉。後面多接一個值，vLLM 就會停止啟動。",
    "bool-flag-value.fix": "要打開就只寫 `{flag}`，要關閉就寫 `{negative}`。",
    "bool-flag-value:value-only.title": "有個開關型參數後面被接了值「{token}」",
    "bool-flag-value:value-only.why": "從 vLLM 0.8 起，開/關選項都是開關型參數：寫 `--x` "
    "代表打開，寫 `--no-x` 代表關閉。開關後面多出來的「{token}」會被當成多餘的參數，vLLM "
    "就停止啟動（結束碼 2）。",
    "bool-flag-value:value-only.fix": "刪掉「{token}」；想關閉這個開關，就改寫成 `--no-...`。",
    "invalid-value.title": "`{flag}`：「{value}」不是有效的值",
    "invalid-value.why": "vLLM 在載入任何東西之前，會先檢查每個選項的型別和可選的值；遇到讀不懂的"
    "值，就直接停下來（結束代碼 2）。",
    "invalid-value.fix": "改用錯誤訊息裡列出的值，或參考 `vllm serve --help=all`。",
    "missing-value.title": "`{flag}` 沒有給值",
    "missing-value.why": "這個參數需要一個值，但緊接在後面的是另一個參數，或者指令已經結束了。",
    "missing-value.fix": "幫 `{flag}` 補上值，或把它拿掉。",
    "tp-exceeds-gpus.title": "指令需要 {world} 張 GPU，vLLM 卻只看得到 {gpus} 張",
    "tp-exceeds-gpus.why": "vLLM 會依照張量並行 x 管線並行的配置（world size {world}），每張 GPU "
    "起一個 worker，但目前只看得到 {gpus} 張 GPU（CUDA_VISIBLE_DEVICES 和容器分配的 GPU "
    "都會影響）。",
    "tp-exceeds-gpus.fix": "讓 --tensor-parallel-size x --pipeline-parallel-size 不超過 "
    "{gpus}，或讓所有 GPU 都看得到（檢查 `nvidia-smi -L`、CUDA_VISIBLE_DEVICES、`docker "
    "run --gpus all`）。",
    "tp-exceeds-gpus:other.title": "vLLM 無法把 worker 分配到它看得到的 GPU 上",
    "tp-exceeds-gpus:other.why": "worker 數比看得到的 GPU 多的時候，vLLM 0.11 以前的版本會改用 "
    "Ray 找多節點叢集：沒裝 Ray 就失敗，裝了則會空等 30 分鐘，等一批永遠不會出現的 "
    "GPU；較新的版本則會因為指定了不存在的 GPU 編號而失敗。",
    "tp-exceeds-gpus:other.fix": "讓張量 x 管線 x 資料並行數符合這台機器的 GPU 張數（`nvidia-smi "
    "-L`），並檢查 CUDA_VISIBLE_DEVICES。真的要跨節點服務，請先啟動 Ray，並用 `ray status` "
    "確認。",
    "tp-heads-indivisible.title": "{heads} 個 attention head 無法平均分給 TP {tp}",
    "tp-heads-indivisible.why": "張量並行會把 attention head 平均分給每一張 "
    "GPU，所以張量並行數必須能整除 {heads}。vLLM 在載入任何東西之前就會檢查這一點。",
    "tp-heads-indivisible.fix": "改用能整除 {heads} 的 --tensor-parallel-size：{valid}。多出來的 "
    "GPU 可以拿來跑另一份副本（--data-parallel-size 或再起一個伺服器）。",
    "tp-heads-indivisible:kv.title": "{a} 無法被 {b} 整除（KV head 數和張量並行數）",
    "tp-heads-indivisible:kv.why": "使用 grouped-query attention 時，每張 GPU 要分到整數個 KV "
    "head；TP 比較大時則會把 KV head 複製到多張卡上。所以 KV head 數和 TP "
    "必須有一方能整除另一方。",
    "tp-heads-indivisible:kv.fix": "挑一個能整除模型 config.json 裡 num_key_value_heads 的 "
    "--tensor-parallel-size，或是它的倍數。",
    "quant-on-unquantized.title": "對不是 {method} 量化的模型用了 `--quantization {method}`",
    "quant-on-unquantized.why": "對這種量化方法來說，這個參數是告訴 vLLM "
    "要怎麼讀「已經量化好」的權重，它不會當場幫你量化。vLLM 在 checkpoint 裡找不到 "
    "{method} 的設定檔：裡面是原本的權重。",
    "quant-on-unquantized.fix": "改用這個模型的 {method} 版 checkpoint（名稱常常就是原名加上 "
    "-AWQ 或 -GPTQ），或拿掉 `--quantization {method}`，直接跑原本的權重。想要即時量化，請"
    "改用 `--quantization fp8`。",
    "quant-method-mismatch.title": "用了 `--quantization {flag}`，但 checkpoint 是用 "
    "{checkpoint} 量化的",
    "quant-method-mismatch.why": "量化過的 checkpoint 只能用它自己的量化方法來讀，所以 vLLM "
    "拒絕啟動。",
    "quant-method-mismatch.fix": "拿掉 `--quantization`：vLLM 會從 checkpoint 自動認出 "
    "{checkpoint}，並自己挑最快的 kernel。",
    "quant-unsupported-gpu.title": "{method} 需要運算能力（compute capability）{needed}；這張 "
    "GPU 只有 {have}",
    "quant-unsupported-gpu.why": "這個版本的 vLLM 沒有給這一代 GPU 用的 {method} kernel。",
    "quant-unsupported-gpu.fix": "改用這張 GPU 支援的量化方法的 checkpoint（GPTQ 從 6.0 起、AWQ "
    "從 7.5 起可用）、用更多張 GPU 跑未量化的模型，或換一張較新的 GPU。",
    "quant-unsupported-gpu:dtype.title": "{method} 的 kernel 不能用 {dtype} 執行",
    "quant-unsupported-gpu:dtype.why": "這個版本的 vLLM 裡，{method} kernel 只接受這些 "
    "activation 型別：{supported}。",
    "quant-unsupported-gpu:dtype.fix": "加上 `--dtype half`，或拿掉 `--quantization "
    "{method}`，讓 vLLM 自己挑能用 {dtype} 執行的 kernel（Marlin）。",
    "quant-unsupported-gpu:platform.title": "{device} 上不能用 {method} 量化",
    "quant-unsupported-gpu:platform.why": "這個 vLLM 版本沒有給這種裝置用的 {method} kernel。",
    "quant-unsupported-gpu:platform.fix": "改用這個裝置支援的量化方法的 checkpoint，或用未量化的"
    "模型。",
    "dtype-unsupported-gpu.title": "bfloat16 需要運算能力 8.0；{gpu} 只有 {have}",
    "dtype-unsupported-gpu.why": "Ampere 之前的 GPU（V100、T4）不支援 bfloat16，要求用它時 vLLM "
    "會停下來。",
    "dtype-unsupported-gpu.fix": "改用 `--dtype half`（float16）。用 bfloat16 訓練的模型通常在 "
    "float16 下也能正常跑，但請抽查幾個回答，看有沒有亂碼。",
    "dtype-unsupported-model.title": "{model_type} 模型不能用 float16 跑",
    "dtype-unsupported-model.why": "這個模型家族在 float16 下數值會溢位，所以 vLLM "
    "會直接拒絕（「Numerical instability」）。",
    "dtype-unsupported-model.fix": "改用 `--dtype bfloat16`（需要運算能力 8.0：A100、L4、H100 "
    "等），舊的 GPU 則用 `--dtype float32`（權重記憶體會變成兩倍）。",
    "batched-tokens-below-model-len.title": "關閉 chunked prefill 時，--max-num-batched-tokens "
    "{mbt} 小於 max-model-len {max_model_len}",
    "batched-tokens-below-model-len.why": "沒有 chunked prefill 時，整段 prompt "
    "必須塞進單一步驟的 token 預算裡，所以 vLLM 拒絕啟動。",
    "batched-tokens-below-model-len.fix": "把 --max-num-batched-tokens 調到至少 "
    "{max_model_len}、把 --max-model-len 降到 {mbt}，或重新打開 chunked prefill（拿掉 "
    "--no-enable-chunked-prefill）。",
    "batched-tokens-below-num-seqs.title": "--max-num-batched-tokens {mbt} 小於 --max-num-seqs "
    "{seqs}",
    "batched-tokens-below-num-seqs.why": "每個執行中的序列在每一步至少要分到一個 token "
    "的預算，所以預算不能少於序列數。",
    "batched-tokens-below-num-seqs.fix": "把 --max-num-batched-tokens 調到至少 {seqs}，或把 "
    "--max-num-seqs 降到 {mbt} 以下。",
    "model-len-exceeds-model.title": "--max-model-len {asked} 超過模型支援的長度（{limit}）",
    "model-len-exceeds-model.why": "模型的 config.json 設定了 {key} = {limit}。超過訓練時的長度，"
    "模型會輸出亂碼或直接出錯，所以 vLLM 拒絕啟動。",
    "model-len-exceeds-model.fix": "把 --max-model-len 設成 {limit} "
    "以下，或拿掉這個參數（預設就是 {limit}）。注意：vLLM 會把 `32k` 讀成 32000，`32K` "
    "才是 32768。",
    "gpu-memory-utilization-range.title": "--gpu-memory-utilization {util} 不在 (0, 1] 的範圍內",
    "gpu-memory-utilization-range.why": "它代表 vLLM 可以使用每張 GPU 記憶體的「比例」，不是百分"
    "比，也不是 GiB。",
    "gpu-memory-utilization-range.fix": "改用像 0.9 這樣的比例值。",
    "gpu-memory-busy.title": "GPU 上只剩 {free} / {total} GiB 可用；vLLM 需要 {requested} GiB",
    "gpu-memory-busy.why": "vLLM 啟動時會佔用整張 GPU 的 --gpu-memory-utilization（{util}），但已"
    "經有別的東西佔了大約 {used} GiB：另一個 vLLM、沒關掉的行程、notebook 或螢幕顯示。",
    "gpu-memory-busy.fix": "用 `nvidia-smi` 找出那個行程並停掉它；或是要共用這張 GPU，就把 "
    "--gpu-memory-utilization 降到 {fit_util} 以下。",
    "gpu-memory-busy:profiling.title": "vLLM 在量測 GPU 記憶體時，記憶體用量被別人改變了",
    "gpu-memory-busy:profiling.why": "同一張 GPU 上的其他行程在 vLLM 啟動量測期間佔用或釋放了記憶"
    "體，所以它算出來的 KV cache 大小不可信。",
    "gpu-memory-busy:profiling.fix": "讓 vLLM 獨佔這張 GPU（用 `nvidia-smi` 檢查），或等 vLLM "
    "就緒後再啟動其他工作。",
    "weights-dont-fit.title": "模型權重放不進 GPU 記憶體",
    "weights-dont-fit.why": "vLLM 在載入權重時就用完了 GPU 記憶體，連 KV cache "
    "都還沒配置：模型對分配給 vLLM 的記憶體來說太大了。",
    "weights-dont-fit.fix": "用更多張 GPU 分攤模型（--tensor-parallel-size）、改用量化的 "
    "checkpoint（AWQ、GPTQ、FP8）或較小的模型，或釋放其他行程佔用的記憶體。`servetune "
    "check` 可以在啟動前先估算放不放得下。",
    "kv-cache-too-small.title": "KV cache 放不下一個 {max_model_len} token 的請求",
    "kv-cache-too-small.why": "載入權重之後，vLLM 至少要留下足夠一個完整長度請求使用的 KV "
    "cache。{max_model_len} 個 token 放不下；常見原因是沒有設定 "
    "--max-model-len，於是直接採用了模型完整的上下文長度。",
    "kv-cache-too-small.fix": "把 --max-model-len 設小一點（例如 8192）、調高 "
    "--gpu-memory-utilization、使用 --kv-cache-dtype fp8，或用 --tensor-parallel-size 加 "
    "GPU。",
    "kv-cache-too-small:estimate.title": "KV cache 大約只放得下 {estimate} 個 token；max-model-le"
    "n 卻是 {max_model_len}",
    "kv-cache-too-small:estimate.why": "載入權重之後，vLLM 至少要留下足夠一個 max-model-len "
    "長度請求使用的 KV cache。剩下的空間大約只夠 {estimate} 個 token，所以 vLLM "
    "拒絕啟動。常見原因是 --max-model-len 沿用了模型完整的上下文長度。",
    "kv-cache-too-small:estimate.fix": "把 --max-model-len 設成 {estimate} "
    "以下，或騰出更多空間：調高 --gpu-memory-utilization（或 --kv-cache-memory-bytes）、使"
    "用 --kv-cache-dtype fp8，或用 --tensor-parallel-size 加 GPU。",
    "kv-cache-too-small:gib.title": "一個 {max_model_len} token 的請求需要 {needed} GiB 的 KV "
    "cache，但只有 {available} GiB",
    "kv-cache-too-small:gib.why": "扣掉權重之後，vLLM 至少要放得下一個 max-model-len "
    "長度的請求的 KV cache，不然就不啟動。剩下的空間大約放得下 {fit} 個 token。"
    "常見原因是沒有設定 --max-model-len，直接用了模型完整的 context 長度。",
    "kv-cache-too-small:gib.fix": "把 --max-model-len 設成 {fit} 以下，或騰出更多空間：調高 "
    "--gpu-memory-utilization（或 --kv-cache-memory-bytes）、使用 --kv-cache-dtype fp8，或用 "
    "--tensor-parallel-size 加 GPU。",
    "kv-cache-too-small:none.title": "沒有剩下任何記憶體給 KV cache",
    "kv-cache-too-small:none.why": "權重加上啟動量測時的 activation，已經用光了 vLLM "
    "能用的記憶體，完全沒有空間留給 KV cache。",
    "kv-cache-too-small:none.fix": "調高 --gpu-memory-utilization、調低 --max-num-batched-tokens "
    "和 --max-num-seqs（降低量測時的尖峰），或用更多張 GPU、量化的 checkpoint。",
    "out-of-memory.title": "GPU 記憶體不足",
    "out-of-memory.why": "GPU 記憶體配置失敗。啟動時通常發生在依設定的批次大小做量測或擷取 CUDA "
    "graph 的時候；服務期間則多半是一次湧入大量長請求。",
    "out-of-memory.fix": "調低 --max-num-seqs 和 --max-num-batched-tokens、試試 "
    "--enforce-eager（不用 CUDA graph）、有其他行程共用 GPU 時調低 "
    "--gpu-memory-utilization，或加 GPU、改用量化的 checkpoint。",
    "port-in-use.title": "連接埠 {port} 已經被佔用",
    "port-in-use.why": "vLLM 在載入模型之前就會先綁定連接埠，而已經有別的行程（常常是前一個還在跑"
    "的 vLLM）在監聽這個連接埠。",
    "port-in-use.fix": "停掉佔用它的行程（用 `ss -ltnp | grep :{port}` 找出來），或改用別的 "
    "`--port` 啟動 vLLM。",
    "model-not-found.title": "找不到模型 `{model}`",
    "model-not-found.why": "vLLM 既找不到含有 config.json 的本機資料夾，也找不到同名的 Hugging "
    "Face 儲存庫：可能是打錯字、相對路徑是從別的目錄算的，或是私人儲存庫卻沒有提供 token。",
    "model-not-found.fix": "到 huggingface.co 確認名稱，或檢查路徑（`ls {model}/config.json`）；"
    "私人儲存庫請設定 HF_TOKEN。",
    "model-not-found:offline.title": "本機快取裡沒有模型 `{model}`，又連不上 Hugging Face Hub",
    "model-not-found:offline.why": "vLLM 在離線狀態下執行（HF_HUB_OFFLINE=1 "
    "或沒有網路），而這個模型從來沒有下載到它讀取的 Hugging Face 快取裡。",
    "model-not-found:offline.fix": "在有網路的地方先下載（`huggingface-cli download "
    "{model}`），再把那個快取（HF_HOME）或本機資料夾交給 vLLM，或開放網路連線。",
    "model-access-denied.title": "沒有權限存取受限（gated）模型 `{model}`",
    "model-access-denied.why": "這個儲存庫是受限或私人的。Hugging Face 拒絕了下載（401/403）：沒"
    "有送出 token、token 無效，或該帳號還沒同意模型的授權條款。",
    "model-access-denied.fix": "先到 huggingface.co 的模型頁面同意授權條款，再把 token 交給 "
    "vLLM：`export HF_TOKEN=hf_...`（或 `--hf-token`）。細粒度（fine-grained）token "
    "需要開啟存取受限儲存庫的權限。",
    "architecture-unsupported.title": "這個版本的 vLLM 不能執行 {arch} 架構",
    "architecture-unsupported.why": "vLLM 沒有這個模型架構的實作，或是匯入它的時候失敗了。",
    "architecture-unsupported.fix": "查看 vLLM 的支援模型清單：較新的模型請升級 vLLM，也可以試試 "
    "`--model-impl transformers`；模型自帶程式碼的話，加上 `--trust-remote-code`。",
    "gguf-arch-unsupported.title": "這個版本 vLLM 的 GGUF 載入器不認得 {model_type} 架構",
    "gguf-arch-unsupported.why": "GGUF 檔用自己的名稱標示架構，而這個版本的載入器"
    "（vLLM 的，或 vLLM 用來讀取設定的 transformers 的）沒有 {model_type} 的對應："
    "還沒讀任何權重就停止載入了。",
    "gguf-arch-unsupported.fix": "把 vLLM（和 transformers）升級到 GGUF 載入器認得 "
    "{model_type} 的版本（`servetune check` 會說是哪一版），或改用原本的 safetensors "
    "檢查點，或它的 AWQ/GPTQ 版本。",
    "architecture-unsupported:dropped.title": "vLLM 在 v{until} 之後就不再支援 {arch}",
    "architecture-unsupported:dropped.why": "這個架構已經從 vLLM 移除，這個版本無法載入它。",
    "architecture-unsupported:dropped.fix": "用 vLLM {until} 或更舊的版本來跑這個模型，或改用較新"
    "的模型家族。",
    "architecture-unsupported:plugin.title": "{arch} 已經從 vLLM 本體移到外掛",
    "architecture-unsupported:plugin.why": "這個版本的 vLLM 本身不再內建這個架構。",
    "architecture-unsupported:plugin.fix": "安裝錯誤訊息裡提到的外掛，再重新啟動。",
    "architecture-unsupported:model-type.title": "目前安裝的 transformers 不認得模型類型 "
    "`{model_type}`",
    "architecture-unsupported:model-type.why": "這個模型比 vLLM 環境裡的 transformers "
    "還新，連設定檔都讀不了。",
    "architecture-unsupported:model-type.fix": "升級 vLLM，連帶升級 transformers（`pip install "
    "-U vllm`）；如果你的 vLLM 版本允許，也可以只升級 transformers。",
    "trust-remote-code-required.title": "這個模型需要執行它自己的程式碼：請加上 --trust-remote-co"
    "de",
    "trust-remote-code-required.why": "它的設定或模型程式碼放在模型的儲存庫裡，而不是在 "
    "transformers 裡；vLLM 只有在你明確允許時才會執行這些程式碼。",
    "trust-remote-code-required.fix": "如果你信任那個儲存庫的程式碼（請先讀過），就加上 "
    "`--trust-remote-code`。",
    "nccl-error.title": "GPU 之間的通訊函式庫 NCCL 出錯了",
    "nccl-error.why": "多張 GPU 的 worker 之間無法建立連線。在容器裡通常是共享記憶體（/dev/shm）"
    "太小或缺少 IPC 權限；在實體主機上則多半是 GPU 點對點（P2P）或網路介面的問題。",
    "nccl-error.fix": "Docker 請加上 `--ipc=host`（或 `--shm-size=16g`）。用 `NCCL_DEBUG=INFO` "
    "重跑一次看原因；試試 `NCCL_P2P_DISABLE=1`；跨節點時請設定 `NCCL_SOCKET_IFNAME` 和 "
    "`GLOO_SOCKET_IFNAME`。",
    "nccl-timeout.title": "GPU 之間的一次集合通訊卡住了，直到 torch 的 NCCL watchdog 判定逾時",
    "nccl-timeout.why": "torch 的 watchdog 發現 GPU 之間的一次 {op}（這個 process group 的第 {seq} "
    "次集合通訊）超過了群組的逾時時間 {timeout_s} 秒仍未完成。引擎的每一步都要等它，所以引擎卡住，"
    "接著 torch 會把整個行程結束：伺服器從此不再服務。啟動很久之後才發生時，通常是某一個 rank "
    "停了：某個 worker 當掉或某張 GPU 停擺（它自己的錯誤在它的那幾行裡），或節點之間的網路斷了。",
    "nccl-timeout.fix": "在逾時之前，找其他 rank 那幾行裡它們自己的錯誤"
    "（記憶體不足、例外）並先解決；"
    "用 `dmesg` 和 `nvidia-smi` 檢查有沒有 GPU 掉線（Xid 錯誤）；用 `NCCL_DEBUG=INFO` 重跑，"
    "跨節點時檢查 `NCCL_SOCKET_IFNAME`。之後重新啟動伺服器，並用會在它結束時自動重啟的 "
    "supervisor 來執行。",
    "nccl-timeout:first.title": "GPU 之間的第一次集合通訊就沒有完成：torch 的 NCCL watchdog "
    "判定逾時",
    "nccl-timeout:first.why": "NCCL 已經建好 communicator，但 GPU 之間的第一次 {op}（這個 "
    "process group 的第 {seq} 次集合通訊）沒有在群組的逾時時間 {timeout_s} 秒內完成："
    "這些 GPU 無法用 NCCL 選的方式互相連通。通常是機器宣稱支援、實際上卻做不到的 PCIe "
    "點對點（P2P）傳輸（開著 PCIe ACS 或 IOMMU、虛擬機、部分消費級主機板），或節點之間的網路。",
    "nccl-timeout:first.fix": "試試 `NCCL_P2P_DISABLE=1`（搭配 `--disable-custom-all-reduce`）；"
    "用 `nvidia-smi topo -m` 檢查拓撲，關掉 PCIe ACS（或把 IOMMU 設成 passthrough）；用 "
    "`NCCL_DEBUG=INFO` 重跑，看 NCCL 選了哪種傳輸方式；跨節點時設定 `NCCL_SOCKET_IFNAME`，"
    "沒有可用的 InfiniBand 時設 `NCCL_IB_DISABLE=1`。",
    "engine-init-failed.title": "vLLM 啟動失敗",
    "engine-init-failed.why": "證據那一行的錯誤讓 vLLM 停了下來。servetune "
    "目前還沒有針對這個錯誤的具體建議。",
    "engine-init-failed.fix": "閱讀 log 裡那一行上方的 traceback，到 vLLM 的 GitHub issues "
    "搜尋這段訊息，並設定 `VLLM_LOGGING_LEVEL=DEBUG` 重跑，取得更多細節。",
    # --- 為使用者貼上的片段而加（issue 8） ---
    "tp-exceeds-gpus:ray.title": "這個指令需要 {world} 張 GPU，但 Ray 分配不出來",
    "tp-exceeds-gpus:ray.why": "vLLM 會替張量平行 x 管線平行的每個 worker 向 Ray 要一張 GPU，"
    "並等待（最多 30 分鐘）這個 placement group 就緒；Ray 叢集裡沒有 {world} 張空出來、"
    "又在 vLLM 找得到的地方的 GPU。",
    "tp-exceeds-gpus:ray.fix": "先用 `ray status` 和 `ray list nodes` 確認：叢集需要 {world} "
    "張空閒 GPU。把 --tensor-parallel-size x --pipeline-parallel-size 降到叢集實際有的數量，"
    "或把缺的 worker 節點開起來，並在每個節點把 VLLM_HOST_IP 設成 Ray 使用的位址。",
    "quant-tp-shape.title": "量化層分給每張 GPU 的寬度（{size}）不是 kernel 區塊（{tile}）的倍數",
    "quant-tp-shape.why": "張量平行會把每個權重矩陣平均切成 TP 份，每張 GPU 拿一份。量化 kernel"
    "（GPTQ、AWQ 用的 Marlin，或 FP8 的區塊）以 {tile} 為一個區塊來算，而這一份（{what} = "
    "{size}）切不成完整的區塊，所以 vLLM 在建立模型層的時候就停下來了。",
    "quant-tp-shape.fix": "換一個 --tensor-parallel-size（比較小的 TP "
    "讓每張 GPU 分到比較寬的一份），或改用另一種 kernel：用 `--quantization gptq` 或 "
    "`--quantization awq` 取代 Marlin"
    "（比較慢，但沒有這個限制）。",
    "quant-tp-shape:sizes.title": "TP {tp} 時，量化層分給每張 GPU 的寬度（{width} 中的 {size}）"
    "不是 {tile} 的倍數",
    "quant-tp-shape:sizes.why": "張量平行會把每個權重矩陣平均切成 TP 份。量化 kernel（GPTQ、AWQ "
    "用的 Marlin，或 FP8 的區塊）以 {tile} 為一個區塊來算，而 {width} / {tp} = {size} "
    "切不成完整的區塊，所以 vLLM 在建立模型層的時候就停下來了。",
    "quant-tp-shape:sizes.fix": "改用能讓每份寬度維持 {tile} 倍數的 --tensor-parallel-size："
    "{valid}；或維持 TP {tp}，改用另一種 kernel：用 `--quantization gptq` 或 "
    "`--quantization awq` 取代 Marlin（比較慢，但沒有這個限制）。",
    "quant-tp-shape:block.title": "FP8 區塊量化層分給每張 GPU 的寬度（{size}）不是 {tile} "
    "寬區塊的倍數",
    "quant-tp-shape:block.why": "這個 checkpoint 以 {tile} 為一個區塊量化（{what}），而張量平行會把"
    "每個權重矩陣切成 TP 份；在這個張量平行大小下，切口落在區塊中間，vLLM 沒辦法載入。",
    "quant-tp-shape:block.fix": "把 --tensor-parallel-size 調小，多出來的 GPU 改用 "
    "--pipeline-parallel-size 或 --data-parallel-size；MoE 模型可以試試 "
    "--enable-expert-parallel，它切分的是 expert，而不是權重。",
    "quant-tp-shape:aligned.title": "在這個張量平行大小下，量化層沒辦法平均切開",
    "quant-tp-shape:aligned.why": "張量平行會把每個權重矩陣切成 TP 份，而量化 kernel "
    "要求每一份都是完整的區塊（或量化分組）數；在這個大小下不是。",
    "quant-tp-shape:aligned.fix": "換一個 --tensor-parallel-size（通常是比較小的），或改用另一種 "
    "kernel：用 `--quantization gptq` 或 `--quantization awq` 取代 Marlin。",
    "weights-dont-fit:negative.title": "權重佔滿了記憶體，KV cache 沒有空間（{available} GiB）",
    "weights-dont-fit:negative.why": "vLLM 最多只用 GPU 記憶體的 --gpu-memory-utilization。"
    "扣掉權重和 profiling 時的 activation 高峰之後，留給 KV cache 的是 {available} "
    "GiB，已經小於零：光是權重（這張 GPU 分到的那一份）就幾乎或已經超過這個額度。",
    "weights-dont-fit:negative.fix": "用更多 GPU 分攤模型（--tensor-parallel-size）、改用量化過的"
    " checkpoint；如果 GPU 沒有跟別人共用，可以調高 --gpu-memory-utilization，或調低 "
    "--max-num-batched-tokens 讓 activation 高峰小一點。",
    "weights-dont-fit:no-room.title": "KV cache 沒有空間：權重之後只剩 {available} GiB",
    "weights-dont-fit:no-room.why": "扣掉權重和 profiling 時的 activation 高峰之後，"
    "--gpu-memory-utilization 的額度只剩 {available} GiB，連一個 KV cache 區塊都放不下。"
    "對 vLLM 分到的記憶體來說，權重太大了。",
    "weights-dont-fit:no-room.fix": "用更多 GPU 分攤模型（--tensor-parallel-size）、改用量化過的 "
    "checkpoint；如果 GPU 沒有跟別人共用，可以調高 --gpu-memory-utilization，或調低 "
    "--max-num-batched-tokens 讓 activation 高峰小一點。",
    "out-of-memory:loading.title": "載入權重的時候 GPU 記憶體不足",
    "out-of-memory:loading.why": "vLLM 在建立模型、把權重複製到 GPU 的時候配置記憶體失敗："
    "這張 GPU 分到的權重，放不進扣掉其他程式佔用之後剩下的記憶體。",
    "out-of-memory:loading.fix": "用更多 GPU 分攤模型（--tensor-parallel-size）、改用量化過的 "
    "checkpoint 或較小的模型，並用 `nvidia-smi` 確認沒有其他程式佔著這張 GPU。",
    "out-of-memory:repacking.title": "重新排列量化權重的時候 GPU 記憶體不足",
    "out-of-memory:repacking.why": "載入之後，vLLM 會把量化權重轉成 kernel（Marlin、FP8）"
    "需要的排列方式；轉換的那一刻，同一層的新舊兩份會同時在記憶體裡，這個高峰放不下。",
    "out-of-memory:repacking.fix": "多留一點餘裕：用 --tensor-parallel-size 加 GPU、"
    "釋放其他程式佔用的記憶體，或直接使用已經是該格式的 checkpoint（例如 FP8 checkpoint，"
    "而不是在 16 位元模型上加 `--quantization fp8`）。",
    "out-of-memory:profiling.title": "profiling 的時候 GPU 記憶體不足",
    "out-of-memory:profiling.why": "決定 KV cache 大小之前，vLLM 會先跑一個 "
    "--max-num-batched-tokens 大小的批次（視覺模型還會帶最大的圖片）來量 activation "
    "高峰；這個批次在權重旁邊放不下。",
    "out-of-memory:profiling.fix": "調低 --max-num-batched-tokens 和 --max-num-seqs、用 "
    "--limit-mm-per-prompt 限制圖片數量，或加 GPU、改用量化過的 checkpoint。",
    "out-of-memory:graphs.title": "擷取 CUDA graph 的時候 GPU 記憶體不足",
    "out-of-memory:graphs.why": "決定 KV cache 大小之後，vLLM 會為各種批次大小錄製 CUDA graph；"
    "剩下的記憶體不夠這些 graph 使用。",
    "out-of-memory:graphs.fix": "加上 --enforce-eager（不用 CUDA graph，decode 會慢一些）、"
    "調低 --max-num-seqs（graph 少一點），或把 --gpu-memory-utilization 稍微調低，"
    "讓 graph 放得進 KV cache 旁邊。",
    "out-of-memory:serving.title": "服務請求的時候 GPU 記憶體不足",
    "out-of-memory:serving.why": "伺服器已經啟動、引擎正在跑請求時配置記憶體失敗：某一步的 "
    "activation（同一批裡的長 prompt、同時很多序列、大圖片）比啟動時 profiling 量到的還多，"
    "放不進權重和 vLLM 預留的 KV cache 旁邊；或是啟動之後有其他程式佔用了 GPU 記憶體。",
    "out-of-memory:serving.fix": "調低 --max-num-batched-tokens（prefill 切小一點）和 "
    "--max-num-seqs，或把 --gpu-memory-utilization 稍微調低，給 activation 多留空間；"
    "用 `nvidia-smi` 確認沒有其他程式在用這張 GPU。之後重新啟動伺服器。",
    "out-of-memory:kv-cache.title": "配置 KV cache 的時候 GPU 記憶體不足",
    "out-of-memory:kv-cache.why": "vLLM 依照量到的可用記憶體決定 KV cache 大小，"
    "但真正配置時失敗了：中間記憶體用量變了，通常是有其他程式在用同一張 GPU。",
    "out-of-memory:kv-cache.fix": "讓 vLLM 獨佔這張 GPU（用 `nvidia-smi` 查看），調低 "
    "--gpu-memory-utilization，或直接設定 --kv-cache-memory-bytes。",
    "nccl-error:system.title": "GPU 之間建立連線時，NCCL 出現「unhandled system error」",
    "nccl-error:system.why": "NCCL 底下的系統呼叫失敗了。在容器裡幾乎都是共享記憶體太小"
    "（/dev/shm 預設只有 64 MB）或沒有 IPC 權限；不然就是節點之間的網路介面或 InfiniBand "
    "設定有問題。",
    "nccl-error:system.fix": "Docker 請加上 `--ipc=host`（或 `--shm-size=16g`）；Kubernetes "
    "請在 /dev/shm 掛一個放在記憶體的 emptyDir。用 `NCCL_DEBUG=INFO` 重跑可以看到失敗的呼叫；"
    "跨節點時設定 `NCCL_SOCKET_IFNAME` 和 `GLOO_SOCKET_IFNAME`，沒有 InfiniBand 就設 "
    "`NCCL_IB_DISABLE=1`。",
    "nccl-error:cuda.title": "GPU 之間通訊時，NCCL 出現「unhandled cuda error」",
    "nccl-error:cuda.why": "NCCL 裡的 CUDA 呼叫失敗了：最常見的是機器宣稱支援、實際上卻做不到的 "
    "GPU peer-to-peer（PCIe 交換器、虛擬機、IOMMU），或是驅動程式太舊，跟不上 vLLM "
    "附帶的 CUDA 和 NCCL。",
    "nccl-error:cuda.fix": "試試 `NCCL_P2P_DISABLE=1`（搭配 `--disable-custom-all-reduce`）；用 "
    "`NCCL_DEBUG=INFO` 重跑看是哪個呼叫失敗；檢查 `nvidia-smi topo -m`，驅動程式比 vLLM "
    "的 CUDA 需要的舊就更新它。",
    "process-killed.title": "行程被外部以 SIGKILL 終止，最可能是主機記憶體不足",
    "process-killed.why": "不是 vLLM 自己出錯：有東西用 SIGKILL 結束了它，shell 會顯示 "
    "`Killed`，docker 或 Kubernetes 則顯示 exit code 137（`OOMKilled`）。通常是核心的 OOM "
    "killer 或容器的記憶體上限，因為主機 RAM 用完了：vLLM 載入時會把 checkpoint 分片放在主機"
    "記憶體裡，V0 會替 KV cache 保留 CPU swap 空間（--swap-space，每張 GPU 4 GiB），而在 GPU "
    "與主機共用記憶體的裝置上（Jetson、Grace Hopper），權重和 KV cache 本身也都是主機記憶體。",
    "process-killed.fix": "用 `dmesg | grep -i 'killed process'`（或 `kubectl describe pod`、"
    "`docker inspect` 看 OOMKilled）確認。給容器或機器更多記憶體、調低 --swap-space；在共用"
    "主機記憶體的裝置上，調低 --gpu-memory-utilization 和 --max-model-len。",
    "dtype-unsupported-gpu:cut.title": "bfloat16 需要運算能力 8.0；這張 GPU 不到",
    "dtype-unsupported-gpu:cut.why": "vLLM 停在它的 bfloat16 檢查"
    "（`_check_if_gpu_supports_dtype`），這個檢查只會拒絕 Ampere 之前的 GPU（V100、T4、"
    "Turing 系列）使用 bfloat16；片段在錯誤訊息之前就結束了。",
    "dtype-unsupported-gpu:cut.fix": "改用 `--dtype half`（float16）。用 bfloat16 訓練的模型"
    "通常在 float16 下也能正常跑，但請抽查幾個回答，看有沒有亂碼。",
    "kv-cache-too-small:blocks.title": "KV cache 只放得下 {estimate} 個 token（{blocks} 個 "
    "block）；放不下一個 max-model-len 長度的請求",
    "kv-cache-too-small:blocks.why": "vLLM 在建立 KV cache 時停了下來。它在這一步最先檢查的，"
    "就是 profiling 算出的 block 能不能放下一個 max-model-len 長度的請求；這些 block 只放得下 "
    "{estimate} 個 token。片段在錯誤訊息之前就結束了，那則訊息會寫出它需要的長度。",
    "kv-cache-too-small:blocks.fix": "把 --max-model-len 設成 {estimate} 以下，或騰出更多空間："
    "調高 --gpu-memory-utilization、使用 --kv-cache-dtype fp8，或用 --tensor-parallel-size "
    "加 GPU。",
    "out-of-memory:sleep-mode.title": "vLLM 從休眠模式醒來時 GPU 記憶體不足",
    "out-of-memory:sleep-mode.why": "休眠模式下，vLLM 在兩輪 rollout 之間交還 GPU 記憶體，"
    "`wake_up` 時再用它的 CuMemAllocator 全部配置回來；旁邊的訓練程式仍佔著 GPU"
    "（權重、梯度、optimizer 狀態、快取的區塊），剩下的不夠。",
    "out-of-memory:sleep-mode.fix": "喚醒 vLLM 之前先釋放訓練程式的 GPU 記憶體（把參數和 "
    "optimizer 狀態 offload、`torch.cuda.empty_cache()`），調低 vLLM 的 "
    "gpu_memory_utilization 讓兩者放得下，或讓 rollout 引擎用自己的 GPU。",
    "engine-dead-at-serving.title": "伺服器已經啟動，之後它的引擎死了",
    "engine-dead-at-serving.why": "API 伺服器已經啟動並接受請求；之後它背後的引擎行程停了，"
    "從此每個請求都失敗（500、EngineDeadError）。vLLM 0.5-0.8 在第一個這樣的請求時會自己結束 "
    "API 伺服器（'terminating server process'）。引擎自己的錯誤印在第一行這類訊息之前；"
    "這段摘錄裡沒有。",
    "engine-dead-at-serving.fix": "在完整的 log 裡，往第一行 'dead' 訊息上方找引擎的第一個錯誤"
    "（常見的是一波長請求讓 GPU 記憶體不足：調低 --max-num-seqs、--max-num-batched-tokens "
    "或 --gpu-memory-utilization），然後重啟伺服器；用會在它結束時重啟它的 supervisor 來跑。",
    "engine-dead-at-serving:cause.title": "伺服器已經啟動，這個錯誤讓它的引擎停了",
    "engine-dead-at-serving:cause.why": "API 伺服器已經啟動，引擎正在跑請求，這時根本原因裡的錯誤"
    "讓引擎停了：之後的每個請求都會失敗（500、EngineDeadError），或伺服器自己結束了。"
    "前一個診斷說明了這個錯誤的意思。",
    "engine-dead-at-serving:cause.fix": "照前一個診斷的說明解決那個錯誤，再重新啟動伺服器；"
    "用會在它結束時自動重啟的 supervisor 來執行，並留意同樣的負載會不會再引發這個錯誤。",
    "engine-dead-at-serving:timeout.title": "引擎在服務時停了：它的請求有一步逾時",
    "engine-dead-at-serving:timeout.why": "API 伺服器已經啟動，引擎正在跑請求；vLLM V0 的引擎"
    "迴圈給每一步 VLLM_ENGINE_ITERATION_TIMEOUT_S（預設 60 秒），超過就把引擎標為出錯：之後"
    "每個請求都失敗。一步跑這麼久，通常是 GPU 之間的集體通訊（NCCL）卡住，或 GPU 停住了。",
    "engine-dead-at-serving:timeout.fix": "在逾時訊息上方找 NCCL 或 GPU 的錯誤並先解決它；如果"
    "只是每一步很慢（非常長的 prompt、CPU offload），調高 VLLM_ENGINE_ITERATION_TIMEOUT_S。"
    "然後重啟伺服器，用會在它結束時重啟它的 supervisor 來跑。",
    # --- 文字報告的標籤 ---
    "report.status": "狀態：",
    "report.root_cause": "根本原因：",
    "report.why": "原因：",
    "report.fix": "解法：",
    "report.evidence": "證據：",
    "report.reported": "vLLM 回報：",
    "report.version": "vLLM {version}",
    "report.kv_cache": "KV cache {tokens:,} 個 token",
    "report.concurrency": "最大並行 {concurrency:.2f}x",
    "report.weights": "權重 {gib:g} GiB",
    "report.kv_memory": "KV cache 記憶體 {gib:g} GiB",
}
