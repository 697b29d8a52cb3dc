# uno-lab: the two commands are `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# The index torch comes from: empty for pip's configured one; for the CPU build on Linux,
# make run TORCH_INDEX=https://download.pytorch.org/whl/cpu
TORCH_INDEX ?=

.PHONY: run test lint typecheck pytest docs bench clean browser

# torch first, pinned: pip installs the wheel that the package index serves for torch==2.13.0
# (a CPU build where the index offers one; PyPI's default on Linux is a large CUDA build).
$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet torch==2.13.0 $(if $(TORCH_INDEX),--index-url $(TORCH_INDEX))
	$(PY) -m pip install --quiet -e '.[dev,bench,ray,web,openspiel,llm]'
	touch $(STAMP)

# The browser test of uno-lab serve drives a headless Chromium through its driver. Debian's
# packages, installed when missing (as root); elsewhere it says what to install.
browser:
	@if command -v chromium >/dev/null && command -v chromedriver >/dev/null; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver; \
	else \
		echo "make: the browser test needs chromium and chromedriver (Debian: sudo apt-get install chromium chromium-driver)"; \
	fi

# warmup first: the engine's machine code is shipped for common machines, and compiled once
# (with a progress line) where it is not.
run: $(STAMP)
	$(PY) -m unolab warmup
	$(PY) -m unolab.main_job

lint: $(STAMP)
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

typecheck: $(STAMP)
	$(PY) -m mypy

pytest: $(STAMP) browser
	$(PY) -m pytest -q --nbmake tests notebooks

# The docs site (mkdocs.yml): --strict turns every broken link or reference into an error.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build --strict --quiet

test: lint typecheck docs pytest

bench: $(STAMP)
	$(PY) -m unolab.benchmarks.core

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache site
