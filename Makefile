# Two commands for a new user: `make demo` and `make test`. Both set up .venv first when it is missing or
# older than pyproject.toml.

VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test

demo: $(STAMP)
	$(BIN)/runrecord demo

test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/python -m pytest

$(STAMP): pyproject.toml
	test -x $(BIN)/python || python3 -m venv $(VENV)
	$(BIN)/pip install -e '.[test]'
	touch $@
