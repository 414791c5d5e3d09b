"""What servetune's errors say, in English: the message of every `ServetuneError` raised on
purpose, and its hint under `<key>.hint` (the error's hint unless the raise gives another one).
Shared hints are `hint.<name>`, a feature that needs an extra is `feature.<name>`.

A slot that the raise fills with no fact names a config field (`{workers}`, `{api_key}`): the
library says the field, the CLI the flag that sets it (`errors.py`). Literal braces are doubled.
"""

from __future__ import annotations

TEXTS: dict[str, str] = {
    "interrupted": "interrupted",
    # --- shared hints -----------------------------------------------------------------------
    "hint.did-you-mean": "did you mean {guess}?",
    "hint.file-path": "check the path given to --file",
    "hint.alert-rules": "give a Prometheus rule file, a PrometheusRule or a Grafana dashboard",
    "hint.vllm-log": "give a vLLM log file",
    "hint.server-log": "give the server's log",
    "hint.postmortem-input": (
        "give a vLLM log, a /metrics snapshot, a range-query export or a bench result"
    ),
    "hint.result-files": (
        "give result files of `servetune bench` or `vllm bench serve --save-result`"
    ),
    "hint.quality-result": "give the file written by `servetune quality --output FILE`",
    "hint.executor-ray": "add --executor ray to place trials side by side",
    "hint.base-url": "a server's base URL looks like http://127.0.0.1:8000",
    "hint.question-line": 'expected {{"prompt": ..., "answer": ...}}',
    # --- an optional extra that is not installed --------------------------------------------
    "missing-extra": "{feature} needs the optional extra '{extra}'",
    "missing-extra.hint": "pip install 'servetune[{extra}]'",
    "feature.tune-ray": "tune --executor ray",
    "feature.tune-report": "tune's report.html",
    "feature.plan-plot": "plan's --plot",
    "feature.postmortem-plot": "postmortem's --plot",
    "plot.cannot-write": "cannot write the plot {path}: {reason}",
    "plot.cannot-write.hint": "choose another --plot path",
    # --- files ------------------------------------------------------------------------------
    "cannot-read": "cannot read {path}: {reason}",
    "cannot-write": "cannot write {path}: {reason}",
    # --- the command line (argparse's own words stay as argparse says them) ----------------
    "cli.usage": "{message}",
    "cli.usage.hint": "see `{prog} --help`",
    "cli.no-serve-command": "{name} takes no command after `--`",
    "cli.no-serve-command.hint": "see `servetune {name} --help`",
    "cli.command-twice": "give the command either after `--` or with --file, not both",
    "cli.bad-slo": "bad {option} item {item!r}",
    "cli.bad-slo.hint": "use KEY:MS with KEY one of {keys}",
    "check.no-command": "no command to review",
    "check.no-command.hint": (
        "put it after `--`: servetune check --gpus 1xL4 -- vllm serve MODEL ..."
    ),
    "watch.command-twice": "give the command with --serve-command or --file, not both",
    "compare.two-sides": "compare needs a BEFORE and an AFTER",
    "compare.two-sides.hint": "servetune compare OLD.json NEW.json",
    "plan.lengths": "plan needs the request lengths",
    "plan.lengths.hint": "give --input-len N and --output-len N",
    "plan.load": "give exactly one of --concurrency and --request-rate",
    "plan.load.hint": "--concurrency 50 for 50 users at once; --request-rate 4 for 4 requests/s",
    # --- a `vllm serve` command -------------------------------------------------------------
    "command.unsplittable": "cannot split the command into words: {reason}",
    "command.unsplittable.hint": "check that every quote in the command is closed",
    "command.none": "no `vllm serve` command found in the text",
    "command.none.hint": (
        "the text must contain a line starting with `vllm serve`, "
        "`python -m vllm.entrypoints.openai.api_server` or `docker run ... vllm/vllm-openai`"
    ),
    "command.no-image": "the docker command names no image",
    "command.no-image.hint": "give the vLLM image, e.g. vllm/vllm-openai:latest",
    "command.not-serve": "`vllm {sub}` is not `vllm serve`",
    "command.not-serve.hint": "servetune reviews server launches: `vllm serve MODEL [flags]`",
    "command.not-vllm": "not a vLLM server command: {words!r}",
    "command.not-vllm.hint": (
        "expected `vllm serve MODEL ...`, `python -m vllm.entrypoints.openai.api_server ...` "
        "or `docker run ... vllm/vllm-openai ...`"
    ),
    # --- GPUs -------------------------------------------------------------------------------
    "gpus.unknown": "unknown GPU name: {name!r}",
    "gpus.known": "known GPUs: {names}",
    "gpus.mixed-unreadable": "cannot read {part!r} in a mixed set of GPUs",
    "gpus.mixed-unreadable.hint": "name each card: e.g. --gpus 1xRTX-5070-Ti+1xRTX-5090-D",
    "gpus.mixed-platforms": (
        "vLLM runs one platform at a time: CUDA and ROCm cards cannot serve one model"
    ),
    "gpus.mixed-platforms.hint": "give the cards of one vendor",
    "gpus.count-min": "--gpus must be at least 1",
    "gpus.count-min.hint": "e.g. --gpus 2xA100-80GB",
    "gpus.unreadable": "cannot read --gpus {text!r}",
    "gpus.unreadable.hint": "use N, NAME or NxNAME, e.g. 2xA100-80GB",
    "gpus.name-min": "--gpus must name at least 1 GPU",
    "gpus.name-min.hint": "e.g. --gpus 2xA100-80GB",
    # --- serve: launching vLLM; doctor: reading its log -------------------------------------
    "launch.no-vllm": "no vLLM executable found",
    "launch.no-vllm.hint": "pass {vllm} PATH, set SERVETUNE_VLLM, or put `vllm` on PATH",
    "launch.not-executable": "not an executable: {path}",
    "launch.not-executable.hint": "give the path to the `vllm` program",
    "launch.docker": "serve launches `vllm serve` commands, not docker",
    "launch.docker.hint": "run the container yourself, then `servetune doctor` its log",
    "launch.bench": "this is an offline benchmark (it runs its own engine), not a server",
    "launch.bench.hint": "serve launches `vllm serve`; give it that command, or run the "
    "benchmark yourself",
    "doctor.not-vllm": (
        "this is not a vLLM log: none of its lines is one vLLM prints (its `INFO 05-01 12:00:00 "
        "[file.py:1]` prefix, process tags such as `(APIServer pid=1)`, its files in a "
        "traceback, its banner or its own messages)"
    ),
    "doctor.not-vllm.hint": (
        "give doctor the vLLM server's own output, stdout and stderr: `docker logs CONTAINER`, "
        "`kubectl logs POD`, or the file `vllm serve ... 2>&1 | tee vllm.log` wrote"
    ),
    # --- bench: the server, the options, the workload ---------------------------------------
    "client.not-a-url": "not an http(s) base URL: {url!r}",
    "client.bad-port": "not a valid port in {url!r}",
    "bench.unreachable": "cannot reach the server at {url}: {why}",
    "bench.unreachable.hint": (
        "check {base_url} and that the server is up (curl BASE_URL/v1/models)"
    ),
    "bench.key-refused": "the server refused the API key ({status})",
    "bench.key-refused.hint": "pass {api_key} or set OPENAI_API_KEY",
    "bench.workers-min": "{workers} must be at least 1",
    "bench.workers-over-slots": "{max_concurrency} {cap} is below {workers} {count}",
    "bench.workers-over-slots.hint": (
        "each worker needs at least one concurrency slot: use fewer workers"
    ),
    "bench.workers-count": "{workers} must be a positive integer or auto, not {text!r}",
    "bench.worker-start": "a bench worker process did not start",
    "bench.worker-start.hint": "try fewer {workers}",
    "bench.dataset-needs-path": "{dataset_name} {name} needs {dataset_path}",
    "bench.dataset-needs-path.hint": "give the file's path",
    "bench.dataset-path": "--dataset-name {name} needs --dataset-path",
    "bench.no-such-file": "no such file: {path}",
    "bench.no-such-file.hint": "check --dataset-path",
    "bench.duration": "--duration needs a --request-rate or a --max-concurrency",
    "bench.duration.hint": "otherwise requests would be sent without limit",
    "bench.cannot-save": "cannot write {path}: {reason}; the result was saved to {rescue}",
    "bench.cannot-save.hint": "check --output / --result-dir",
    "workload.not-json": "{path} is not valid JSON: {reason}",
    "workload.not-object": "{where}: expected a JSON object",
    "workload.max-tokens": "{where}: max_tokens must be a positive integer",
    "workload.no-prompt": "{where}: needs a string 'prompt' or a list of 'messages'",
    "workload.no-prompt.hint": (
        'each line: {{"prompt": "..."}} or {{"messages": [{{"role": "user", "content": "..."}}]}}'
    ),
    "workload.line-not-json": "{path}:{number}: not valid JSON ({reason})",
    "workload.no-prompts": "{path} holds no prompts",
    "workload.not-sharegpt": "{path} is not a ShareGPT file (a JSON list of conversations)",
    "workload.no-conversations": "{path} holds no usable conversations",
    "workload.no-conversations.hint": "expected ShareGPT format",
    # --- compare and accept: result files ---------------------------------------------------
    "runs.none": "no result files given",
    "runs.empty-folder": "{path}: no *.json files in this folder",
    "runs.no-such": "{path}: no such file or folder",
    "runs.not-json": "{path}: not JSON ({reason}, line {line} column {column})",
    "runs.empty-file": "{path}: the file is empty",
    "runs.not-a-result": "{source}: not a bench result (no `completed` and `duration`)",
    "compare.unknown-metric": "unknown metric {name!r}",
    "compare.unknown-metric.hint": "metrics: {names}",
    "compare.empty-side": "each side needs at least one run",
    # --- tune -------------------------------------------------------------------------------
    "tune.slo-percentile": "--slo-percentile must be below 100",
    "tune.slo-percentile.hint": "for example 99 or 95",
    "tune.dataset-path": "--dataset-name {name} needs an existing --dataset-path",
    "tune.no-command": "no command to tune",
    "tune.no-command.hint": "put it after `--`: servetune tune ... -- vllm serve MODEL ...",
    "tune.bad-knob": "--knob {text!r}: expected FLAG=V1,V2,...",
    "tune.bad-knob.hint": "for example --knob max-num-seqs=64,128,256",
    "tune.ray-address": "--ray-address needs --executor ray",
    "tune.parallel": "--parallel needs --executor ray: here trials run one at a time",
    "tune.interference-check": "--interference-check needs --executor ray",
    "tune.bad-address": "bad {address} {text!r}",
    "tune.bad-address.hint": (
        "use auto (this machine's cluster), local (a private Ray here) or ray://HOST:PORT"
    ),
    "tune.no-ray-cluster": "could not reach the Ray cluster at {at}: {why}",
    "tune.no-ray-cluster.hint": (
        "start one (`ray start --head` on this node) or use {address} local"
    ),
    # --- quality ----------------------------------------------------------------------------
    "quality.no-builtin": "no built-in dataset named {name!r}",
    "quality.no-builtin.hint": "built-in datasets: {names}",
    "quality.cannot-read-dataset": "cannot read the dataset {spec}: {reason}",
    "quality.cannot-read-dataset.hint": (
        'a JSON lines file, one {{"prompt": ..., "answer": ...}} per line, or builtin:math'
    ),
    "quality.no-questions": "the dataset {source} holds no questions",
    "quality.no-questions.hint": "one JSON object per line",
    "quality.line": "{source}, line {number}",
    "quality.not-json": "{where} is not JSON: {reason}",
    "quality.not-object": "{where} is not a JSON object",
    "quality.needs-prompt": "{where} needs a non-empty string `prompt` and `answer`",
    "quality.answer-not-number": (
        "{where}: the answer {answer!r} is not a number but kind is 'number'"
    ),
    "quality.bad-kind": "{where}: kind must be 'number' or 'text', not {kind!r}",
    "quality.num-min": "{num} must be at least 1",
    "quality.cannot-read-result": "cannot read the quality result {path}: {reason}",
    "quality.not-a-result": "{path} is not a servetune quality result (no verdict)",
    "quality.not-a-url": "{url!r} is not a server URL",
    "quality.not-a-url.hint": "give the base URL, e.g. http://127.0.0.1:8000",
    "quality.unreachable": "cannot reach the server at {url}: {why}",
    "quality.unreachable.hint": "check the URL and that the server is up (curl URL/v1/models)",
    "quality.no-answer": "no answer to GET /v1/models in {timeout_s:g} s",
    "quality.not-http": "its answer is not HTTP ({detail})",
    "quality.key-refused": "{url} refused the API key ({status})",
    "quality.key-refused.hint": "pass {api_key}",
    "quality.models-not-json": ("{url} answered GET /v1/models with something that is not JSON"),
    "quality.models-not-json.hint": (
        "check that the URL is an OpenAI-compatible server's (vLLM: http://HOST:8000)"
    ),
    "quality.wrong-model": "{url} does not serve a model named {model!r}",
    "quality.wrong-model.hint": "it serves: {names}",
    "quality.serves-guess": "it serves: {names} (did you mean {guess}?)",
    "quality.timeout": "--request-timeout must be positive",
    "hint.output-path": "choose another --output path",
    # --- alerts, report, monitor, model config --------------------------------------------
    "alerts.mode": "give --output DIR (write rules) or --lint FILE (check rules), one of them",
    "alerts.mode.hint": "see `servetune alerts --help`",
    "alerts.lint-caps": "--lint checks metric names only: it takes --vllm-version, not the caps",
    "alerts.lint-caps.hint": "leave out --serve-command, --file, --gpus and --log",
    "report.needs-both": "a comparison needs both --before and --after",
    "report.needs-both.hint": "--before OLD --after NEW",
    "report.nothing": "nothing to report",
    "report.nothing.hint": "servetune report RESULT.json --output report.html",
    "report.no-such-path": "{path}: no such file or folder",
    "report.not-object": "{path}: not a JSON object",
    "report.trial-no-flags": "trial {number} of tune.json has no flags",
    "report.no-trials": "{path}: no trials",
    "monitor.not-a-version": "not a vLLM version: {version}",
    "monitor.not-a-version.hint": "give a release such as 0.11.0",
    "monitor.version-too-old": "servetune knows vLLM's /metrics names from {first} on, not {asked}",
    "monitor.version-too-old.hint": "give --vllm-version {first} or later",
    "monitor.no-samples": "{name}: no vLLM stats lines, /metrics page or samples found",
    "monitor.mixed-clocks": "cannot put vLLM's month-day stamps and plain seconds on one timeline",
    "monitor.mixed-clocks.hint": "give the logs and the metric exports to two postmortems",
    "monitor.nothing": "{name}: nothing to analyse",
    "monitor.nothing.hint": "give a file with samples",
    "monitor.cannot-scrape": "cannot scrape {url}/metrics: {reason}",
    "monitor.cannot-scrape.hint": "check the URL and that the server is up",
    "monitor.no-metrics": "{url} has no /metrics page",
    "monitor.no-metrics.hint": "watch needs vLLM's Prometheus endpoint",
    "model.not-object": "{path} holds a JSON {kind}, not an object",
    "model.not-object.hint": "the file must be the model's config.json",
    "model.url-not-object": "{url} is not a config.json object",
    "model.cannot-read": "cannot read {path}: {reason}",
    "model.cannot-read.hint": "check the path to the config.json",
    "model.not-json": "{path} is not valid JSON: {reason}",
    "model.not-json.hint": "the file must be the model's config.json",
    "model.hub-status": "the hub answered {status} for {url}",
    "model.cannot-fetch": "cannot fetch {url}: {reason}",
    "model.cannot-fetch.hint": "pass --model-config PATH to a local config.json",
    "hint.report-input": (
        "give bench result files or folders, a tune directory, or the JSON of "
        "`plan --format json` or `postmortem --format json`"
    ),
    "hint.tune-dir": "give the --output folder of `servetune tune` (it holds tune.json)",
    "hint.gated-model": "set HF_TOKEN for gated models",
    "hint.model-id": "check the model id",
    "monitor.not-rules": "{path} is neither JSON nor YAML: {reason}",
    "vllm.not-a-version": "not a vLLM version: {version}",
    "vllm.not-a-version.hint": "give a release number such as 0.8.5 or 0.33.0",
    "plan.model-unknown": "plan needs the model's facts and {model} is not known",
    "plan.model-unknown.hint": "pass --model-config PATH/config.json",
    "plan.gpu-unknown": "plan needs the GPU model",
    "plan.gpu-unknown.hint": "pass --gpus, e.g. --gpus 1xH100-80GB",
    "plan.request-too-long": (
        "a request of {tokens} tokens ({input_len} in + {output_len} out) is longer than "
        "--max-model-len {length}: vLLM answers every such request with an error (400, "
        "'maximum context length'), so there is nothing to plan"
    ),
    "plan.request-too-long.hint": (
        "raise --max-model-len to {tokens} or more (if the KV cache holds it), or plan the "
        "lengths your users send"
    ),
    "plan.no-calibration": "no run to calibrate on has throughput or latency figures",
    "plan.no-calibration.hint": (
        "give result files written by servetune bench or vllm bench serve --save-result"
    ),
}
