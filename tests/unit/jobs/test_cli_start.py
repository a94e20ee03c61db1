"""The command line starts at once: its help and its argument errors load no database library."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import REPO_ROOT

# Runs `runrecord ARGS` in a fresh interpreter and prints the database modules it loaded.
PROBE = """
import sys
from jobs.cli import main
try:
    main(sys.argv[1:], prog_name="runrecord")
except SystemExit:
    pass
print("loaded:", sorted(m for m in sys.modules if m.split(".")[0] in ("sqlalchemy", "alembic", "pandas")))
"""


@pytest.mark.parametrize(
    "args",
    [("--help",), ("derive-outcomes", "--help"), ("derive-outcomes", "--window-days", "x"), ("no-such",)],
    ids=" ".join,
)
def test_help_and_argument_errors_import_no_database_library(args: tuple[str, ...]) -> None:
    result = subprocess.run(
        [sys.executable, "-c", PROBE, *args], capture_output=True, text=True, cwd=REPO_ROOT, check=True
    )

    assert result.stdout.strip().splitlines()[-1] == "loaded: []"
