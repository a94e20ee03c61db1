# Two commands for a new user: `make demo` and `make test`. Both set up .venv first when it is missing or
# older than pyproject.toml. `make test-fast` is the inner loop: SQLite only, no browser; CI runs `make test`.

# Python keeps each module it compiles in __pycache__ (ignored by git). The suite starts many Python processes
# (the workers, the command line, Streamlit servers); where the environment turns that cache off, each
# of them compiles every module it imports again, some seconds a process.
unexport PYTHONDONTWRITEBYTECODE

VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

# One worker more than the cores: a worker spends some of its time waiting on the databases, Streamlit and
# Chromium, and the extra one keeps the cores busy meanwhile (two cores: pytest 6:55 with three workers
# against 7:27 with two, back to back). A file's tests stay on one worker, so that its module fixtures are
# built once.
# The cores this process may use where the system says (Linux), else all of them.
WORKERS ?= $(shell python3 -c 'import os; f = getattr(os, "sched_getaffinity", None); print((len(f(0)) if f else os.cpu_count() or 1) + 1)')
PYTEST := $(BIN)/python -m pytest -n $(WORKERS) --dist loadfile
# More pytest options, e.g. `make test PYTEST_ARGS=--durations=30` to see where the time goes.
PYTEST_ARGS ?=

.PHONY: demo test test-fast

demo: $(STAMP)
	$(BIN)/runrecord demo

# mypy runs beside pytest rather than before it: half a minute of one core, on a machine the suite's workers
# leave 8% idle in all while they wait on the databases, Streamlit and Chromium. Its report follows pytest's;
# either failing fails the target.
test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	@report=$$(mktemp); \
	echo "$(BIN)/mypy > $$report (beside pytest)"; \
	$(BIN)/mypy > $$report 2>&1 & typing=$$!; \
	echo "$(PYTEST) $(PYTEST_ARGS)"; \
	$(PYTEST) $(PYTEST_ARGS); tests=$$?; \
	wait $$typing; types=$$?; \
	echo "$(BIN)/mypy:"; cat $$report; rm -f $$report; \
	test $$tests -eq 0 && test $$types -eq 0

test-fast: $(STAMP)
	$(BIN)/ruff check .
	RUNRECORD_TEST_DIALECTS=sqlite $(PYTEST) --ignore=tests/browser $(PYTEST_ARGS)

# uv resolves and installs the same packages as pip in a fraction of its time; where uv cannot be had (no
# package index), pip installs them. uv compiles the packages' modules as it installs them (some 11 s on this
# two-core machine): compiled by the suite's processes as they first import them instead, a clean clone's
# `make test` took 7:49 of pytest against 6:26 (one run each, 2026-12-06).
$(STAMP): pyproject.toml
	test -x $(BIN)/python || python3 -m venv $(VENV)
	( $(BIN)/pip install -q uv && $(BIN)/uv pip install --python $(BIN)/python --compile-bytecode -e '.[test]' ) \
		|| $(BIN)/pip install --no-compile -e '.[test]'
	touch $@
