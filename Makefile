# Two commands on a fresh machine: `make demo` and `make test`.
# Both create .venv and install what they need the first time (pip, from the registries).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: demo test test-all bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.core: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[demo]'
	touch $@

$(VENV)/.test: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $@ $(VENV)/.core

demo: $(VENV)/.core
	$(BIN)/python -m mdmtheory report --out mdmtheory-report.html --overwrite

test: $(VENV)/.test
	$(BIN)/python -m pytest

# the default run plus the checks marked slow (longer searches, torchrun, the example scripts)
test-all: $(VENV)/.test
	$(BIN)/python -m pytest -m "slow or not slow"

bench: $(VENV)/.test
	$(BIN)/python benchmarks/run_all.py

clean:
	rm -rf $(VENV) *.egg-info .pytest_cache .hypothesis
