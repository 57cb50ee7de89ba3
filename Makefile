# Two entry points for a fresh machine (see README):
#   make demo   set up .venv and run the main job offline
#   make test   set up .venv and run lint, type checks and the whole test suite
PYTHON ?= python3
# bash, as .ci/run: pytest's parent shell is bash, which the shell-completion test detects.
SHELL := /bin/bash
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEMO_STAMP := $(VENV)/.installed-demo
NODE_STAMP := .ci/node/.installed
# The git ref `make bench` compares the working tree with (benchmarks/compare.py).
REF ?= main
# pytest-xdist workers. Most test time is spent waiting on the processes and servers the tests
# start, so more workers than cores pays (measured on 2 cores; see tests/README.md).
WORKERS ?= 4
# Byte code is cached even where the environment says not to (PYTHONDONTWRITEBYTECODE=1 on the
# project's machines): each pytest worker spends ~10 s of CPU rewriting the test modules' asserts
# when pytest may not cache them, on every run after the first (see also `bytecode` below).
unexport PYTHONDONTWRITEBYTECODE
# CI=1: a test that needs the Node tools fails instead of skipping when they are missing.
# --durations=20 keeps the slowest tests in sight at the end of every run.
PYTEST := CI=1 $(BIN)/pytest -q -n $(WORKERS) --dist loadgroup --durations=20

.PHONY: demo test lint typecheck pytest bytecode bench setup clean postgres chromium mutations

$(BIN)/python:
	$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "toolwire needs Python 3.11+"'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet -e '.[openai,anthropic,google,mistral,mcp,cli,otel,durable,ui,cost,dev,bench]'
	touch $(STAMP)

# The demo needs only the MCP and command-line extras, not the test and benchmark tools.
$(DEMO_STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet -e '.[mcp,cli]'
	touch $(DEMO_STAMP)

# Node 22, the MCP reference server and the conformance suite, for tests/mcp (project-local).
$(NODE_STAMP): .ci/mcp-setup.sh
	bash .ci/mcp-setup.sh
	touch $(NODE_STAMP)

# Postgres server binaries for tests/durable (the tests start their own server): found, or
# installed with apt-get when missing. Checked every time; it is quick when they are there.
postgres:
	bash .ci/postgres-setup.sh

# Headless Chromium and chromedriver for the browser tests of `toolwire web` (tests/ui): found,
# or installed with apt-get, like Postgres.
chromium:
	bash .ci/chromium-setup.sh

setup: $(STAMP) $(NODE_STAMP) postgres chromium

demo: $(DEMO_STAMP)
	$(BIN)/toolwire demo

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks examples
	$(BIN)/ruff format --check src tests benchmarks examples

typecheck: $(STAMP)
	$(BIN)/pyright src

# The suite starts hundreds of Python processes that import toolwire (the CLI, servers, workers),
# and an editable install leaves src/ uncompiled: where PYTHONDONTWRITEBYTECODE is set, each of
# them compiled the modules it imports again (0.4 s of CPU for the CLI and the MCP server). Compiled
# once here (1.3 s of CPU) before any of them starts, they read the bytecode.
bytecode: $(STAMP)
	$(BIN)/python -m compileall -q -j0 src tests

pytest: $(STAMP) $(NODE_STAMP) postgres chromium bytecode
	$(PYTEST)

# Installs at once (pip, npm and the Postgres check are independent), then ruff, then pyright
# alongside pytest: pyright's report is printed after pytest's, and either failing fails `make test`.
test:
	$(MAKE) --no-print-directory -j3 setup
	$(MAKE) --no-print-directory lint bytecode
	@$(BIN)/pyright src > $(VENV)/pyright.log 2>&1 & pyright=$$!; \
	echo "$(PYTEST)  (pyright src runs alongside)"; \
	$(PYTEST); tests=$$?; \
	wait $$pyright; types=$$?; \
	echo "pyright src:"; cat $(VENV)/pyright.log; \
	[ $$tests -eq 0 ] && [ $$types -eq 0 ]

# Deliberate bugs in the security-relevant code, each of which a named test must catch
# (tests/mutations.py; see docs/testing.md). Fails on a mutant the tests miss.
mutations: $(STAMP) $(NODE_STAMP)
	$(BIN)/python tests/mutations.py

bench: $(STAMP) postgres
	$(BIN)/python benchmarks/dispatch.py
	$(BIN)/python benchmarks/loop.py
	$(BIN)/python benchmarks/concurrency.py
	$(BIN)/python benchmarks/providers.py
	$(BIN)/python benchmarks/mcp_throughput.py
	$(BIN)/python benchmarks/import_time.py
	$(BIN)/python benchmarks/price_tables.py
	$(BIN)/python benchmarks/durable.py
	$(BIN)/python benchmarks/compare.py $(REF)

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .ci/node
