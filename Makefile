# lmms-agentic developer commands. `make demo` and `make test` work on a fresh CPU machine.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.lmms-agentic-installed

.PHONY: install demo test test-fast lint tiny-vlm clean

$(STAMP): pyproject.toml setup.py constraints/cpu.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c constraints/cpu.txt -e '.[dev]'
	@touch $(STAMP)
	@du -sh $(VENV) | awk '{print "venv size: " $$1}'

install: $(STAMP)

## the main job: every benchmark's mini split through the real lmms-eval CLI, offline, plus a report
demo: install
	$(BIN)/python -m lmms_agentic demo --output runs/demo

## the whole test suite (unit, contract, packaging and end-to-end CLI runs)
test: install
	$(BIN)/python -m pytest

## everything except the end-to-end CLI runs
test-fast: install
	$(BIN)/python -m pytest -m "not e2e"

# mypy cannot follow setuptools' package-dir mapping (tasks/, adapters/, judges/ install inside
# lmms_agentic), so it checks a symlinked view of the installed layout in .typecheck/.
lint: install
	$(BIN)/ruff check .
	@rm -rf .typecheck && mkdir -p .typecheck/lmms_agentic
	@for f in lmms_agentic/*; do ln -s ../../$$f .typecheck/lmms_agentic/; done
	@for d in adapters judges tasks; do ln -s ../../$$d .typecheck/lmms_agentic/$$d; done
	MYPYPATH=.typecheck $(BIN)/mypy -p lmms_agentic

clean:
	rm -rf runs build dist *.egg-info .pytest_cache .mypy_cache .ruff_cache .typecheck
