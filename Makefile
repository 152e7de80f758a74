# Two commands for a fresh machine:
#   make demo       set up .venv, install stopwise's core (no extra: the demo needs none), run the main job on the
#                   embedded synthetic default
#   make test       set up .venv with the [test] extra (every extra of stopwise, [all], and the test tools), then lint
#                   (ruff), type-check (mypy: src, benchmarks, experiments) and the default test lane
#                   (pytest -m "not slow and not integration": quick and steady, every benchmark in its --quick form
#                   included; no test in it depends on timing or on the machine's load)
#   make test-all   make test, then the integration lane (process-, browser- and training-bound runs: worker processes,
#                   Chromium, Inspect subprocesses, model training) and the slow lane (full-scale runs); what .ci/run runs
DEFAULT_LANE := not slow and not integration
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: demo test test-all setup setup-test lint typecheck pytest pytest-all clean browser postgres

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

setup: $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .

setup-test: $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[test]"

demo: setup
	$(BIN)/stopwise demo

lint: setup-test
	$(BIN)/ruff check src tests benchmarks experiments

typecheck: setup-test
	$(BIN)/mypy

pytest: setup-test
	$(BIN)/python -m pytest -q -m "$(DEFAULT_LANE)" -n auto --dist loadfile

pytest-all: setup-test
	$(BIN)/python -m pytest -q

# the default lane runs on every core (pytest-xdist, a test file per worker: module fixtures run once);
# PostgreSQL serves its ledger tests. The integration lane also runs on every core (its runs hand-shake, none times
# the machine); the slow lane stays in one process: its full-scale runs measure behaviour under load themselves
test: postgres setup-test
	$(BIN)/ruff check src tests benchmarks experiments
	$(BIN)/mypy
	$(BIN)/python -m pytest -q -m "$(DEFAULT_LANE)" -n auto --dist loadfile

# `make test` (the README's test command), then the integration lane (Chromium for its report pages) and the slow lane
test-all: test browser
	$(BIN)/python -m pytest -q -m "integration and not slow" -n auto --dist loadfile
	$(BIN)/python -m pytest -q -m slow

# Headless Chromium for the report tests (tests/report): Debian's chromium and chromium-driver, installed
# only when missing (needs root or sudo). Playwright drives /usr/bin/chromium; `playwright install` is never used.
browser:
	@if ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1; then \
		echo "installing chromium and chromium-driver (apt-get)"; \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get update -qq >/dev/null && \
		DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium chromium-driver >/dev/null; \
	fi

# PostgreSQL server binaries for the ledger tests (tests/ledger/conftest.py runs initdb + pg_ctl from them in a
# temporary folder on a private port and stops the server afterwards); Debian's postgresql, installed only when missing.
postgres:
	@if [ ! -x "$${STOPWISE_PG_BIN:-/usr/lib/postgresql/15/bin}/initdb" ]; then \
		echo "installing postgresql (apt-get)"; \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get update -qq >/dev/null && \
		DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq postgresql-15 >/dev/null; \
	fi

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
