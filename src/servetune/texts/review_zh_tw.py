"""What `check` says, in Traditional Chinese (Taiwan): the zh-TW twin of `review_en`.

Same keys and `str.format` placeholders as the English table. Written for engineers who
learned vLLM tuning from Taiwanese articles, so it uses their vocabulary (for quantization, tensor
parallelism, continuous batching, time to first token and so on) and Taiwan usage throughout.
Flags, commands, rule ids, numbers and the error strings quoted from vLLM stay in ASCII, so they
can be matched against a log or pasted into a terminal as they are.
"""

# RUF001: the strings are Chinese prose; its full-width comma, colon, semicolon and parentheses
# are the correct punctuation there, not confusable stand-ins for ASCII.

from __future__ import annotations

TEXTS: dict[str, str] = {
    "dash-typo.title": "`{token}` 開頭是排版用的破折號，不是 `--`",
    "dash-typo.why": (
        "聊天軟體和文書處理器常會自動把 `--` 換成長短破折號（– 或 —）。vLLM "
        "認不得這樣的參數，會直接拒絕啟動（結束代碼 2，「unrecognized arguments」）。"
    ),
    "dash-typo.fix": "請用兩個半形連字號重新打這個參數：`{fixed}`。",
    "dash-typo.ask_ai": (
        "你給我的指令裡，`{token}` 開頭是排版用的破折號，vLLM 不接受。"
        "請用純文字重新給我一次完整的指令，每個參數都用半形的 `--`。"
    ),
    "unknown-flag.title": "vLLM {version} 沒有 `{token}` 這個參數",
    "unknown-flag.why": (
        "只要遇到不認識的參數，vLLM 在啟動時就會以「unrecognized arguments」停下來。"
    ),
    "unknown-flag.fix": "拿掉 `{token}`，或用 `vllm serve --help=all` 找出你原本想用的選項。",
    "unknown-flag.ask_ai": (
        "vLLM {version} 沒有 `{token}` 這個參數。你原本想用的是哪一個真正存在的"
        " `vllm serve` 選項？還是其實根本不需要它？"
    ),
    "unknown-flag:did-you-mean.title": (
        "vLLM {version} 沒有 `{token}` 這個參數（是不是要打 `{suggestion}`？）"
    ),
    "unknown-flag:did-you-mean.why": (
        "只要遇到不認識的參數，vLLM 在啟動時就會以「unrecognized arguments」停下來；"
        "這看起來像是 `{suggestion}` 打錯字了。"
    ),
    "unknown-flag:did-you-mean.fix": "改用 `{suggestion}`。",
    "unknown-flag:did-you-mean.ask_ai": (
        "vLLM {version} 沒有 `{token}`。你指的是不是 `{suggestion}`？也請再確認一次你想給它的值。"
    ),
    "unknown-flag:too-new.title": (
        "`{token}` 需要 vLLM {first_seen} 以上的版本（目前以 {version} 檢查）"
    ),
    "unknown-flag:too-new.why": (
        "這個參數從 vLLM {first_seen} 才開始有；vLLM {version} 會以「unrecognized "
        "arguments」拒絕啟動。"
    ),
    "unknown-flag:too-new.fix": "把 vLLM 升級到 {first_seen} 或更新的版本，或拿掉 `{token}`。",
    "unknown-flag:too-new.ask_ai": (
        "我的 vLLM 是 {version}，沒有 `{token}`（它在 {first_seen} 才加入）。"
        "請依照 vLLM {version} 重寫這個指令。"
    ),
    "unknown-flag:entrypoint.title": "映像檔名稱後面又寫了一次 `vllm serve`",
    "unknown-flag:entrypoint.why": (
        "vllm/vllm-openai 映像檔本身就會啟動伺服器（0.11.1 起是 `vllm serve`，之前是 API "
        "server 模組），映像檔名稱後面的字都會被當成它的參數，vLLM 會以「unrecognized "
        "arguments: serve ...」停下來。"
    ),
    "unknown-flag:entrypoint.fix": (
        "刪掉映像檔名稱後面的 `vllm serve`（或改用 docker 的 `--entrypoint`）。"
    ),
    "unknown-flag:demo-server.title": (
        "示範伺服器 `python -m vllm.entrypoints.api_server` 沒有 `{token}` 這個參數"
    ),
    "unknown-flag:demo-server.why": (
        "vllm.entrypoints.api_server（示範用，0.24 之後已移除）只解析它自己的幾個選項（host、"
        "port、SSL、root path、log level）和引擎的選項；`{token}` 屬於 OpenAI 相容伺服器，"
        "所以示範伺服器會以「api_server.py: error: unrecognized arguments: {token}」停下來。"
    ),
    "unknown-flag:demo-server.fix": (
        "改啟動 OpenAI 相容伺服器：`vllm serve MODEL ...`（或 `python -m "
        "vllm.entrypoints.openai.api_server --model MODEL ...`），或拿掉 `{token}`。"
    ),
    "unknown-flag:stray.title": "指令裡有一個落單的值 `{token}`",
    "unknown-flag:stray.why": (
        "沒有跟在任何參數後面的值，會讓 vLLM 拒絕啟動。常見的原因是換行時把參數弄丟了，"
        "或是行尾少了 `\\`。"
    ),
    "unknown-flag:stray.fix": "找出 `{token}` 原本屬於哪個參數，或直接刪掉它。",
    "unknown-flag:stray.ask_ai": (
        "你給我的指令裡，`{token}` 單獨出現，前面沒有參數。它原本是要給哪個參數的？"
    ),
    "unknown-flag:unquoted-json.title": "`{flag}` 的 JSON 值沒有加引號",
    "unknown-flag:unquoted-json.why": (
        "JSON 外面沒有引號時，shell 會在空白處把它切開，還會拿掉裡面的雙引號，"
        "所以 `{flag}` 只拿到第一段，其餘的部分 vLLM 會當成無法辨識的參數而拒絕啟動。"
    ),
    "unknown-flag:unquoted-json.fix": (
        '把整段 JSON 用單引號包起來：`{flag} \'{{"key": "value"}}\'`，就像修正後的指令那樣。'
    ),
    "unknown-flag:unquoted-json.ask_ai": (
        "你給的指令裡 `{flag}` 後面的 JSON 沒有加引號，shell 會把它切開。"
        "請用單引號包起來再給我一次。"
    ),
    "unknown-flag:ambiguous.title": "`{token}` 同時是好幾個 vLLM {version} 參數的開頭",
    "unknown-flag:ambiguous.why": (
        "只要只有一個長參數以這段文字開頭，vLLM 就接受縮寫（`--gpu-memory-util` 就是 "
        "`--gpu-memory-utilization`）。但 `{token}` 可以是 {candidates} 的開頭，vLLM 不會幫你猜，"
        "啟動時就以「ambiguous option」停下來。"
    ),
    "unknown-flag:ambiguous.fix": "把你要的參數完整寫出來，從這幾個挑一個：{candidates}。",
    "unknown-flag:ambiguous.ask_ai": (
        "vLLM {version} 分不出 `{token}` 指的是哪一個參數（{candidates}）。你原本要的是哪一個？"
        "請把它完整寫出來。"
    ),
    "model-required.title": "vLLM {version} 要求模型緊接在 `vllm serve` 後面",
    "model-required.why": (
        "0.8.3 以前，`vllm serve` 只接受寫在第一個位置的模型；只寫 `--model {given}` 等於"
        "沒給，vLLM 會以「the following arguments are required: model_tag」停下來。"
    ),
    "model-required.fix": "改寫成 `vllm serve {given} ...`（模型放第一個，不用 `--model`）。",
    "model-required:flag.title": "vLLM {version} 不接受在 `vllm serve` 後面用 `--model`",
    "model-required:flag.why": (
        "從 0.8.3 到 0.11.0，vLLM 一看到 `--model` 就會在解析參數前停下來，錯誤訊息是「With "
        "`vllm serve`, you should provide the model as a positional argument...」"
        "（0.11.1 以後只會警告）。"
    ),
    "model-required:flag.fix": "改寫成 `vllm serve {given} ...`（模型放第一個，不用 `--model`）。",
    "model-required:served-name.title": (
        "有 `--served-model-name` 時，vLLM {version} 要求模型寫在最前面"
    ),
    "model-required:served-name.why": (
        "從 0.20.0 起，如果 `vllm serve` 後面第一個不是模型（也沒有用 `--model` 或 `--config` "
        "指定），又給了 `--served-model-name`，vLLM 會拒絕啟動：「`model` should be provided "
        "as the first positional argument」。"
    ),
    "model-required:served-name.fix": "把模型寫在 `vllm serve` 的正後方。",
    "model-required:none.title": "vLLM {version} 的 `vllm serve` 一定要指定模型",
    "model-required:none.why": (
        "0.8.3 以前的 `vllm serve` 沒有預設模型，沒給模型就會以「the following arguments "
        "are required: model_tag」停下來。"
    ),
    "model-required:none.fix": "在 `vllm serve` 後面寫上模型名稱。",
    "model-required:older.title": (
        "{since} 以前的 vLLM 不接受在 `vllm serve` 後面用 `--model`；請把模型寫在最前面"
    ),
    "model-required:older.why": (
        "不知道你用的是哪個版本，所以假設是最新版；最新版接受 `--model {given}`，只會給出"
        "「已棄用」的警告。但 {since} 以前的每個版本都會停下來：0.8.3 以前是「the following "
        "arguments are required: model_tag」，0.8.3 起是「you should provide the model as a "
        "positional argument」。"
    ),
    "model-required:older.fix": (
        "改寫成 `vllm serve {given} ...`（模型放第一個，不用 `--model`），每個版本都讀得懂；"
        "或用 `--vllm-version` 指定你的版本再檢查一次。"
    ),
    "flag-without-dashes.title": "`{token}` 是少了開頭破折號的參數",
    "flag-without-dashes.why": (
        "vLLM 把開頭沒有 `--` 的字當成位置參數；模型之後已經沒有位置參數可以放，所以會立刻以"
        "「unrecognized arguments: {token}」停下來。"
    ),
    "flag-without-dashes.fix": "寫成參數的形式：`{fixed}`。",
    "extra-positional-after-entrypoint.title": "映像檔 `{image}` 後面的 `{token}` 多了一個字",
    "extra-positional-after-entrypoint.why": (
        "這個映像檔本身就會啟動 vLLM 的伺服器（0.11.1 起是 `vllm serve`，之前是 API server "
        "模組），映像檔後面的字都是伺服器的參數：`{token}` 會被當成模型，真正的模型反而變成"
        "多出來的參數，vLLM 會以「unrecognized arguments」停下來。"
    ),
    "extra-positional-after-entrypoint.fix": (
        "刪掉映像檔名稱後面的 `{token}`：`docker run ... {image} 模型 --參數`。"
    ),
    "extra-positional-after-entrypoint:other-image.title": (
        "如果映像檔 `{image}` 的 entrypoint 是 vLLM 的伺服器，後面的 `{token}` 就多了一個字"
    ),
    "extra-positional-after-entrypoint:other-image.why": (
        "單獨的 `{token}` 不是一個程式，所以這個映像檔的 entrypoint 是 vLLM：如果它是伺服器"
        "（`vllm serve` 或 API server 模組，vLLM 自己的映像檔和以它們為基礎（FROM）建置的映像"
        "檔都是），`{token}` 會被當成模型，真正的模型反而變成多出來的參數，vLLM 會以"
        "「unrecognized arguments」停下來。只有 entrypoint 是單純的 `vllm` 時才會照你的意思讀。"
    ),
    "extra-positional-after-entrypoint:other-image.fix": (
        '刪掉映像檔名稱後面的 `{token}`，除非映像檔的 ENTRYPOINT 是 ["vllm"]'
        "（用 `docker inspect {image}` 可以看到）。"
    ),
    "default-model.title": "沒有指定模型：vLLM {version} 會跑它的預設模型 {default}",
    "default-model.why": (
        "指令和 `--config` 裡都沒有模型時，vLLM 會載入內建的預設模型，這份檢查也就是針對"
        "那個模型。它是測試用的小模型，通常不是你真正想上線的那一個。"
    ),
    "default-model.fix": "寫上你要的模型：`vllm serve 組織/模型 ...`。",
    "removed-flag.title": (
        "`{token}` 已從 vLLM 移除（最後出現在 {last_seen}，{gone_in} 起就沒有了）"
    ),
    "removed-flag.why": (
        "用舊文件訓練出來的 AI 助理，到現在還是會寫出這個參數。vLLM {version} 已經沒有它，"
        "會以「unrecognized arguments」拒絕啟動。它原本的功能，不是已經拿掉，就是變成了預設行為。"
    ),
    "removed-flag.fix": "刪掉 `{token}`。",
    "removed-flag.ask_ai": (
        "vLLM {version} 已經沒有 `{token}` 了（{last_seen} 之後就移除了）。請依照 vLLM "
        "{version} 更新這個指令，不要再用過時的參數。"
    ),
    "removed-flag:replaced.title": (
        "`{token}` 已從 vLLM 移除（最後出現在 {last_seen}）；請改用 {replacement}"
    ),
    "removed-flag:replaced.why": (
        "用舊文件訓練出來的 AI 助理，到現在還是會寫出這個參數。vLLM {version} 已經沒有它，"
        "會以「unrecognized arguments」拒絕啟動。"
    ),
    "removed-flag:replaced.fix": "把 `{token}` 換成 {replacement}。",
    "removed-flag:replaced.ask_ai": (
        "vLLM {version} 已經沒有 `{token}` 了，取代它的是 {replacement}。請幫我改寫指令裡的這一段。"
    ),
    "bool-flag-value.title": "`{token}`：這個版本的 vLLM 裡，開關型參數後面不能接值",
    "bool-flag-value.why": (
        "vLLM 的開/關選項是開關型參數：寫 `--flag` 代表打開，寫 `--no-flag` 代表關閉。"
        "後面再接一個值（例如「True」、「=False」），vLLM 就會拒絕啟動。"
    ),
    "bool-flag-value.fix": "改寫成 `{fixed}`。",
    "bool-flag-value.ask_ai": (
        "vLLM {version} 不接受 `{token}`；開關型的選項要寫成 `--x` 或 `--no-x`。"
        "請幫我修正這個指令。"
    ),
    "missing-value.title": "`{token}` 沒有給值",
    "missing-value.why": (
        "這個參數需要一個值，但緊接在後面的是另一個參數，或者指令已經結束了，所以 vLLM 會拒絕啟動。"
    ),
    "missing-value.fix": "幫 `{token}` 補上值，或把它拿掉。",
    "missing-value.ask_ai": "你的指令裡 `{token}` 沒有給值。你原本想設成多少？",
    "invalid-value.title": "`{token}`：`{value}` 不是有效的值",
    "invalid-value.why": (
        "vLLM 在載入任何東西之前，會先檢查每個選項的型別和可選的值；遇到讀不懂的值，"
        "就直接拒絕啟動。"
    ),
    "invalid-value.fix": (
        "改用型別正確的值（請參考 `vllm serve --help=all`），或把這個參數拿掉、改用 vLLM 的"
        "預設值，就像修正後的指令那樣。"
    ),
    "invalid-value.ask_ai": "vLLM {version} 不接受 `{token}` 目前的值。這裡應該填什麼才對？",
    "invalid-value:did-you-mean.title": "`{token}`：`{value}` 不是有效的值",
    "invalid-value:did-you-mean.why": (
        "vLLM 在載入任何東西之前，會先檢查每個選項的型別和可選的值；遇到讀不懂的值，"
        "就直接拒絕啟動。"
    ),
    "invalid-value:did-you-mean.fix": "改用 `{suggestion}`，這是可接受的值裡拼法最接近的。",
    "invalid-value:did-you-mean.ask_ai": (
        "vLLM {version} 不接受 `{token}`。你是不是想寫 `{suggestion}`？"
    ),
    "invalid-value:choices.title": "`{token}`：`{value}` 不是有效的值",
    "invalid-value:choices.why": (
        "vLLM {version} 在這裡只接受這些值：{choices}。它在載入任何東西之前就會檢查，"
        "遇到其他值就拒絕啟動。"
    ),
    "invalid-value:choices.fix": (
        "改用其中一個值，或把這個參數拿掉、改用 vLLM 的預設值，就像修正後的指令那樣；"
        "較新版本才加入的值，就需要升級到那個版本。"
    ),
    "invalid-value:choices.ask_ai": (
        "vLLM {version} 不接受 `{token}`：這裡只能用 {choices}。"
        "哪一個才合適？還是你指的是別的版本？"
    ),
    "config-unreadable.title": "無法讀取 --config 檔案 `{path}`",
    "config-unreadable.why": (
        "{reason}。這個檔案裡的設定沒有被檢查到；到了伺服器上，如果 vLLM 也讀不到它，"
        "一樣會啟動失敗。"
    ),
    "config-unreadable.fix": "到檔案所在的機器上執行檢查，或把檔案裡的參數直接寫在指令列上。",
    "config-unreadable.ask_ai": "請把 `{path}` 的完整內容給我看，我要檢查裡面的設定。",
    "tp-exceeds-gpus.title": (
        "指令需要 {needed} 張 GPU（TP {tp} x PP {pp} x DP {dp}），機器卻只有 {gpus} 張"
    ),
    "tp-exceeds-gpus.why": (
        "vLLM 會依照張量並行 x 管線並行 x 資料並行的配置，每張 GPU 起一個 worker。GPU "
        "不夠的時候，它會在啟動時失敗（「World size ... is larger than the number of available "
        "GPUs」）；舊版則會一直等一個根本不存在的 Ray 叢集。"
    ),
    "tp-exceeds-gpus.fix": (
        "調整各個並行數，讓 TP x PP x DP 不超過 {gpus}（通常就是 `--tensor-parallel-size` "
        "= GPU 張數）。"
    ),
    "tp-exceeds-gpus.ask_ai": (
        "我的機器是 {machine}。你的指令需要 {needed} 張 GPU（tensor-parallel-size "
        "{tp}）。請幫我改成剛好使用 {gpus} 張 GPU 的版本。"
    ),
    "tp-below-gpus.title": "{gpus} 張 GPU 裡有 {idle} 張會閒置（指令只用了 {needed} 張）",
    "tp-below-gpus.why": (
        "vLLM 只會用到並行配置裡的 GPU，其他的卡上既沒有權重，也沒有 KV cache。錢照樣要付，"
        "卻什麼也沒換到。"
    ),
    "tp-below-gpus.fix": (
        "把卡都用上：調高 `--tensor-parallel-size`（每張卡分到的權重變少，KV cache "
        "空間變多），或調高 `--data-parallel-size`（多開幾份獨立的副本，吞吐量更高），"
        "或在閒置的 GPU 上再起一個伺服器。"
    ),
    "tp-below-gpus.ask_ai": (
        "我的機器是 {machine}，但指令只用了 {needed} 張。以這個模型和我的流量來說，"
        "應該調高 tensor-parallel-size，還是改跑 data-parallel 副本？"
    ),
    "pp-unsupported-model.title": (
        "vLLM {version} 無法用管線平行（pipeline parallelism）跑 {architecture}"
    ),
    "pp-unsupported-model.why": (
        "這個版本的 {architecture} 沒有實作管線分段（`SupportsPP`），所以 "
        "`--pipeline-parallel-size {pp}` 會讓 vLLM 在建立模型時停下來：「Pipeline "
        "parallelism is not supported for this model」。目前還沒有任何版本支援。"
    ),
    "pp-unsupported-model.fix": (
        "改用張量平行切分模型（注意力頭數允許時用 `--tensor-parallel-size {tp_all}`），"
        "或改用較少的 GPU。"
    ),
    "pp-unsupported-model:later.title": (
        "vLLM {version} 無法用管線平行跑 {architecture}（{since} 起可以）"
    ),
    "pp-unsupported-model:later.why": (
        "在 vLLM {version} 裡，{architecture} 沒有實作管線分段（`SupportsPP`），所以 "
        "`--pipeline-parallel-size {pp}` 會讓 vLLM 在建立模型時停下來：「Pipeline "
        "parallelism is not supported for this model」。{since} 才加入支援。"
    ),
    "pp-unsupported-model:later.fix": (
        "把 vLLM 升級到 {since} 以上，或改用張量平行切分模型"
        "（注意力頭數允許時用 `--tensor-parallel-size {tp_all}`）。"
    ),
    "pp-unsupported-model:older.title": ("{since} 以前的 vLLM 無法用管線平行跑 {architecture}"),
    "pp-unsupported-model:older.why": (
        "不知道你用的是哪個版本，所以假設是最新版；最新版可以把 {architecture} 分成 {pp} 段"
        "管線來跑。但到 {older} 為止的版本都不行（沒有 `SupportsPP`），會在建立模型時以"
        "「Pipeline parallelism is not supported for this model」停下來。"
    ),
    "pp-unsupported-model:older.fix": (
        "使用 vLLM {since} 以上（或用 `--vllm-version` 指定你的版本再檢查），"
        "或改用張量平行切分模型（`--tensor-parallel-size {tp_all}`）。"
    ),
    "tp-heads-indivisible.title": "{model} 有 {heads} 個 attention head，TP {tp} 無法整除",
    "tp-heads-indivisible.why": (
        "張量並行會把 attention head 平均分給每一張 GPU。這個組合 vLLM 會拒絕啟動：「Total "
        "number of attention heads ({heads}) must be divisible by tensor parallel size ({tp})」。"
    ),
    "tp-heads-indivisible.fix": "改用能整除 {heads} 的張量並行數：{valid}。",
    "tp-heads-indivisible.ask_ai": (
        "{model} 有 {heads} 個 attention head，所以 --tensor-parallel-size {tp} 行不通。"
        "我的機器是 {machine}。請從 {valid} 裡挑一個 TP（也告訴我多出來的 GPU 該怎麼用）。"
    ),
    "tp-heads-indivisible:kv.title": (
        "{model} 有 {kv_heads} 個 KV head；TP {tp} 和 {kv_heads} 無法互相整除"
    ),
    "tp-heads-indivisible:kv.why": (
        "使用 grouped-query attention 時，vLLM 會讓每張 GPU 分到整數個 KV head；TP 比 KV "
        "head 多的時候，則把 KV head 複製到多張卡上。所以 KV head 數和 TP 必須有一方能整除另一方，"
        "否則 worker 會以「is not divisible by」失敗。"
    ),
    "tp-heads-indivisible:kv.fix": "從這些張量並行數裡挑一個：{valid}。",
    "tp-heads-indivisible:kv.ask_ai": (
        "{model} 有 {kv_heads} 個 KV head，--tensor-parallel-size {tp} "
        "沒辦法把它們平均分開。我的機器是 {machine}。請從 {valid} 裡挑一個 TP。"
    ),
    "quant-on-unquantized.title": (
        "對 {model} 用了 `--quantization {flag_method}`，但它不是 {family} 量化的模型"
    ),
    "quant-on-unquantized.why": (
        "對 {family} 來說，這個參數是告訴 vLLM 要怎麼讀一個「已經量化好」的 checkpoint，"
        "它不會當場幫你量化。{model} 裡沒有量化設定，所以 vLLM 會失敗（「Cannot find the config "
        "file for {flag_method}」）。線上即時量化是另一種做法（`--quantization fp8`）。"
    ),
    "quant-on-unquantized.fix": (
        "二選一：改用這個模型的 {family} 版 checkpoint（名稱常常就是原名後面加上"
        " -{family}），或拿掉 `--quantization`，直接跑原本的權重。"
    ),
    "quant-on-unquantized.ask_ai": (
        "我的機器是 {machine}。{model} 是原版、不是 {family} 的 checkpoint，"
        "所以 `--quantization {flag_method}` 行不通。我可以改用這個模型的 {family} 版 checkpoint，"
        "也可以拿掉 --quantization：哪一個比較適合我的 GPU？兩種做法各需要多少記憶體？"
    ),
    "quant-method-mismatch.title": (
        "用了 `--quantization {flag_method}`，但 {model} 是用 {checkpoint_method} 量化的"
    ),
    "quant-method-mismatch.why": (
        "量化過的 checkpoint 只能用它自己的量化方法來讀。vLLM 會拒絕啟動（「Quantization "
        "method specified in the model config ({checkpoint_method}) does not match ...」）。"
    ),
    "quant-method-mismatch.fix": (
        "拿掉 `--quantization`：vLLM 會從 checkpoint 自動認出 {checkpoint_method}，"
        "並自己挑最快的 kernel。"
    ),
    "quant-method-mismatch.ask_ai": (
        "{model} 是 {checkpoint_method} 的 checkpoint，但你的指令寫的是 --quantization "
        "{flag_method}。我是不是直接拿掉這個參數就好？"
    ),
    "quant-method-mismatch:release.title": (
        "vLLM {version} 不接受在 {checkpoint_method} 的 checkpoint {model} 上用 "
        "`--quantization {flag_method}`"
    ),
    "quant-method-mismatch:release.why": (
        "這個版本只有在 vLLM 自己挑 kernel 時，才會讓 {checkpoint_method} 的 checkpoint 走 "
        "Marlin：指定的名稱會拿去和 checkpoint 的量化方法比對，於是 vLLM 以「Quantization "
        "method specified in the model config ({checkpoint_method}) does not match the "
        "quantization method specified in the `quantization` argument ({flag_method})」停下來。"
        "之後的版本才接受這個名稱。"
    ),
    "quant-method-mismatch:release.fix": (
        "拿掉 `--quantization`：vLLM 會從 checkpoint 認出 {checkpoint_method}，"
        "GPU 支援時自己改用 Marlin kernel。"
    ),
    "quant-unsupported-gpu.title": (
        "{method} 需要運算能力（compute capability）{needed}；{gpu} 只有 {have}"
    ),
    "quant-unsupported-gpu.why": (
        "vLLM {version} 沒有給這一代 GPU 用的 {method} kernel，會拒絕啟動（「The "
        "quantization method {method} is not supported for the current GPU」）。"
    ),
    "quant-unsupported-gpu.fix": (
        "改用這張 GPU 支援的量化方法（GPTQ 從 6.0 起、AWQ 從 7.5 起可用）、用更多張 GPU "
        "跑未量化的 checkpoint，或換一張較新的 GPU。"
    ),
    "quant-unsupported-gpu.ask_ai": (
        "我的 GPU 是 {machine}（運算能力 {have}），而 {method} 需要 {needed}。"
        "這個模型有哪個 checkpoint 可以改在我的卡上跑？"
    ),
    "quant-unsupported-gpu:scheme.title": ("{method} 需要運算能力 {needed}；{gpu} 只有 {have}"),
    "quant-unsupported-gpu:scheme.why": (
        "模型的 quantization_config 描述的是這個量化方案，而 vLLM {version} 要求運算能力 "
        "{needed} 以上才能執行（它的 get_min_capability）：會拒絕啟動（「Quantization scheme "
        "is not supported for the current GPU. Min capability: ...」）。"
    ),
    "quant-unsupported-gpu:scheme.fix": (
        "改用這張 GPU 支援的量化方案的 checkpoint（W8A8-INT8 從 7.5 起、GPTQ 從 6.0 起可用）、"
        "改用能在 {have} 上執行這個方案的 vLLM 版本，或換更新的 GPU。"
    ),
    "quant-unsupported-gpu:scheme.ask_ai": (
        "我的 GPU 是 {machine}（運算能力 {have}）；{method} 的 checkpoint 在 vLLM {version} "
        "需要 {needed}。這個模型還有哪個量化版本可以用？"
    ),
    "quant-unsupported-gpu:moe.title": (
        "vLLM {version} 無法在 {gpu}（運算能力 {have}）上跑這個 FP8 MoE 模型（{since} 起可以）"
    ),
    "quant-unsupported-gpu:moe.why": (
        "運算能力低於 {needed} 的 GPU 沒有原生 FP8 核心。vLLM {version} 會把 FP8 的線性層"
        "改用只量化權重的 Marlin 來跑，但 MoE 專家層不行：Triton 的 fused-MoE 核心會以"
        "「type fp8e4nv not supported in this architecture」停下來。FP8 專家層的 Marlin "
        "路徑在 {since} 才加入。"
    ),
    "quant-unsupported-gpu:moe.fix": (
        "把 vLLM 升級到 {since} 以上，或改用這個模型的 AWQ/GPTQ 檢查點。"
    ),
    "kv-cache-dtype-unsupported-gpu.title": (
        "vLLM {version} 在 {gpu}（運算能力 {have}）上不支援 --kv-cache-dtype {kv_dtype}"
    ),
    "kv-cache-dtype-unsupported-gpu.why": (
        "在這張 GPU 上，vLLM {version} 用 Triton attention backend 存放 KV cache，"
        "它的 FP8 需要運算能力 8.9（在 Ampere 上負責 fp8 cache 的 FlashInfer，低於 {needed} "
        "時被停用）；vLLM 會拒絕啟動（「FP8 KV cache is not supported by the Triton attention "
        "backend」）。"
    ),
    "kv-cache-dtype-unsupported-gpu.fix": (
        "拿掉 --kv-cache-dtype（改用 16 位元的 cache），改用較短的 --max-model-len "
        "或更多 GPU 來騰出空間。"
    ),
    "kv-cache-dtype-unsupported-gpu.ask_ai": (
        "在 {gpu}（運算能力 {have}）上，vLLM {version} 無法使用 {kv_dtype} 的 KV cache。"
        "還有什麼方法能放下我需要的上下文長度：縮短 --max-model-len、加 GPU，還是換小一點的模型？"
    ),
    "kv-cache-dtype-unsupported-gpu:e5m2.title": (
        "vLLM {version} 在 {gpu}（運算能力 {have}）上不支援 --kv-cache-dtype {kv_dtype}（e4m3）"
    ),
    "kv-cache-dtype-unsupported-gpu:e5m2.why": (
        "在這張 GPU 上，vLLM {version} 用 Triton attention backend 存放 KV cache，"
        "它的 e4m3 型別（fp8e4nv）需要運算能力 8.9；啟動時會在 Triton 編譯 attention kernel "
        "時失敗（「type fp8e4nv not supported in this architecture」）。e5m2 型別在較舊的 GPU "
        "上可以用。"
    ),
    "kv-cache-dtype-unsupported-gpu:e5m2.fix": (
        "改用 --kv-cache-dtype fp8_e5m2（記憶體一樣，精度較粗），"
        "或拿掉這個參數改用 16 位元的 cache。"
    ),
    "kv-cache-dtype-unsupported-gpu:e5m2.ask_ai": (
        "在 {gpu} 上，vLLM {version} 無法使用 fp8 e4m3 的 KV cache。fp8_e5m2 的精度對我的任務"
        "夠不夠，還是應該維持 16 位元的 cache？"
    ),
    "quant-tp-shape.title": (
        "在 TP {tp} 下，每張 GPU 分到的量化層（{width} 中的 {size}）不是 {tile} 的倍數"
    ),
    "quant-tp-shape.why": (
        "張量並行讓每張 GPU 分到每個權重矩陣的 1/TP。{model} 的 {what} 是 {width}，"
        "{width} / {tp} = {size} 無法切成完整的量化群組與 {tile} 的 kernel tile，"
        "所以 vLLM 在建立各層時就會停下（「... is not divisible by group_size」"
        "或「min_thread_k」）。"
    ),
    "quant-tp-shape.fix": (
        "改用能讓每份保持 {tile} 倍數的 --tensor-parallel-size：{valid}；其餘 GPU 改用 "
        "--pipeline-parallel-size 或 --data-parallel-size，"
        "或改用已為這個 TP 補齊尺寸的 checkpoint。"
    ),
    "quant-tp-shape.ask_ai": (
        "{model} 是分組量化的，它的 {what}（{width}）在 TP {tp} 下無法切成完整的 {tile} 群組。"
        "在 {machine} 上哪種平行配置可行：TP {valid}、pipeline 平行，還是換一個 checkpoint？"
    ),
    "quant-tp-shape:sizes.title": (
        "在 TP {tp} 下，每張 GPU 分到的量化層（{width} 中的 {size}）不是 {tile} 的倍數"
    ),
    "quant-tp-shape:sizes.why": (
        "張量並行讓每張 GPU 分到每個權重矩陣的 1/TP。{model} 的 {what} 是 {width}，"
        "{width} / {tp} = {size} 無法切成完整的量化群組與 {tile} 的 kernel tile，"
        "所以 vLLM 在建立各層時就會停下（「... is not divisible by group_size」"
        "或「min_thread_k」）。"
    ),
    "quant-tp-shape:sizes.fix": (
        "改用能讓每份保持 {tile} 倍數的 --tensor-parallel-size：{valid}；其餘 GPU 改用 "
        "--pipeline-parallel-size 或 --data-parallel-size，"
        "或改用已為這個 TP 補齊尺寸的 checkpoint。"
    ),
    "quant-tp-shape:sizes.ask_ai": (
        "{model} 是分組量化的，它的 {what}（{width}）在 TP {tp} 下無法切成完整的 {tile} 群組。"
        "在 {machine} 上哪種平行配置可行：TP {valid}、pipeline 平行，還是換一個 checkpoint？"
    ),
    "quant-tp-shape:experts.title": (
        "在 TP {tp} 下，每張 GPU 分到的專家層（{width} 中的 {size}）不是 {tile} 的倍數："
        "請求可能會失敗"
    ),
    "quant-tp-shape:experts.why": (
        "張量並行讓每張 GPU 分到每個專家權重的 1/TP。{model} 的 {what} 是 {width}，"
        "{width} / {tp} = {size} 無法切成完整的 {tile} 量化群組。vLLM 會從 Marlin 退回 MoE "
        "WNA16 kernel 並順利啟動，但第一個請求就可能失敗（「size_k must divisible by "
        "BLOCK_SIZE_K」）。"
    ),
    "quant-tp-shape:experts.fix": (
        "加上 --enable-expert-parallel（專家整個放在某張 GPU 上，不切開），"
        "或改用能讓每份保持完整群組的 --tensor-parallel-size：{valid}。"
    ),
    "quant-tp-shape:experts.ask_ai": (
        "{model} 的專家層（{what} {width}）在 TP {tp} 下無法切成完整的 {tile} 群組。"
        "在 {machine} 上我應該開啟專家平行，還是把張量並行改成 {valid}？"
    ),
    "fp8-weight-only.title": "在 {gpu} 上跑 FP8：權重變小了，運算卻不會變快",
    "fp8-weight-only.why": (
        "這張 GPU 沒有 FP8 tensor core（要到 Ada/Hopper、運算能力 8.9 才有）。vLLM "
        "會以 FP8 存放權重，運算時再由 weight-only 的 Marlin kernel 用 16-bit 來算："
        "權重佔用的記憶體省一半，但沒有 FP8 的加速，prefill 比重高的工作甚至可能變慢。"
    ),
    "fp8-weight-only.fix": (
        "如果目的是省記憶體，這樣沒有問題。如果要在這張 GPU 上求速度，請和 AWQ/GPTQ "
        "的 4-bit checkpoint 比較看看，並用 `servetune bench` 量測調整前後的差異。"
    ),
    "fp8-weight-only.ask_ai": (
        "我的 GPU 是 {machine}，不支援原生 FP8。這裡用 FP8 是為了省記憶體，"
        "還是為了速度？如果是為了速度，改用 AWQ 或 GPTQ 的 checkpoint 會不會比較好？"
    ),
    "quant-slow-kernel.title": (
        "`--quantization {flag_method}` 強制使用較慢的 kernel；vLLM {version} 本來會選 {marlin}"
    ),
    "quant-slow-kernel.why": (
        "如果不指定，vLLM {version} 在 {gpu} 上會用快很多的 Marlin kernel "
        "來跑這個 checkpoint。明確寫出量化方法，反而會強制使用原本的 {flag_method} kernel（log "
        "裡會出現「forcing {flag_method}」）。"
    ),
    "quant-slow-kernel.fix": "拿掉 `--quantization`（或改寫成 `--quantization {marlin}`）。",
    "quant-slow-kernel.ask_ai": (
        "在 vLLM {version} 上，`--quantization {flag_method}` 會強制使用較慢的 kernel，"
        "而這個 checkpoint 本來可以用 {marlin} 跑。我可以把這個參數拿掉嗎？"
    ),
    "quant-dtype-unsupported.title": (
        "vLLM {version} 的 {method} 不能用 {dtype} 計算：它只接受 {allowed}"
    ),
    "quant-dtype-unsupported.why": (
        "每種量化方法的核心（kernel）只支援某些激活值的資料型別；vLLM 在載入任何東西之前就會"
        "檢查模型的 dtype，不符合就以「torch.{dtype} is not supported for quantization method "
        "{method}. Supported dtypes: [{allowed}]」停下來。"
    ),
    "quant-dtype-unsupported.fix": (
        "改用 `--dtype {allowed}`（或拿掉 `--dtype`，讓 vLLM 自己選）；不支援這個 dtype 的 GPU "
        "跑不了這個檢查點的量化方法。"
    ),
    "quant-dtype-unsupported:auto.title": (
        "vLLM {version} 的 {method} 不能用 checkpoint 的 dtype {dtype} 計算：它只接受 {allowed}"
    ),
    "quant-dtype-unsupported:auto.why": (
        "`--dtype auto` 時，vLLM 用 checkpoint 自己的 dtype（{dtype}）計算，並在載入任何東西之前"
        "拿它和量化方法的核心（kernel）比對，不符合就以「torch.{dtype} is not supported for "
        "quantization method {method}. Supported dtypes: [{allowed}]」停下來。"
    ),
    "quant-dtype-unsupported:auto.fix": (
        "加上 `--dtype {allowed}`；不支援這個 dtype 的 GPU 跑不了這個檢查點的量化方法。"
    ),
    "quant-dtype-unsupported:older.title": ("{since} 以前的 vLLM 不能用 {dtype} 跑 {method}"),
    "quant-dtype-unsupported:older.why": (
        "不知道你用的是哪個版本，所以假設是最新版；最新版的 {method} 核心可以用 {dtype} 計算。"
        "但 {since} 以前的版本只接受 {allowed}，會在載入前以「torch.{dtype} is not supported "
        "for quantization method {method}」停下來。"
    ),
    "quant-dtype-unsupported:older.fix": (
        "若你用的 vLLM 比 {since} 舊，請加上 `--dtype {allowed}`（或用 `--vllm-version` "
        "指定你的版本再檢查）。"
    ),
    "arch-unsupported-in-release.title": ("vLLM {version} 沒有 {architecture}：{since} 才加入"),
    "arch-unsupported-in-release.why": (
        "這個版本的模型登錄表（model registry）沒有 {architecture}，所以 vLLM 啟動時會停下來："
        "「Model architectures ['{architecture}'] are not supported for now」。第一個登錄它的"
        "版本是 {since}。有 Transformers 後端的版本會改用它來跑，但只有安裝的 transformers "
        "實作了這個模型才跑得起來。"
    ),
    "arch-unsupported-in-release.fix": "把 vLLM 升級到 {since} 以上。",
    "arch-unsupported-in-release:removed.title": (
        "vLLM {version} 已經沒有 {architecture}（最後一個有它的版本是 {since}）"
    ),
    "arch-unsupported-in-release:removed.why": (
        "這個版本的模型登錄表已經不再列出 {architecture}，所以 vLLM 啟動時會停下來："
        "「Model architectures ['{architecture}'] are not supported for now」"
        "（除非 Transformers 後端跑得動）。最後一個登錄它的版本是 {since}。"
    ),
    "arch-unsupported-in-release:removed.fix": "使用 vLLM {since}，或改用 vLLM 仍支援的模型。",
    "gguf-arch-unsupported.title": (
        "vLLM {version} 的 GGUF 載入器讀不了 {model_type} 的檢查點（{since} 起可以）"
    ),
    "gguf-arch-unsupported.why": (
        "GGUF 對這種模型類型的命名和 transformers 不同，而這個版本的載入器沒有這個對應："
        "載入時會以「Unknown gguf model_type」停下來（或 transformers 的「GGUF model with "
        "architecture ... is not supported yet」）。{since} 才加入這個對應。"
    ),
    "gguf-arch-unsupported.fix": (
        "把 vLLM 升級到 {since} 以上，或改用原始（safetensors）檢查點或它的 AWQ/GPTQ 版本。"
    ),
    "gguf-arch-unsupported:no-loader.title": (
        "vLLM {version} 無法載入 GGUF 檢查點（{since} 起可以）"
    ),
    "gguf-arch-unsupported:no-loader.why": (
        "這個版本沒有 GGUF 載入器：這個檔案不是它讀得懂的檢查點。{since} 才加入 GGUF 支援。"
    ),
    "gguf-arch-unsupported:no-loader.fix": (
        "把 vLLM 升級到 {since} 以上，或改用原始（safetensors）檢查點。"
    ),
    "gguf-arch-unsupported:transformers.title": (
        "vLLM {version} 搭配的 transformers 沒有一版讀得了架構為 {architecture} 的 GGUF 檔"
    ),
    "gguf-arch-unsupported:transformers.why": (
        "vLLM 交給 transformers 從 .gguf 檔的中繼資料讀出設定，而 transformers 遇到沒有對照表的"
        "架構就會停下來：「GGUF model with architecture {architecture} is not supported yet」。"
        "vLLM {version} 要求 transformers {requirement}；這些版本（到 {newest} 為止）都讀不了 "
        "{architecture}。"
    ),
    "gguf-arch-unsupported:transformers.fix": (
        "用 `--hf-config-path ORG/MODEL`（以及 `--tokenizer ORG/MODEL`）給原始模型的設定，"
        "或改用原始（safetensors）檢查點或它的 AWQ/GPTQ 版本。"
    ),
    "gguf-arch-unsupported:transformers-depends.title": (
        "vLLM {version} 讀不讀得了這個 GGUF 檔，要看安裝的 transformers"
        "（{first} 起讀得了 {architecture}）"
    ),
    "gguf-arch-unsupported:transformers-depends.why": (
        "vLLM 交給 transformers 從 .gguf 檔的中繼資料讀出設定。vLLM {version} 要求 transformers "
        "{requirement}；{first} 之前的版本會在這個檔案上停下來：「GGUF model with architecture "
        "{architecture} is not supported yet」。"
    ),
    "gguf-arch-unsupported:transformers-depends.fix": (
        "確認 `pip show transformers` 是 {first} 以上，或用 `--hf-config-path ORG/MODEL` "
        "給原始模型的設定。"
    ),
    "bnb-prequant-tp-unsupported.title": (
        "vLLM {version} 無法把預先量化的 bitsandbytes 檢查點切成 TP {tp}"
    ),
    "bnb-prequant-tp-unsupported.why": (
        "預先量化的 bitsandbytes 檢查點帶有無法跨 GPU 切分的量化狀態（quant state），"
        "所以載入器會停下來：「Prequant BitsAndBytes models with tensor parallelism is not "
        "supported. Please try with pipeline parallelism.」"
    ),
    "bnb-prequant-tp-unsupported.fix": (
        "改用管線平行：`--tensor-parallel-size 1 --pipeline-parallel-size {pp_all}`，"
        "或用張量平行跑未量化的檢查點。"
    ),
    "bnb-load-format-missing.title": ("vLLM {version} 會用錯的載入器讀這個 bitsandbytes 檢查點"),
    "bnb-load-format-missing.why": (
        "{since} 以前的 vLLM 不會依檢查點自動選用 bitsandbytes 載入器：預設載入器遇到它"
        "不認得的量化狀態張量，會以 `KeyError: '...weight.absmax'` 停下來。"
    ),
    "bnb-load-format-missing.fix": (
        "加上 `--quantization bitsandbytes --load-format bitsandbytes`，"
        "或把 vLLM 升級到 {since} 以上。"
    ),
    "bnb-load-format-missing:older.title": (
        "{since} 以前的 vLLM 會用錯的載入器讀這個 bitsandbytes 檢查點"
    ),
    "bnb-load-format-missing:older.why": (
        "不知道你用的是哪個版本，所以假設是最新版。{since} 以前的版本不會依檢查點自動選用 "
        "bitsandbytes 載入器：預設載入器會以 `KeyError: '...weight.absmax'` 停下來。"
    ),
    "bnb-load-format-missing:older.fix": (
        "加上 `--quantization bitsandbytes --load-format bitsandbytes`（每個版本都接受），"
        "或用 `--vllm-version` 指定你的版本再檢查。"
    ),
    "dtype-unsupported-gpu.title": "bfloat16 需要運算能力 8.0；{gpu} 只有 {have}",
    "dtype-unsupported-gpu.why": (
        "Ampere 之前的 GPU（V100、T4）不支援 bfloat16。vLLM 會在啟動時停下來（「Bfloat16 "
        "is only supported on GPUs with compute capability of at least 8.0」）。"
    ),
    "dtype-unsupported-gpu.fix": "改用 `--dtype {fix_dtype}`。",
    "dtype-unsupported-gpu.ask_ai": (
        "我的 GPU 是 {machine}（運算能力 {have}），不支援 bfloat16。請改用 --dtype "
        "{fix_dtype}，並確認模型在這個精度下跑起來是穩定的。"
    ),
    "dtype-unsupported-model.title": "{model}（{model_type}）不能用 float16 跑",
    "dtype-unsupported-model.why": (
        "這個模型家族在 float16 下數值會溢位，所以 vLLM 會直接拒絕（「does not support "
        "float16. Reason: Numerical instability」）。"
    ),
    "dtype-unsupported-model.fix": "改用 `--dtype {fix_dtype}`。",
    "dtype-unsupported-model.ask_ai": (
        "vLLM 不讓 {model_type} 模型用 float16 跑。請改用 --dtype {fix_dtype}，"
        "並告訴我我的 GPU（{machine}）能不能跑這個精度。"
    ),
    "batched-tokens-too-small.title": (
        "--max-num-batched-tokens {mbt} 讓 GPU 吃不飽（這裡 vLLM 的預設值是 {default}）"
    ),
    "batched-tokens-too-small.why": (
        "這是排程器每一步的 token 預算，連續批次處理裡所有正在跑的請求都要共用它。"
        "設成 {mbt} 時，一個 {prompt} token 的 prompt 光是讀進來就要 {steps} 步；GPU "
        "每一步做的事太少，使用者一旦開始排隊，首字延遲（TTFT）就跟著往上爬。它不會報錯，"
        "就只是慢。"
    ),
    "batched-tokens-too-small.fix": (
        "拿掉這個參數，改用 vLLM 的預設值（{default}），或把它調大；"
        "調整時請拿前後的量測數字來比較。"
    ),
    "batched-tokens-too-small.ask_ai": (
        "為什麼 --max-num-batched-tokens 要設成 {mbt}？在 {machine} 上 vLLM "
        "的預設值是 {default}，預算太小會拖慢每個人的 prefill。設成 {mbt} 有什麼量測數據支持嗎？"
    ),
    "batched-tokens-below-model-len.title": (
        "--max-num-batched-tokens {mbt} 小於 max-model-len {max_model_len}，而且 chunked "
        "prefill 是關閉的"
    ),
    "batched-tokens-below-model-len.why": (
        "沒有 chunked prefill（把 prefill 切段處理）時，整個 prompt 必須塞進單一步的 token "
        "預算裡。vLLM 會拒絕啟動（「max_num_batched_tokens ({mbt}) is smaller than max_model_len "
        "({max_model_len})」）。"
    ),
    "batched-tokens-below-model-len.fix": (
        "把 --max-num-batched-tokens 調到至少 {max_model_len}、調低 --max-model-len，"
        "或讓 chunked prefill 保持開啟。"
    ),
    "batched-tokens-below-model-len.ask_ai": (
        "chunked prefill 關閉時，--max-num-batched-tokens（{mbt}）"
        "至少要和 --max-model-len（{max_model_len}）一樣大。這裡為什麼要關掉 chunked prefill？"
    ),
    "batched-tokens-below-num-seqs.title": (
        "--max-num-batched-tokens {mbt} 小於 --max-num-seqs {seqs}"
    ),
    "batched-tokens-below-num-seqs.why": (
        "每個正在跑的序列，每一步至少都要分到 1 個 token 的預算。vLLM "
        "會拒絕啟動（「max_num_batched_tokens ({mbt}) must be greater than or equal to "
        "max_num_seqs ({seqs})」）。"
    ),
    "batched-tokens-below-num-seqs.fix": (
        "把 --max-num-batched-tokens 調到至少 {seqs}（或調低 --max-num-seqs）。"
    ),
    "batched-tokens-below-num-seqs.ask_ai": (
        "--max-num-batched-tokens {mbt} 比 --max-num-seqs {seqs} 還小，vLLM 不接受。"
        "這兩個參數，你原本想改的是哪一個？"
    ),
    "prefix-caching-sliding-window.title": (
        "vLLM {version} 無法對 {model} 做前綴快取：它的注意力只看 {window} 個 token 的滑動視窗"
    ),
    "prefix-caching-sliding-window.why": (
        "{model} 的每一層注意力都只看 {window} 個 token 的滑動視窗。V0 引擎的 KV 快取在滑動視窗下"
        "無法共用區塊，所以 vLLM 會在啟動時停下來（「Sliding window is not allowed with prefix "
        "caching enabled!」，之後的版本是「Prefix caching is not supported with sliding "
        "window」）。從 {since} 起預設的 V1 引擎可以快取這類模型。"
    ),
    "prefix-caching-sliding-window.fix": (
        "加上 `--disable-sliding-window`（上下文長度會因此上限為 {window} 個 token；0.4.3 以前"
        "沒有這個參數，請拿掉 `--enable-prefix-caching`），或改用 vLLM {since} 以上。"
    ),
    "prefix-caching-sliding-window:v0.title": (
        "V0 引擎（VLLM_USE_V1=0）無法對 {model} 做前綴快取：它的注意力只看 {window} 個 token "
        "的滑動視窗"
    ),
    "prefix-caching-sliding-window:v0.why": (
        "VLLM_USE_V1=0 會改跑 V0 引擎，它的 KV 快取在滑動視窗下無法共用區塊：vLLM {version} "
        "會在啟動時以「Prefix caching is not supported with sliding window. Run with "
        "--disable-sliding-window to use prefix caching.」停下來。預設的 V1 引擎可以快取這類模型。"
    ),
    "prefix-caching-sliding-window:v0.fix": (
        "拿掉 VLLM_USE_V1=0，或加上 `--disable-sliding-window`（上下文長度會因此上限為 "
        "{window} 個 token）。"
    ),
    "prefix-caching-sliding-window:older.title": (
        "{since} 以前的 vLLM 無法對 {model} 做前綴快取（滑動視窗 {window}）"
    ),
    "prefix-caching-sliding-window:older.why": (
        "不知道你用的是哪個版本，所以假設是最新版；最新版的 V1 引擎可以在滑動視窗下做前綴快取。"
        "但 {since} 以前的版本（以及 0.10 以前用 VLLM_USE_V1=0 跑的 V0）會在啟動時停下來："
        "「Sliding window is not allowed with prefix caching enabled!」（之後的版本是「Prefix "
        "caching is not supported with sliding window」）。"
    ),
    "prefix-caching-sliding-window:older.fix": (
        "若你用的 vLLM 比 {since} 舊，請加上 `--disable-sliding-window`（上下文長度會因此上限為 "
        "{window} 個 token）或拿掉 `--enable-prefix-caching`；可用 `--vllm-version` 指定你的"
        "版本再檢查。"
    ),
    "quant-unneeded.title": "這裡不需要 {method} 量化：原始模型放得下，而且還有餘裕",
    "quant-unneeded.why": (
        "在 {machine} 上，原始權重每張 GPU 約佔 {weights} GiB，之後仍有約 {kv_tokens} token 的 "
        "KV cache：伺服器同時處理的 {seqs} 個序列，每個以 {typical} token 計都放得下。"
        "為了省其實不缺的記憶體而量化，會犧牲準確度（數學、程式與需要仔細推理的任務影響最大），"
        "吞吐量卻增加有限。"
    ),
    "quant-unneeded.fix": (
        "改用原始模型，或先量一下量化的代價："
        "`servetune quality --before URL --after URL --model ORIGINAL --model-after QUANTIZED`。"
    ),
    "quant-unneeded.ask_ai": (
        "原始模型在 {machine} 上放得下，還能同時容納 {seqs} 個 {typical} token 的序列，"
        "為什麼還要用 {method} 量化？在我們的任務上會損失多少準確度？吞吐量實際能提升多少？"
    ),
    "quant-unneeded:small-gain.title": (
        "這裡用 {method} 量化幫助不大：KV cache 只比原始模型多 {gain_pct}%"
    ),
    "quant-unneeded:small-gain.why": (
        "在 {machine} 上，原始權重每張 GPU 約佔 {weights} GiB，之後仍有約 {kv_tokens} token "
        "的 KV cache，可以同時進行 {conversations} 段 {typical} token 的對話"
        "（以這個長度計，是 --max-num-seqs {seqs} 的 {covered_pct}%）；{method} 讓它變成 "
        "{quant_tokens} token，只多 {gain_pct}%，不到這個負載的十分之一。為了這一點而量化，"
        "會犧牲準確度（數學、程式與需要仔細推理的任務影響最大）。"
    ),
    "quant-unneeded:small-gain.fix": (
        "改用原始模型，或先量一下量化的代價："
        "`servetune quality --before URL --after URL --model ORIGINAL --model-after QUANTIZED`。"
    ),
    "quant-unneeded:small-gain.ask_ai": (
        "原始模型在 {machine} 上已經能同時容納 {conversations} 段 {typical} token 的對話；"
        "{method} 只多出 {gain_pct}% 的 KV cache。我們實際同時服務多少使用者？"
        "量化會讓我們損失多少準確度？"
    ),
    "quant-memory-unused.title": (
        "量化省下的記憶體大約夠放 {fit} 段對話，但 --max-num-seqs 只有 {seqs}"
    ),
    "quant-memory-unused.why": (
        "KV cache 大約放得下 {kv_tokens} 個 token，也就是約 {fit} 段 {typical} token "
        "的對話同時進行。--max-num-seqs 把批次上限卡在 {seqs}，就像車子換大了，載客上限卻沒改："
        "量化省下來的記憶體，永遠變不成「同時服務更多使用者」。"
    ),
    "quant-memory-unused.fix": "調高 --max-num-seqs（例如 {suggested}），並量測調整前後的延遲。",
    "quant-memory-unused.ask_ai": (
        "量化之後，{machine} 上的 KV cache 大約能容納 {fit} 段 {typical} token 的對話，"
        "但 --max-num-seqs 還停在 {seqs}。是不是應該調到 {suggested} 左右？"
        "我應該用哪些延遲目標（例如 TTFT、TPOT）來驗證？"
    ),
    "quant-memory-unused:explicit.title": (
        "--max-num-seqs {seqs} 讓大約 {idle_pct}% 的 KV cache 閒置（其實放得下約 {fit} 段對話）"
    ),
    "quant-memory-unused:explicit.why": (
        "KV cache 大約放得下 {kv_tokens} 個 token，也就是約 {fit} 段 {typical} token 的對話"
        "同時進行。你把 --max-num-seqs 設成 {seqs}，同時最多只跑 {seqs} 段，"
        "就像車子換大了卻只載幾位乘客：量化省下的記憶體大多空著。"
    ),
    "quant-memory-unused:explicit.fix": (
        "如果這個上限不是為了延遲刻意設的，就調高 --max-num-seqs（例如 {suggested}），"
        "並量測調整前後的延遲；不然換小一點的 GPU 或精度較高的模型，也能撐起同樣的負載。"
    ),
    "quant-memory-unused:explicit.ask_ai": (
        "在 {machine} 上，KV cache 大約能容納 {fit} 段 {typical} token 的對話，"
        "但我把 --max-num-seqs 設成 {seqs}。以我的延遲目標來看，這個上限有必要嗎？"
        "還是應該調到 {suggested} 左右？"
    ),
    "model-len-exceeds-model.title": "--max-model-len {asked} 超過 {model} 支援的長度（{limit}）",
    "model-len-exceeds-model.why": (
        "模型的設定檔裡寫的是 {key} = {limit}。vLLM 會拒絕啟動（「User-specified "
        "max_model_len ({asked}) is greater than the derived max_model_len」）；就算硬是強制開啟，"
        "超過訓練長度的部分也只會產生沒有意義的輸出。"
    ),
    "model-len-exceeds-model.fix": "把 --max-model-len 設成 {limit} 或更小。",
    "model-len-exceeds-model.ask_ai": (
        "{model} 最多只支援 {limit} token 的上下文（{key}）。"
        "請依照我的使用者實際需要的長度來設定 --max-model-len，最多不超過 {limit}。"
    ),
    "weights-dont-fit.title": "每張 GPU 需要 {weights} GiB 放權重，但只允許使用 {budget} GiB",
    "weights-dont-fit.why": (
        "{model} 在張量並行 {tp} 下，每張 GPU 大約需要 {weights} GiB 的權重，"
        "超過了 {memory} GiB x gpu-memory-utilization {util}。vLLM 會在載入途中記憶體不足。"
    ),
    "weights-dont-fit.fix": (
        "把模型分散到更多張 GPU 上（調高 --tensor-parallel-size）、"
        "改用量化版的 checkpoint，或換一個比較小的模型。"
    ),
    "weights-dont-fit.ask_ai": (
        "我的機器是 {machine}。{model} 在 TP {tp} 下每張 GPU 大約需要 {weights} GiB，"
        "放不下。在我的情況下，哪個做法比較好：加大張量並行、改用量化版的 checkpoint，"
        "還是換一個比較小的模型？"
    ),
    "kv-cache-too-small.title": (
        "KV cache 連一條 {max_model_len} token 的序列都放不下（大約只放得下 {fits}）"
    ),
    "kv-cache-too-small.why": (
        "每張 GPU 扣掉 {weights} GiB 的權重和約 {reserve} GiB 的 activation 之後，"
        "只剩大約 {kv_gib} GiB 可以給 KV cache。vLLM 要求至少放得下一條完整長度的序列，"
        "否則會拒絕啟動（「To serve at least one request with the model's max seq len ...」）。"
    ),
    "kv-cache-too-small.fix": (
        "把 --max-model-len 設成 {fits} 或更小（以使用者實際需要的長度為準）、"
        "調高 --gpu-memory-utilization、增加 GPU，或使用 --kv-cache-dtype fp8。"
    ),
    "kv-cache-too-small.ask_ai": (
        "在 {machine} 上，KV cache 每條序列只放得下大約 {fits} 個 token，"
        "但 max-model-len 是 {max_model_len}。我要怎麼知道實際的請求有多長？--max-model-len "
        "是不是應該設在 {fits} 以下？"
    ),
    "kv-cache-too-small:uncertain.title": (
        "KV cache 可能放不下一條 {max_model_len} token 的序列（估計約 {fits}，"
        "最樂觀約 {fits_most}）"
    ),
    "kv-cache-too-small:uncertain.why": (
        "每張 GPU 扣掉 {weights} GiB 的權重和約 {reserve} GiB 的 activation 之後，"
        "中間估計只剩 {kv_gib} GiB 給 KV cache，不夠放一條完整長度的序列；如果 sampler "
        "暖機、CUDA graph 和非 torch 記憶體都落在 vLLM 記錄過的低端，會剩 {kv_gib_most} "
        "GiB，就夠了。如果真的不夠，vLLM 會拒絕啟動（「To serve at least one request with "
        "the model's max seq len ...」）。"
    ),
    "kv-cache-too-small:uncertain.fix": (
        "先啟動看看，讀 vLLM 的「Available KV cache memory」那一行；如果它拒絕啟動，"
        "就把 --max-model-len 設成 {fits} 或更小（以使用者實際需要的長度為準），"
        "或調高 --gpu-memory-utilization。"
    ),
    "kv-cache-too-small:uncertain.ask_ai": (
        "在 {machine} 上，KV cache 每條序列大約放得下 {fits} 到 {fits_most} 個 token，"
        "而 max-model-len 是 {max_model_len}。我的實際請求有多長？為了保險，"
        "--max-model-len 是不是應該設在 {fits} 以下？"
    ),
    "kv-cache-too-small:none.title": "已經沒有任何記憶體可以留給 KV cache",
    "kv-cache-too-small:none.why": (
        "權重（{weights} GiB）加上 activation（約 {reserve} GiB），已經用光了 vLLM "
        "在每張 GPU 上可以使用的 {budget} GiB。vLLM 會拒絕啟動（「No available memory for the "
        "cache blocks」）。"
    ),
    "kv-cache-too-small:none.fix": (
        "增加 GPU（調高 --tensor-parallel-size）、改用量化版的 checkpoint，"
        "或在沒有其他程式使用這張 GPU 時調高 --gpu-memory-utilization。"
    ),
    "kv-cache-too-small:none.ask_ai": (
        "在 {machine} 上，{model} 沒有留下任何記憶體給 KV cache。我應該加大張量並行，"
        "還是改用量化版的 checkpoint？"
    ),
    "profile-activation-oom.title": (
        "vLLM 啟動量測時一次把 {images} 張影像送進視覺編碼器（每張 GPU 約 {encoder} GiB），"
        "沒有空間留給 KV cache"
    ),
    "profile-activation-oom.why": (
        "vLLM 在決定 KV cache 大小之前，會讓每個序列帶著 {per_prompt} 張最大尺寸的假影像，"
        "整批送進 {model} 的視覺編碼器，不管 --max-model-len 設多少。加上 {weights} GiB 的"
        "權重，這一趟要用掉 vLLM 每張 GPU 可用的 {budget} GiB 中約 {encoder} GiB：不是在量測時"
        "記憶體不足，就是找不到記憶體給 cache blocks。"
    ),
    "profile-activation-oom.fix": (
        "把 --max-num-seqs 降到 {seqs} 以下（每個序列都會帶著自己的影像進量測），"
        "或調低 --limit-mm-per-prompt。"
    ),
    "profile-activation-oom.ask_ai": (
        "在 {machine} 上，vLLM 啟動量測時一次把 {images} 張影像送進 {model} 的視覺編碼器，"
        "KV cache 就沒有空間了。我實際需要多少同時請求、每個提示幾張圖：--max-num-seqs {seqs} "
        "夠用嗎？"
    ),
    "profile-activation-oom:none.title": (
        "vLLM 啟動量測時一次把 {images} 張影像送進視覺編碼器（每張 GPU 約 {encoder} GiB），"
        "沒有空間留給 KV cache"
    ),
    "profile-activation-oom:none.why": (
        "vLLM 在決定 KV cache 大小之前，會讓每個序列帶著 {per_prompt} 張最大尺寸的影像進 "
        "{model} 的視覺編碼器。就算只有一個這樣的序列，也超過 {weights} GiB 權重之外每張 GPU "
        "剩下的 {budget} GiB。"
    ),
    "profile-activation-oom:none.fix": (
        "調低 --limit-mm-per-prompt、加 GPU（提高 --tensor-parallel-size），"
        "或在 GPU 沒有其他用途時提高 --gpu-memory-utilization。"
    ),
    "profile-activation-oom:none.ask_ai": (
        "在 {machine} 上，vLLM 量測 {model} 的視覺編碼器後，即使只有一個序列也沒有 KV cache。"
        "我該限制每個提示的圖片數，還是加 GPU？"
    ),
    "gpu-memory-utilization-range.title": "--gpu-memory-utilization {util} 不在 (0, 1] 的範圍內",
    "gpu-memory-utilization-range.why": (
        "它代表 vLLM 可以使用每張 GPU 記憶體的比例，不是百分比，也不是 GiB。超出 (0, 1] "
        "的值，vLLM 都會拒絕。"
    ),
    "gpu-memory-utilization-range.fix": "請填一個比例，例如 0.9。",
    "gpu-memory-utilization-range.ask_ai": (
        "--gpu-memory-utilization 必須是 0 到 1 之間的比例；你是不是想寫 0.9？"
    ),
    "enforce-eager.title": "--enforce-eager 會關掉 CUDA graph",
    "enforce-eager.why": (
        "CUDA graph 會把每個 decode 步驟錄下來整段重播，幾乎省掉 CPU 逐一啟動 kernel "
        "的開銷。少了它，每一步都要付這筆開銷，每個輸出 token 的時間（TPOT）就會變長，"
        "批次小的時候最明顯。它省下的記憶體和啟動時間都不多：這是除錯用的開關，不是正式上線用的。"
    ),
    "enforce-eager.fix": "除非遇到 graph capture 的 bug 非用它不可，否則請拿掉 --enforce-eager。",
    "enforce-eager.ask_ai": (
        "指令裡為什麼有 --enforce-eager？它會拖慢 decode；是為了避開某個特定的錯誤嗎？"
    ),
    "model-unknown.title": "在本機和內建目錄裡都找不到模型 {model}",
    "model-unknown.why": (
        "沒有它的 config.json，跟模型有關的檢查（attention head 與 TP、量化、上下文長度、"
        "記憶體）都跳過了。"
    ),
    "model-unknown.fix": (
        "用 --model-config PATH 指定（config.json 或它所在的資料夾），或加上 --online "
        "從 Hugging Face Hub 抓取。"
    ),
    "model-inferred.title": "內建目錄裡沒有 {model}：視為 {taken} 的微調版本",
    "model-inferred.why": (
        "它的名稱對得上 {taken}，所以層數、attention 與 KV head、尺寸、專家數、dtype 和量化的"
        "檢查都沿用那個模型的 config.json。上下文長度不沿用（微調版常會改掉它）。"
    ),
    "model-inferred.fix": (
        "如果它的架構不是這樣，請用 --model-config PATH 指定它自己的 config.json"
        "（或所在資料夾），才能精確檢查。"
    ),
    "model-inferred:copy.title": "{model} 視為 {taken} 的副本",
    "model-inferred:copy.why": (
        "資料夾或模型庫用的就是原模型的名稱，所以每一項檢查（包括上下文長度）都沿用 "
        "{taken} 的 config.json。"
    ),
    "model-inferred:copy.fix": (
        "如果檔案和 {taken} 不同，請用 --model-config PATH 指定它自己的 config.json"
        "（或所在資料夾），才能精確檢查。"
    ),
    # --- where the memory estimate is rough (capacity.Estimate.notes) ---
    "estimate-note.mxfp4-padding": (
        "MXFP4 專家權重會為了 vLLM 的 kernel 補齊尺寸（gpt-oss 的 2880 變成 2944 x 3072），"
        "權重會比模型檔大 6–9%。"
    ),
    "estimate-note.group-quant-layout": (
        "AWQ/GPTQ 權重以每個 b + (16 + z)/G bits 計算（有 zero point 時 z = b，沒有時為 0；"
        "GGUF 為 b + 0.5）；kernel 重新排列後的實際大小可能差幾個百分點"
        "（估計範圍已預留 ±3%）。"
    ),
    "estimate-note.moe-activation": (
        "混合專家（MoE）模型：vLLM 量測到的啟動記憶體高峰可能比這裡估的多"
        "（Qwen3-235B-A22B-FP8 在 TP 4、8192 個 batched token 時每張 GPU 多約 2 GiB；"
        "gpt-oss 則沒有），實際 KV cache 最多可能比顯示的少 2.5 GiB。"
    ),
    "estimate-note.multimodal-encoder": (
        "視覺語言模型：vLLM 也會量測影像編碼器的記憶體，這個模型家族的編碼器這裡沒有建模；"
        "實際 KV cache 每張 GPU 可能少約 2 GiB。"
    ),
    "estimate-note.encoder-profile": (
        "視覺語言模型：vLLM 啟動量測時影像編碼器那一趟的記憶體，依它的 config 計算"
        "（影像取最大尺寸、數量與量測批次相同），誤差約 20%（Llama 3.2 Vision 以一次記錄下的"
        "執行擬合；Qwen2.5-VL 算出 2.05 GiB，vLLM 記錄含解碼器那一趟為 2.51 GiB）。"
    ),
    "estimate-note.cuda-graphs-estimated": (
        "CUDA graph 的記憶體以 0.1 GiB 加上最大擷取尺寸對應的 0.4 GiB 計算"
        "（預設 1024 條序列時最大擷取 512：每張 GPU 0.5 GiB）；vLLM 自 0.21 起會先量測它，"
        "實際用量大約從幾乎為零到這個數字的兩倍。"
    ),
    "estimate-note.cuda-graphs-outside": (
        "這個版本在決定 KV cache 大小之後才擷取 CUDA graph：它們會用掉 --gpu-memory-utilization "
        "以外的記憶體（每張 GPU 最多約 1 GiB）。"
    ),
    "estimate-note.sampler-flashinfer": (
        "vLLM 0.8 到 0.11.0 在裝有 FlashInfer 時（vLLM 的 Docker 映像檔）會暖機 FlashInfer 的 "
        "sampler，否則（pip 安裝）用 PyTorch 以排序實作的版本：這裡以排序版計算，"
        "也就是 --max-num-seqs 條 logits 的 9.6 份複本；用 FlashInfer 時這部分的保留量"
        "約小 2.7 倍，KV cache 會大出相差的部分。"
    ),
    "estimate-note.encoder-no-kv": (
        "只有編碼器的模型（embedding、reranking、分類）：它沒有 KV cache，"
        "所以只計算權重和一次 token 預算大小的 forward。"
    ),
    "estimate-note.no-kv-memory": (
        "權重加上 profiling 保留量已超過 --gpu-memory-utilization 留下的空間：vLLM 會在啟動時"
        "因沒有 KV cache 而停止，所以這些數字是短缺的量，而不是容量。"
    ),
    "estimate-note.mla-full-kv": (
        "這個版本對 MLA 模型的每個 head 都快取完整的 K 與 V，而不是它的 latent"
        "（0.7.1 之前 head size 為 256；0.7.1 與 0.7.2 中 fp8 與 compressed-tensors 以外的"
        "checkpoint 為 192）：每個 token 的 KV 是 0.7.3 起的 10 到 30 倍。"
    ),
    "estimate-note.release-unknown-unchunked": (
        "沒有指定 vLLM 版本，因此採用最新版本的預設值（分塊預填）。0.8 之前的版本在不分塊時"
        "（context 低於 32K，0.5.3 之前則不論長度）會以一整個 --max-model-len 長度的 prompt "
        "做記憶體分析，這裡每張 GPU 會多保留超過 1 GiB："
        "請以 --vllm-version 指定版本取得該版本的數字。"
    ),
    "hardware-unknown.title": "沒有 GPU 資訊：已跳過硬體檢查",
    "hardware-unknown.why": (
        "沒有指定 --gpus，這台機器上的 NVML 也找不到 NVIDIA GPU，所以 GPU 張數、"
        "記憶體和運算能力的檢查都跳過了。"
    ),
    "hardware-unknown.fix": (
        "用 --gpus 指定，例如 --gpus 2xA100-80GB（也就是在伺服器上執行 `nvidia-smi -L` "
        "看到的型號）。"
    ),
    "hardware-unknown:count-only.title": "不知道 GPU 型號：已跳過記憶體與運算能力的檢查",
    "hardware-unknown:count-only.why": (
        "目前只知道 GPU 張數（{count}），所以記憶體、dtype 和量化支援的檢查都跳過了。"
    ),
    "hardware-unknown:count-only.fix": "把 GPU 型號也寫上，例如 --gpus {count}xA100-80GB。",
    "hardware-unknown:cpu.title": "vLLM 的 CPU 後端：已跳過 GPU 檢查",
    "hardware-unknown:cpu.why": (
        "這個指令跑在 CPU 上（--gpus CPU），沒有 GPU 記憶體、運算能力或 GPU kernel 可檢查："
        "記憶體估算以及 dtype、量化和 KV cache dtype 的檢查都跳過了（KV cache 是 "
        "VLLM_CPU_KVCACHE_SPACE GiB 的主機記憶體）。"
    ),
    "hardware-unknown:cpu.fix": "如果伺服器有 GPU，請改給 GPU，例如 --gpus 1xL4。",
    "hardware-unknown:platform.title": "{gpu}（{platform}）：已跳過 CUDA 檢查",
    "hardware-unknown:platform.why": (
        "bfloat16、量化 kernel 和 fp8 KV cache 的檢查要看 CUDA 的運算能力，{platform} 裝置沒有，"
        "所以跳過了；記憶體則以每個裝置 {memory} GiB 檢查。"
    ),
    "hardware-unknown:platform.fix": "請對照 vLLM {platform} 後端支援的清單檢查 dtype 和量化方法。",
    # --- the report around the findings ---
    "report.error": "錯誤",
    "report.warning": "警告",
    "report.info": "備註",
    "report.why": "原因",
    "report.fix": "修正",
    "report.ask": "問你的 AI",
    "report.corrected": "修正後的指令",
    "report.capacity": "容量估算（每張 GPU）",
    "report.model": "模型",
    "report.hardware": "硬體",
    "report.vllm": "vLLM",
    "report.settings": "實際生效的設定",
    "report.stop": "先別啟動：有 {n} 個錯誤會讓 vLLM 啟動失敗或無法正常運作。",
    "report.warn": "可以啟動，但有 {n} 個警告會浪費速度、記憶體或預算。",
    "report.ok": "看起來沒問題：沒有發現紅旗。",
    "report.unknown": "未知",
    "report.none": "無（已略過相關檢查）",
    "report.weights": "權重",
    "report.kv_token": "每個 token 的 KV cache",
    "report.reserve": "啟動計算與額外保留",
    "report.kv_cache": "KV cache",
    "report.kv_tokens": "KV cache 可存 token 數",
    "report.concurrency": "max-model-len 長度下可同時服務的序列數",
    "report.heads": "{heads} 個注意力頭 / {kv_heads} 個 KV 頭",
    "report.context": "上下文長度 {tokens}",
    "report.experts": "MoE {experts} 個專家",
    "report.list_separator": "，",
    "report.gpu_count": "{count}x GPU（來源：{source}）",
    "report.gpu_spec": "{count}x {name}（{memory} GiB，運算能力 {capability}，來源：{source}）",
    "report.heading": "{name}：{text}",
    "report.model_source": "{model}（{source}）",
    "report.source.local": "本機資料夾",
    "report.source.hf-cache": "Hugging Face 快取",
    "report.source.catalog": "內建目錄",
    "report.source.inferred": "依名稱推測",
    "report.source.hub": "從 Hugging Face Hub 線上取得",
    "report.default_note": "（{note}）",
    "report.version": "{version}（來源：{source}）",
    # where a default or the vLLM version came from (review.settings, vllm.serve_command)
    "default.batch.v0": "vLLM {version} 的預設值（0.8 之前的引擎：每種 GPU 都是 256 個序列）",
    "default.batch.unknown-gpu": "vLLM 對 70 GiB 以下 GPU 的預設值（不知道是哪種 GPU）",
    "default.batch.160gib": "vLLM {version} 對 160 GiB 以上 GPU 的預設值",
    "default.batch.70gib-not-a100": "vLLM {version} 對 {gpu} 的預設值（70 GiB 以上，且不是 A100）",
    "default.batch.70gib": "vLLM {version} 對 70 GiB 以上 GPU 的預設值",
    "default.batch.gpu": "vLLM {version} 對 {gpu} 的預設值",
    "default.chunked.v0": "vLLM 0.6 只在 context 超過 32K 時才開啟分塊預填（chunked prefill）",
    "default.chunked.v1": "vLLM {version}（V1 引擎）一律分塊預填",
    "default.chunked.on": "生成式模型預設開啟",
    "default.dtype.float32-bf16": "auto：float32 的 checkpoint 以 bfloat16 執行",
    "default.dtype.gemma2": "auto：vLLM 以 bfloat16 執行 float32 的 Gemma 2",
    "default.dtype.float32-fp16": "auto：float32 的 checkpoint 以 float16 執行",
    "default.dtype.float32-only": "auto：這張 GPU 不支援 bfloat16，而這個模型不接受 float16",
    "default.dtype.no-bf16": "auto：這張 GPU 不支援 bfloat16，vLLM 改用 float16",
    "default.dtype.checkpoint": "auto：沿用 checkpoint 本身的 dtype",
    "default.max-model-len": "模型設定裡的 {key}",
    "default.gpu-memory-utilization": "vLLM {version} 的預設值",
    "version.flag": "由 --vllm-version 指定",
    "version.image": "docker 映像檔標籤 {tag}",
    "version.installed": "本機安裝的 vllm 套件",
    "version.newest": "已知的最新版本",
    "version.stand-in": "{source}；{version} 沒有公開的原始碼，改用 {table} 的參數表",
    # 本身是詞語的事實（review.rules：數字或名稱不明的時候）
    "memory-variant.why": (
        "{why}這個 GPU 名稱有不只一種記憶體容量的版本，此判斷只對 {holds} 成立，"
        "在 {spared} 上並不成立。請在 `--gpus` 寫出卡的記憶體（`H20-96GB`、`H20-3e`），"
        "才能得到確切的判斷。"
    ),
    "fact.machine-unknown": "張數不明的 GPU",
    "fact.older-release": "較舊的版本",
    "fact.later-release": "之後的版本",
    "fact.no-model": "（沒有指定）",
}
