"""The per-release flag tables (built from vLLM's sdists by scripts/build_flag_tables.py).

They are checked against the hand-verified inventories of real vLLM wheels
(tests/data/vllm_flags_verified.json, copied from ../shared/reference/vllm-flags/), and on flags
whose removal release the sdists pin down.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path
from types import ModuleType

import pytest
from repo_scripts import load

from servetune.vllm import flags as vllm_flags
from servetune.vllm.serve_command import parse_text

ROOT = Path(__file__).resolve().parents[2]
VERIFIED = json.loads((ROOT / "tests" / "data" / "vllm_flags_verified.json").read_text("utf-8"))

# Where the sdist reading and the wheel inventory differ, and why vLLM's source wins.
KNOWN_DIFFERENCES = {
    # 0.6.6's `vllm serve` subparser adds --config (vllm/scripts.py); the inventory listed only
    # make_arg_parser's options.
    "0.6.6.post1": {"--config"},
}


@pytest.mark.parametrize("version", sorted(VERIFIED["tables"]))
def test_generated_table_equals_the_verified_inventory(version: str) -> None:
    verified = {f for f in VERIFIED["tables"][version] if not f.startswith("--no-")}
    generated = set(vllm_flags.flags_of(version))
    assert vllm_flags.table_for(version) == version
    assert generated - verified == KNOWN_DIFFERENCES.get(version, set())
    assert verified - generated == set()


def test_every_minor_release_from_0_4_to_0_33_has_its_own_table() -> None:
    releases = vllm_flags.known_versions()
    for minor in range(4, 34):
        own = [v for v in releases if v.startswith(f"0.{minor}.")]
        assert own, f"no table for 0.{minor}"
        assert vllm_flags.table_for(f"0.{minor}.0") in own


def test_post_and_four_part_releases_sort_after_their_base() -> None:
    assert vllm_flags.table_for("0.6.1.post1") == "0.6.1.post1"
    assert vllm_flags.table_for("0.6.1.post3") == "0.6.1.post2"  # nearest at or below
    assert vllm_flags.table_for("0.9.0.1") == "0.9.0.1"
    assert vllm_flags.table_for("0.8.6") == "0.8.5.post1"
    # A post release can change flags: 0.6.1.post1 dropped --engine-use-ray.
    assert "--engine-use-ray" in vllm_flags.flags_of("0.6.1")
    assert "--engine-use-ray" not in vllm_flags.flags_of("0.6.1.post1")


def test_release_without_an_sdist_falls_back_explicitly() -> None:
    # vLLM 0.15.0 and 0.15.1 have no sdist on the index; 0.15.1's wheel inventory stands in.
    assert vllm_flags.fallback_for("0.15.0") == "0.15.1"
    assert vllm_flags.table_for("0.15.0") == "0.15.1"
    assert vllm_flags.fallback_for("0.16.0") is None
    reviewed = parse_text("vllm serve m", version="0.15.0")
    assert reviewed.version == "0.15.1"
    assert "0.15.0 has no published source" in reviewed.version_source


@pytest.mark.parametrize(
    ("flag", "last", "gone"),
    [
        ("--use-v2-block-manager", "0.9.2", "0.10.0"),
        ("--enable-reasoning", "0.9.2", "0.10.0"),
        ("--guided-decoding-backend", "0.10.2", "0.11.0"),
        ("--swap-space", "0.17.1", "0.18.0"),
        ("--worker-use-ray", "0.6.6.post1", "0.7.0"),
    ],
)
def test_a_removed_flag_is_caught_at_the_release_that_dropped_it(
    flag: str, last: str, gone: str
) -> None:
    choices = vllm_flags.choices_in(flag, last) or ("x",)  # a value that release accepts
    value = f" {choices[0]}" if vllm_flags.spec_any_version(flag).kind == "value" else ""
    ok = parse_text(f"vllm serve m {flag}{value}", version=last)
    assert not ok.issues
    bad = parse_text(f"vllm serve m {flag}{value}", version=gone)
    (issue,) = [i for i in bad.issues if i.kind == "removed-flag"]
    assert issue.removal is not None
    assert (issue.removal.last_seen, issue.removal.first_missing) == (last, gone)


def test_old_flags_keep_their_kind_from_the_last_release_that_had_them() -> None:
    assert vllm_flags.spec_any_version("--use-v2-block-manager").kind == "store_true"
    assert vllm_flags.spec_any_version("--swap-space").kind == "value"
    switch = parse_text(
        "vllm serve m --use-v2-block-manager --max-model-len 4096", version="0.10.0"
    )
    assert switch.text("--max-model-len") == "4096"


def _load_script() -> ModuleType:
    return load("scripts/build_flag_tables.py")  # with its flag_choices.py beside it


FAKE_RELEASE = {
    "vllm/engine/arg_utils.py": """
