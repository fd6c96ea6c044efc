# One entry per habit. `make demo` runs a whole debate; `make test` runs every check CI runs
# (the slow ones too; `.venv/bin/pytest -m "not slow"` leaves those out of a quick loop).
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

# Debian's chromium for the dashboard's browser tests (never a downloaded browser), unless
# CHROMIUM=/path/to/chromium names another one.
DEBIAN_CHROMIUM := /usr/bin/chromium

browser:
	@if [ -n "$$CHROMIUM" ]; then \
	  [ -x "$$CHROMIUM" ] || { echo "make: CHROMIUM=$$CHROMIUM is not a program; point it at a chromium, or unset it to use Debian's"; exit 1; }; \
	elif [ ! -x $(DEBIAN_CHROMIUM) ]; then \
	  if [ "$$(id -u)" = 0 ]; then sudo=; else sudo="sudo -n"; fi; \
	  { $$sudo apt-get update -qq && $$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; } >/dev/null 2>&1 \
	  || { echo "make: could not install Debian's chromium for the browser tests with apt-get (it needs root or password-less sudo, and the network): run 'sudo apt-get install chromium', or set CHROMIUM=/path/to/chromium"; exit 1; }; \
	fi

demo: setup
	$(BIN)/dreamcontext council run --topic "Should we migrate the session store from Redis to Postgres?" \
	  --options "A=Migrate now,B=Stay on Redis"

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: setup
	$(BIN)/mypy

# Tests run side by side, two workers per core: many of them wait on CLI processes, servers
# and a browser, so one worker per core leaves the cores idle a third of the time
# (PYTEST_WORKERS=0 runs them in one process).
PYTEST_WORKERS ?= $(shell echo $$(( $$(nproc 2>/dev/null || echo 1) * 2 )))

# Bytecode is written even where the environment says PYTHONDONTWRITEBYTECODE: without it every
# one of the suite's thousand-odd CLI processes compiles the modules it imports again, and
# every worker rewrites every test module's asserts.
pytest: setup browser
	env -u PYTHONDONTWRITEBYTECODE $(BIN)/pytest -q -n $(PYTEST_WORKERS) --dist loadgroup

# mypy runs beside pytest (its output is shown when the tests end): the tests leave a core
# partly idle while they wait on processes, and a cold mypy needs a dozen seconds of it.
test:
	@start=$$(date +%s); status=0; \
	$(MAKE) --no-print-directory setup browser lint || status=$$?; \
	if [ $$status = 0 ]; then \
	  $(MAKE) --no-print-directory typecheck > $(VENV)/typecheck.log 2>&1 & checking=$$!; \
	  $(MAKE) --no-print-directory pytest || status=$$?; \
	  wait $$checking || status=$$?; \
	  cat $(VENV)/typecheck.log; \
	fi; \
	took=$$(( $$(date +%s) - start )); \
	echo "make test: $$((took / 60)) min $$((took % 60)) s"; \
	exit $$status

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
	$(BIN)/python bench/prompt_cache.py

fault-suite: setup
	$(BIN)/python bench/fault_suite.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache build dist
