"""The command line starts at once: its help and its argument errors load no database library, a malformed
value of an option checked as the command starts (jobs.cli_values) neither, wherever --db stands."""

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


# A database file that is not there: --db's own check would load SQLAlchemy to read the URL.
ABSENT = "sqlite:////nonexistent/runrecord.sqlite"


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (("derive-outcomes", "--db", ABSENT, "--now", "x"), "--now"),
        (("measure-rates", "--now", "soon", "--db", ABSENT), "--now"),
        (("watch-conversations", "--db", ABSENT, "--now", "x"), "--now"),
        (("generate", "--now", "x", "--db", ABSENT), "--now"),
        (("compare", "edited_rate", "--db", ABSENT, "--at", "2026-99-99"), "--at"),
        (("compare", "no_metric", "--at", "2026-01-01", "--db", ABSENT), "no metric 'no_metric'"),
        (("compare", "edited_rate", "--at", "2026-01-01", "--group", "bogus", "--db", ABSENT), "--group"),
        (("compare", "edited_rate", "--between", "configuration:a", "configuration:a"), "--between"),
        (
            ("compare", "edited_rate", "--between", "configuration:a", "configuration:b", "--from", "x"),
            "--from",
        ),
        (("survival", "--db", ABSENT, "--group", "skill:x"), "--group"),
        (("release", "add", "2026-02-30", "label", "--db", ABSENT), "DATE"),
    ],
    ids=lambda value: " ".join(value) if isinstance(value, tuple) else value,
)
def test_a_malformed_value_is_one_line_before_any_database_library_loads(
    args: tuple[str, ...], named: str
) -> None:
    result = subprocess.run(
        [sys.executable, "-c", PROBE, *args], capture_output=True, text=True, cwd=REPO_ROOT, check=True
    )

    assert result.stdout.strip().splitlines()[-1] == "loaded: []"
    (line,) = result.stderr.splitlines()
    assert line.startswith("runrecord: error: ") and named in line
