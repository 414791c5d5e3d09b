"""vLLM's `non-default args` line with an object logged by its repr, and an offline run's model."""

from __future__ import annotations

from servetune.vllm.python_spellings import logged_args

# An offline LLM(...) run on 0.11.0 (the zjpzhao fit record in tests/data/corpus/memory.json).
LINE = (
    "non-default args: {'runner': 'pooling', 'max_model_len': 2048, 'pooler_config': "
    "PoolerConfig(pooling_type='LAST', normalize=True, dimensions=None), "
    "'model': '/root/Qwen3-VL-Embedding-2B'}"
)


def test_entries_after_an_object_repr_are_read() -> None:
    words = logged_args(LINE)
    assert words is not None
    assert words[:3] == ["vllm", "serve", "/root/Qwen3-VL-Embedding-2B"]
    assert "--max-model-len" in words and "--model" not in words
    assert words[words.index("--pooler-config") + 1].startswith("PoolerConfig(")


def test_an_unclosed_object_repr_keeps_the_entries_before_it() -> None:
    words = logged_args("non-default args: {'max_model_len': 2048, 'pooler_config': Pooler(a=1")
    assert words == ["vllm", "serve", "--max-model-len", "2048"]
