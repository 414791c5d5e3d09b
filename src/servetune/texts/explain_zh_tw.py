"""What `explain` says about each flag, in Traditional Chinese (Taiwan): twin of `explain_en`."""

# RUF001: full-width punctuation is the correct punctuation in Chinese prose.

from __future__ import annotations

TEXTS: dict[str, str] = {
    "model": "要服務的模型（Hugging Face 名稱或本機資料夾）。",
    # --- tensor parallelism ---
    "tp.one": (
        "張量並行（TP）= 1：整個模型放在一張 GPU 上跑（預設值）。設得更大，就會把每一層切給"
        "那麼多張 GPU，每張只放一部分權重，省下的記憶體變成 KV cache；通常等於一台機器上的 GPU 數。"
    ),
    "tp.many": (
        "張量並行（TP）= {tp}：把模型的每一層切成 {tp} 份，分給 {tp} 張 GPU 一起算，"
        "每張 GPU 只放 1/{tp} 的權重，省下的記憶體變成 KV cache。GPU 之間每層都要同步，"
        "所以 TP 通常等於一台機器上的 GPU 數，不跨機器。{heads}預設值是 1。"
    ),
    "tp.heads": "{model} 有 {heads} 個注意力頭，每張 GPU 算其中 {share} 個（TP 必須能整除它）。",
    # --- max-num-seqs ---
    "max-num-seqs": (
        "同時服務的請求上限 = {seqs}{note}。連續批次處理就像共乘計程車："
        "這是車上最多能坐幾個人。再多的請求只能排隊等，首字延遲（TTFT）會變長；"
        "坐得越滿，總吞吐量越高，但每個人的出字速度（TPOT）會變慢一些。"
        "能坐多少還受 KV cache 大小限制：位子夠但記憶體不夠時，vLLM 會把請求搶佔（preempt）。"
    ),
    "max-num-seqs.default": "（這是 vLLM 依版本與 GPU 選的預設值：{default}）",
    "max-num-seqs.replaced": "（取代 vLLM 在這裡的預設值 {vllm_default}）",
    # --- max-num-batched-tokens ---
    "max-num-batched-tokens": (
        "每一步（一次 GPU 前向計算）最多處理 {mbt} 個 token{replaced}，"
        "所有正在跑的請求共用這個預算："
        "每個在解碼的請求佔 1 個，剩下的給新請求讀 prompt（prefill）。{mode}"
        "設太小，GPU 吃不飽、首字延遲變長卻不會報錯；設大一點，prefill 更快，"
        "但每一步變長，正在出字的人會卡一下。"
    ),
    "max-num-batched-tokens.default": "（vLLM 的預設值）",
    "max-num-batched-tokens.replaced": "（取代 vLLM 在這裡的預設值 {vllm_default}）",
    "max-num-batched-tokens.chunked": (
        "因為開著分段預填（chunked prefill），長的 prompt 會被切成多段，跨好幾步讀完。"
    ),
    "max-num-batched-tokens.whole": (
        "分段預填關著，所以一整個 prompt 必須塞得進一步，這個值不能小於 max-model-len。"
    ),
    # --- quantization ---
    "quantization": "量化方式。{how}{checkpoint}",
    "quantization.online": "`{method}` 是「載入時即時量化」：把原本的權重在載入時轉成低精度。",
    "quantization.offline": (
        "`{method}` 是告訴 vLLM「這個 checkpoint 已經是 {method} 格式，請這樣讀」，"
        "它不會幫你把原始模型量化；通常不用寫，vLLM 會從 config.json 自動偵測。"
    ),
    "quantization.quantized": "這個 checkpoint 本身是 {checkpoint_method} 量化的。",
    "quantization.plain": "這個 checkpoint 沒有量化設定。",
    # --- dtype ---
    "dtype": (
        "計算用的數值格式，這裡會用 {dtype}。bfloat16 和 float16 都是 16 位元，"
        "bfloat16 數值範圍大、不容易溢位，但要 Ampere（A100、A10、RTX 30 系列）以後的 GPU；"
        "float16 在舊卡（V100、T4）也能跑，但用 bfloat16 訓練的模型換成它可能溢位。"
        "預設 auto 會用 checkpoint 自己的格式。"
    ),
    # --- fixed notes ---
    "note.--max-model-len": (
        "單一請求最長可以多長（prompt 加回答的 token 數）。KV cache 至少要裝得下一個"
        "這麼長的請求，所以設短一點，就能同時服務更多人。預設值是模型本身的上限。"
    ),
    "note.--gpu-memory-utilization": (
        "vLLM 啟動時向每張 GPU 預先拿走的記憶體比例。權重和計算暫存從裡面扣，"
        "剩下的全部變成 KV cache。"
    ),
    "note.--enforce-eager": (
        "關掉 CUDA graph：啟動快一點、省一點記憶體，但出字變慢。通常只在除錯時用。"
    ),
    "note.--kv-cache-dtype": (
        "KV cache 的數值格式。fp8 讓它小一半（可存兩倍 token），精度略降；auto 跟模型一樣。"
    ),
    "note.--enable-chunked-prefill": (
        "讓 vLLM 把長 prompt 分段讀，和別人的出字穿插進行，一個長 prompt 不會卡住所有人。"
    ),
    "note.--enable-prefix-caching": (
        "相同開頭的 prompt（系統提示、對話歷史）可以共用 KV cache，不必重算。新版 vLLM 預設開啟。"
    ),
    "note.--pipeline-parallel-size": (
        "把模型的層切成前後幾段，放在不同 GPU（常是跨機器）；單機內通常比張量並行慢。"
    ),
    "note.--data-parallel-size": (
        "在同一個 API 後面跑好幾份完整的模型：吞吐量更高，每份都要自己的 GPU。"
    ),
    "note.--served-model-name": "用戶端在請求裡填的模型名稱（`model` 欄位），取代原本的路徑。",
    "note.--host": "伺服器監聽的位址（0.0.0.0 代表所有網路介面）。",
    "note.--port": "OpenAI 相容 API 的連接埠（預設 8000）。",
    "note.--trust-remote-code": (
        "允許執行模型倉庫裡附帶的 Python 程式。有些模型需要；只對信任的來源開啟。"
    ),
    "note.--api-key": "用戶端必須帶這把金鑰（Authorization: Bearer ...）才能呼叫。",
    "note.--kv-cache-memory-bytes": (
        "直接指定 KV cache 大小（位元組），不看 --gpu-memory-utilization。"
    ),
    # --- any other flag ---
    "generic": (
        "vLLM 的{kind}{default}。servetune 還沒有這個參數的白話說明；"
        "細節請看 `vllm serve --help={name}`。"
    ),
    "generic.switch": "開關（on/off）",
    "generic.option": "需要一個值的選項",
    "generic.default": "，預設值 {default}",
}
