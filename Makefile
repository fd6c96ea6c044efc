# One entry per habit. `make demo` runs a whole debate; `make test` runs every check CI runs.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: setup browser demo test lint typecheck pytest docs screenshots bench fault-suite clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

setup: $(STAMP)

# Debian's chromium for the dashboard's browser tests (never a downloaded browser).
browser:
	@if [ ! -x /usr/bin/chromium ]; then \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	  else sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; fi; \
	fi

demo: setup
	$(BIN)/dreamcontext council run --topic "Should we migrate the session store from Redis to Postgres?" \
	  --options "A=Migrate now,B=Stay on Redis"

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: setup
	$(BIN)/mypy

pytest: setup browser
	$(BIN)/pytest -q

test: lint typecheck pytest

docs: setup
	$(BIN)/python scripts/gen_cli_reference.py

# The dashboard's pictures in docs/, taken in Debian's chromium.
screenshots: setup browser
	$(BIN)/python scripts/dashboard_screenshot.py
	$(BIN)/python scripts/dashboard_in_flight_screenshot.py
	$(BIN)/python scripts/dashboard_write_screenshots.py

bench: setup
	$(BIN)/python bench/run_overhead.py
	$(BIN)/python bench/synthesis_budget.py
	$(BIN)/python bench/cli_latency.py

fault-suite: setup
	$(BIN)/python bench/fault_suite.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache build dist
