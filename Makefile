# tickwork — the commands a developer and CI run. `make help` lists them.
SHELL := /bin/bash
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# Bytecode is cached (in __pycache__/, ignored by git) even where the environment turns it off:
# without it every worker, stack process and CLI call compiles the sources again, and pytest
# rewrites every test module in every worker (about a tenth of the suite's CPU).
unexport PYTHONDONTWRITEBYTECODE

.PHONY: help venv runtime demo run client test quick one typecheck layers layout test-unit test-contract test-functional test-e2e test-template model year chaos burst bench lint clean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/' | column -t -s $$'\t'

# What running the stack needs (the CLI, the local stack): `make demo` and `make run` install only
# this. The test and lint tools come with $(STAMP), which `make test` and the others need.
RUNTIME := $(VENV)/.runtime

$(RUNTIME): pyproject.toml
	@test -x $(BIN)/python || $$(scripts/find-python312) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[local]'
	@touch $(RUNTIME)

$(STAMP): $(RUNTIME) pyproject.toml tests/template/checkov-requirements.txt
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	$(BIN)/python tests/template/scanner.py
	@touch $(STAMP)

venv: $(STAMP) ## create .venv with Python 3.12, tickwork with its dev tools, and checkov in .venv/checkov

runtime: $(RUNTIME) ## create .venv with only what running the stack needs (the CLI, the local stack)

demo: $(RUNTIME) ## watch sample actions fire on a throwaway local stack, then a month of a daily SMS on virtual time (~35 s)
	$(BIN)/tickwork demo

run: $(RUNTIME) ## the local stack in the foreground on 127.0.0.1:4566 until Ctrl-C
	$(BIN)/tickwork local

client: $(RUNTIME) ## build the tickwork-client wheel into dist/ (a service installs it on its own)
	$(BIN)/python -m pip wheel --quiet --no-deps -w dist ./client
	rm -rf client/build client/*.egg-info
	@ls dist/tickwork_client-*.whl

test: typecheck layers ## the strict type check and the layers, then every test: unit, contract, functional, template, end-to-end
	$(BIN)/python -m pytest

quick: $(STAMP) ## the edit-test loop: unit and contract tests, no emulated stack (seconds)
	$(BIN)/python -m pytest -n 0 -q tests/unit tests/contract

TEST ?=
one: $(STAMP) ## one test (or file, or -k expression) without workers: make one TEST=tests/unit/domain/test_times.py
	@test -n "$(TEST)" || { echo 'give it: make one TEST=path/to/test_file.py::test_name'; exit 2; }
	$(BIN)/python -m pytest -n 0 $(TEST)

typecheck: $(STAMP) ## mypy --strict over src, cli, local and each function (fakes held to their ports)
	$(BIN)/mypy
	@for handler in functions/*/app.py; do $(BIN)/mypy --no-error-summary $$handler || exit 1; done
	@echo "typecheck: every function's handler is clean too"

layers: $(STAMP) ## the import contract: each layer imports only those below it (import-linter)
	$(BIN)/lint-imports

layout: $(STAMP) ## the package's shape: lines per layer, files over 300 lines, import circles, what a lone fire's task reaches
	$(BIN)/python scripts/layout.py --reach tickwork.fire.lone_fire tickwork.fire.fire_batch

test-unit: $(STAMP) ## pure domain tests, no AWS
	$(BIN)/python -m pytest tests/unit

test-contract: $(STAMP) ## each store port: its fake and its DynamoDB adapter (moto) through the same cases
	$(BIN)/python -m pytest tests/contract

test-functional: $(STAMP) ## each handler with the events/ files under moto
	$(BIN)/python -m pytest tests/functional

test-e2e: $(STAMP) ## the real state machine executed in the emulated stack
	$(BIN)/python -m pytest tests/e2e

test-template: $(STAMP) ## sam validate --lint, substitutions, statelint, IAM, checkov
	$(BIN)/python -m pytest tests/template

MODEL_EXAMPLES ?= 5000
MODEL_STEPS ?= 80
model: $(STAMP) ## the model-based test of the fire protocol, long: MODEL_EXAMPLES random runs (make test runs 100)
	MODEL_EXAMPLES=$(MODEL_EXAMPLES) MODEL_STEPS=$(MODEL_STEPS) $(BIN)/python -m pytest -n 0 -q --timeout 0 --hypothesis-show-statistics tests/model

year: $(STAMP) ## issue 31's measure: a daily cron in New York advanced a year on virtual time, 365 fires (~1 min; make test runs a weekly one)
	TICKWORK_DAILY_YEAR=1 $(BIN)/python -m pytest -n 0 -q tests/e2e/test_virtual_year.py -k daily

CHAOS_ARGS ?= --actions 500
chaos: $(STAMP) ## fault-injection run on a local stack: fails if a fire is lost, doubled or early
	$(BIN)/python bench/chaos.py $(CHAOS_ARGS)

BURST_ARGS ?=
burst: $(STAMP) ## one tick per fire under a burst: 300 one-offs due in 3 s, cores kept busy beside the local stack
	$(BIN)/python bench/burst.py $(BURST_ARGS)

BENCH_ARGS ?=
bench: $(STAMP) ## accuracy, cost per fire, cold starts, local throughput -> bench/RESULTS.md (~50 min)
	$(BIN)/python bench/bench.py $(BENCH_ARGS)

lint: $(STAMP) ## ruff
	$(BIN)/ruff check src functions local cli client tests bench

clean: ## remove the venv and caches
	rm -rf $(VENV) .pytest_cache .ruff_cache .aws-sam