class EngineArgs:
    @staticmethod
    def add_cli_args(parser):
        model_kwargs = get_kwargs(ModelConfig)
        group = parser.add_argument_group("ModelConfig")
        if 'serve' not in sys.argv[1:]:
            group.add_argument("--model", **model_kwargs["model"])
        group.add_argument("--enforce-eager", **model_kwargs["enforce_eager"])
        parser.add_argument("--tensor-parallel-size", "-tp", type=int)
        parser.add_argument("--disable-thing", action="store_true")
        return parser

class ModelConfig:
    model: str = "x"
    enforce_eager: bool = False
""",
    "vllm/entrypoints/openai/cli_args.py": """
class FrontendArgs:
    host: str | None = None
    allowed_origins: list[str] = None
    secret: str = ""

    @staticmethod
    def add_cli_args(parser):
        frontend_kwargs = get_kwargs(FrontendArgs)
        del frontend_kwargs["secret"]
        del frontend_kwargs["allowed_origins"]["nargs"]
        frontend_kwargs["host"]["flags"] = ["-H"]
        for key, value in frontend_kwargs.items():
            extra = value.pop("flags", [])
            parser.add_argument(*extra, f"--{key.replace('_', '-')}", **value)
        return parser

def make_arg_parser(parser):
    parser.add_argument("model_tag", nargs="?")
    parser.add_argument("--headless", action="store_true")
    parser = FrontendArgs.add_cli_args(parser)
    parser = EngineArgs.add_cli_args(parser)
    return parser
""",
}


def test_script_reads_literal_and_dataclass_generated_flags() -> None:
    script = _load_script()
    release = script.Release({p: ast.parse(t) for p, t in FAKE_RELEASE.items()})
    options = script.serve_options(release)
    assert script.flag_table(options) == sorted(
        [
            "--allowed-origins",
            "--disable-thing",
            "--enforce-eager",
            "--headless",
            "--host",
            "--model",
            "--tensor-parallel-size",
            "-H",
            "-tp",
        ]
    )
    kinds = {n: o.kind for o in options for n in o.names}
    assert kinds["--enforce-eager"] == "bool"
    assert kinds["--disable-thing"] == "store_true"
    assert kinds["--allowed-origins"] == "list"
    assert kinds["--tensor-parallel-size"] == "value"
    hidden = {n for o in options if o.serve_hidden for n in o.names}
    assert hidden == {"--model"}  # vLLM 0.9.0 left --model out of `vllm serve`


def test_script_orders_releases_like_the_package_index() -> None:
    script = _load_script()
    order = ["0.6.1", "0.6.1.post1", "0.6.1.post2", "0.6.2", "0.9.0", "0.9.0.1", "0.10.0"]
    shuffled = [order[i] for i in (3, 6, 0, 5, 2, 4, 1)]
    assert sorted(shuffled, key=script.release_key) == order
    assert script.sdist_version("vllm-0.8.5.post1.tar.gz") == "0.8.5.post1"
    assert script.sdist_version("vllm-0.8.5-cp38-abi3-manylinux1_x86_64.whl") is None


def test_no_twins_exactly_where_the_real_0_32_parser_had_them() -> None:
    table = VERIFIED["tables"]["0.32.0"]
    twins = {f for f in table if f.startswith("--no-")}
    assert len(twins) > 50
    for flag in table:
        if not flag.startswith("--") or flag.startswith("--no-"):
            continue
        found = vllm_flags.lookup("--no-" + flag[2:], "0.32.0")
        has_twin = "--no-" + flag[2:] in twins
        assert (found is not None and found.negated) == has_twin, flag


# --- each value flag's choices, on a made-up release ------------------------------------

FAKE_CHOICES = {
    "vllm/engine/arg_utils.py": """
from vllm.config import BlockSize
from vllm.model_executor.layers.quantization import QUANTIZATION_METHODS
from vllm.reasoning import ReasoningParserManager

def literal_to_kwargs(type_hints):
    kwarg = "metavar" if contains_type(type_hints, str) else "choices"

