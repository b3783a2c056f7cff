# Two commands set everything up: `make run` (serve the bundled sample) and `make test`.
SHELL := /bin/bash
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
export SEARCHNASA_HOME ?= $(CURDIR)/data

.PHONY: run test install browser sample bench clean

$(STAMP): pyproject.toml
	@command -v $(PYTHON) >/dev/null || { echo "need $(PYTHON)"; exit 1; }
	test -d $(VENV) || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

# Debian's chromium drives the real-browser tests (Playwright cannot download its own browser here);
# axe-core (npm, pinned in package-lock.json) checks the pages' accessibility in that browser.
browser:
	@command -v chromium >/dev/null || { apt-get update -qq && apt-get install -y -qq chromium >/dev/null; }
	@command -v npm >/dev/null || { apt-get update -qq && apt-get install -y -qq npm >/dev/null; }
	@test -f node_modules/axe-core/axe.min.js || npm ci --no-audit --no-fund --silent

run: install
	$(BIN)/searchnasa load-sample
	$(BIN)/searchnasa index
	$(BIN)/searchnasa dedup
	$(BIN)/searchnasa serve --host 127.0.0.1 --port 8000

test: install browser
	$(BIN)/python -m pytest -q

sample: install
	$(BIN)/python scripts/build_sample.py

clean:
	rm -rf $(VENV) data .pytest_cache test-artifacts node_modules
