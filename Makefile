# uno-lab: the two commands are `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: run test lint typecheck pytest bench clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	# torch first, pinned to the CPU build that lies on this machine's disk (see DEVELOPERS.md).
	$(PY) -m pip install --quiet torch==2.13.0
	$(PY) -m pip install --quiet -e '.[dev,bench]'
	touch $(STAMP)

run: $(STAMP)
	$(PY) -m unolab.main_job

lint: $(STAMP)
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

typecheck: $(STAMP)
	$(PY) -m mypy

pytest: $(STAMP)
	$(PY) -m pytest -q --nbmake tests notebooks

test: lint typecheck pytest

bench: $(STAMP)
	$(PY) -m benchmarks.core

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