class EngineArgs:
    @staticmethod
    def add_cli_args(parser):
        cache_kwargs = get_kwargs(CacheConfig)
        parser.add_argument("--block-size", **cache_kwargs["block_size"])
        parser.add_argument("--kv-cache-dtype", **cache_kwargs["cache_dtype"])
        parser.add_argument("--prefix-caching-hash-algo", **cache_kwargs["hash_algo"])
        parser.add_argument("--quantization", "-q", type=str, default=None)
        parser.add_argument("--dtype", choices=["auto", "half", *EXTRA])
        parser.add_argument("--load-format", choices=[f.value for f in LoadFormat])
        parser.add_argument("--reasoning-parser", choices=list(ReasoningParserManager.reasoning_parsers))
        parser.add_argument("--tool-call-parser", type=str)
        parser.add_argument("--device", choices=get_args(Device))
        parser.add_argument("--seed", choices=some_function())
        return parser

EXTRA = ("float16",)
Device = Literal["auto", "cuda"]
""",
    "vllm/config.py": """
BlockSize = Literal[8, 16, 32]
CacheDType = Literal["auto", "fp8"]

class LoadFormat(str, enum.Enum):
    AUTO = "auto"
    SAFETENSORS = "safetensors"

class CacheConfig:
    block_size: Optional[BlockSize] = None
    cache_dtype: CacheDType | str = "auto"
    hash_algo: Literal["sha256", "builtin"] = "builtin"
""",
    "vllm/model_executor/layers/quantization/__init__.py": """
QUANTIZATION_METHODS = {"awq": AWQConfig, "gptq": GPTQConfig}
""",
    "vllm/reasoning/deepseek_r1.py": """
@ReasoningParserManager.register_module("deepseek_r1")
class DeepSeekR1: ...
@ReasoningParserManager.register_module(["granite", "granite_new"])
class Granite: ...
""",
    "vllm/reasoning/__init__.py": """
_REASONING_PARSERS_TO_REGISTER = {"qwen3": ("qwen3_parser", "Qwen3")}
for name, (file_name, class_name) in _REASONING_PARSERS_TO_REGISTER.items():
    ReasoningParserManager.register_lazy_module(name, file_name, class_name)
""",
    "vllm/entrypoints/openai/tool_parsers/hermes.py": """
@ToolParserManager.register_module("hermes")
class Hermes: ...
""",
    "vllm/entrypoints/openai/cli_args.py": """
def make_arg_parser(parser):
    parser.add_argument("--uvicorn-log-level", choices=["debug", "info"])
    parser = EngineArgs.add_cli_args(parser)
    return parser
""",
}


def test_the_reader_resolves_constants_literals_enums_and_registries() -> None:
    script = _load_script()
    trees = {p: ast.parse(t) for p, t in FAKE_CHOICES.items() if script.RELEVANT.match(p)}
    release = script.Release(trees, FAKE_CHOICES)
    table = script.choice_table(script.serve_options(release))
    assert table == {
        "--block-size": ["8", "16", "32", "None"],  # Optional: `None` means unset
        # `Literal[...] | str` has no argparse choices; the value is checked after parsing
        "--kv-cache-dtype": ["auto", "fp8"],
        "--prefix-caching-hash-algo": ["sha256", "builtin"],
        "--quantization": ["awq", "gptq", "None"],  # QUANTIZATION_METHODS, a dict's keys
        "--dtype": ["auto", "half", "float16"],
        "--load-format": ["auto", "safetensors"],
        "--reasoning-parser": ["deepseek_r1", "granite", "granite_new", "qwen3"],
        "--tool-call-parser": ["hermes"],
        "--device": ["auto", "cuda"],
        "--uvicorn-log-level": ["debug", "info"],
    }
    # what could not be read has no choices (--seed), and is said so in --debug
    assert any("some_function" in line for line in release.reader.unresolved)


def test_choice_runs_break_where_a_release_has_none() -> None:
    script = _load_script()
    order = ["0.4.1", "0.4.2", "0.4.3", "0.5.0"]
    choices = {
        "0.4.1": {"-x": ["a"]},
        "0.4.2": {"-x": ["a"]},
        "0.4.3": {},
        "0.5.0": {"-x": ["a", "b"]},
    }
    assert script._choice_runs(choices, order) == {
        "-x": [["0.4.1", "0.4.2", ["a"]], ["0.5.0", "0.5.0", ["a", "b"]]]
    }
