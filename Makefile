# Two entry points for a fresh machine (see README):
#   make demo   set up .venv and run the main job offline
#   make test   set up .venv and run lint, type checks and the whole test suite
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEMO_STAMP := $(VENV)/.installed-demo
NODE_STAMP := .ci/node/.installed
# The git ref `make bench` compares the working tree with (benchmarks/compare.py).
REF ?= main

.PHONY: demo test lint typecheck pytest bench setup clean postgres chromium mutations

$(BIN)/python:
	$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "toolwire needs Python 3.11+"'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet -e '.[openai,anthropic,google,mistral,mcp,cli,otel,durable,ui,dev,bench]'
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

pytest: $(STAMP) $(NODE_STAMP) postgres chromium
	$(BIN)/pytest -q

test: lint typecheck pytest

# Deliberate bugs in the security-relevant code, each of which a named test must catch
# (tests/mutations.py; see docs/testing.md). Fails on a mutant the tests miss.
mutations: $(STAMP) $(NODE_STAMP)
	$(BIN)/python tests/mutations.py

bench: $(STAMP) postgres
	$(BIN)/python benchmarks/dispatch.py
	$(BIN)/python benchmarks/loop.py
	$(BIN)/python benchmarks/providers.py
	$(BIN)/python benchmarks/mcp_throughput.py
	$(BIN)/python benchmarks/import_time.py
	$(BIN)/python benchmarks/price_tables.py
	$(BIN)/python benchmarks/durable.py
	$(BIN)/python benchmarks/compare.py $(REF)

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .ci/node
