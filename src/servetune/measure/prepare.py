"""Everything a load test decides before its first request: that the server answers (and takes
the API key), its version, the server's prefix cache emptied where it allows that (else a fresh
seed for the random prompts' text, so that repeated runs cannot warm each other's cache), the
prompts and the seeded arrival schedule.
"""

from __future__ import annotations

import json
import math
import random
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from servetune.errors import ServerUnreachable, UsageError
from servetune.measure import schedule, server_metrics, workload
from servetune.measure.client import HttpClient, RequestFailed, json_body
from servetune.measure.workload import Prompt, WorkloadSpec
from servetune.texts import ErrorText

if TYPE_CHECKING:  # bench builds on this module
    from servetune.measure.bench import BenchConfig


async def _get_json(client: HttpClient, path: str) -> object | None:
    try:
        response = await client.request("GET", path, timeout_s=10.0)
    except (RequestFailed, TimeoutError, OSError):
        return None
    if response.status != 200:
        return None
    try:
        data: object = json.loads(response.body)
    except ValueError:
        return None
    return data


async def _preflight(client: HttpClient, base_url: str) -> None:
    """Fail fast (exit 2) when nothing answers at the base URL, or it refuses the API key."""
    try:
        response = await client.request("GET", "/v1/models", timeout_s=15.0)
    except (RequestFailed, TimeoutError, OSError) as exc:
        raise ServerUnreachable(ErrorText("bench.unreachable", url=base_url, why=exc)) from exc
    if response.status in (401, 403):
        raise UsageError(ErrorText("bench.key-refused", status=response.status))


def _tokenizer_calls(
    client: HttpClient, model: str
) -> tuple[workload.Tokenize, workload.Detokenize]:
    async def post(path: str, payload: dict[str, object], key: str) -> object:
        """`key` of the JSON answer, or None when the server has no such endpoint."""
        try:
            response = await client.request("POST", path, json_body(payload), 30.0)
            data = json.loads(response.body) if response.status == 200 else None
        except (RequestFailed, TimeoutError, OSError, ValueError):
            return None
        return data.get(key) if isinstance(data, dict) else None

    async def tokenize(text: str) -> list[int] | None:
        tokens = await post("/tokenize", {"model": model, "prompt": text}, "tokens")
        return tokens if isinstance(tokens, list) and tokens else None

    async def detokenize(ids: list[int]) -> str | None:
        text = await post("/detokenize", {"model": model, "tokens": ids}, "prompt")
        return text if isinstance(text, str) else None

    return tokenize, detokenize


async def build_prompts(
    config: BenchConfig,
    client: HttpClient,
    rng: random.Random,
    count: int,
    content_rng: random.Random | None = None,
) -> tuple[list[Prompt], str]:
    """`count` prompts for the run and how random prompt lengths were made (`rng` draws the
    shape, `content_rng` the random prompts' text)."""
    spec = config.workload
    if spec.dataset_name == "random":
        tokenize, detokenize = _tokenizer_calls(client, config.model)
        sized = WorkloadSpec(**{**spec.__dict__, "num_prompts": count})
        return await workload.random_prompts(
            sized, rng, tokenize, detokenize, content_rng=content_rng
        )
    if spec.dataset_path is None:
        raise UsageError(ErrorText("bench.dataset-needs-path", name=spec.dataset_name))
    if spec.dataset_name == "jsonl":
        pool = workload.jsonl_prompts(spec.dataset_path, spec.random_output_len)
    else:
        pool = workload.sharegpt_prompts(spec.dataset_path, spec.sharegpt_output_len)
    return workload.pick(pool, count, rng), "dataset"


@dataclass(frozen=True)
class Plan:
    """Everything decided before the first request: prompts, schedule, cache isolation."""

    config: BenchConfig
    version: str | None
    prefix_cache_reset: bool
    prompt_seed: int | None
    tokenizer_mode: str
    warmup: list[Prompt]
    measured: list[Prompt]
    arrivals: list[float] | None  # None: a timed closed loop, sent as slots free up
    date: str


def _arrivals(config: BenchConfig, count: int) -> list[float] | None:
    rng = random.Random(config.seed + 1)
    if config.duration_s is None:
        return schedule.arrival_times(count, config.request_rate, config.burstiness, rng)
    if math.isinf(config.request_rate):
        return None
    return list(
        schedule.arrivals_until(config.duration_s, config.request_rate, config.burstiness, rng)
    )


def _prompt_seed(config: BenchConfig, reset: bool) -> int | None:
    if config.workload.dataset_name != "random":
        return None
    if config.prompt_seed is not None:
        return config.prompt_seed
    return config.seed if reset else random.SystemRandom().randrange(2**32)


async def plan(config: BenchConfig, client: HttpClient) -> Plan:
    await _preflight(client, config.base_url)
    version_doc = await _get_json(client, "/version")
    version = version_doc.get("version") if isinstance(version_doc, dict) else None
    reset = await server_metrics.reset_prefix_cache(client)
    prompt_seed = _prompt_seed(config, reset)
    count = max(config.workload.num_prompts, 1) + config.warmup
    text_rng = random.Random(prompt_seed) if prompt_seed is not None else None
    prompts, mode = await build_prompts(config, client, random.Random(config.seed), count, text_rng)
    measured = prompts[config.warmup :]
    return Plan(
        config=config,
        version=version if isinstance(version, str) else None,
        prefix_cache_reset=reset,
        prompt_seed=prompt_seed,
        tokenizer_mode=mode,
        warmup=prompts[: config.warmup],
        measured=measured,
        arrivals=_arrivals(config, len(measured)),
        date=datetime.now(UTC).strftime("%Y%m%d-%H%M%S"),
    )
