"""Which checkpoint a path names when its last folder only says where the files lie."""

from __future__ import annotations

import pytest

from servetune.review.model import find_model
from servetune.review.model_names import last_part


@pytest.mark.parametrize(
    ("path", "name"),
    [
        # ascend761 (fit): the Hugging Face cache's layout, served by its snapshot folder
        (
            "/root/.cache/huggingface/hub/models--Qwen--Qwen3-235B-A22B/snapshots/"
            "b51c4308ed84804fa6722b20722cd91e3cd17808",
            "Qwen3-235B-A22B",
        ),
        ("/app/data/deepseek-v4-flash-0731/model", "deepseek-v4-flash-0731"),  # gh52761 (fit)
        ("/models/Qwen3-8B/weights/", "Qwen3-8B"),
        ("Qwen/Qwen3-8B", "Qwen3-8B"),
        ("model", "model"),  # nothing above it: the name stays
    ],
)
def test_place_folders_are_passed_over(path: str, name: str) -> None:
    assert last_part(path) == name


def test_a_cached_snapshot_is_a_copy_of_its_repository() -> None:
    path = "/root/.cache/huggingface/hub/models--Qwen--Qwen3-235B-A22B/snapshots/" + "b" * 40
    facts = find_model(path)
    assert facts is not None
    assert facts.inferred_from == "Qwen/Qwen3-235B-A22B"
    assert facts.max_model_len is not None  # a copy keeps the checkpoint's context length
