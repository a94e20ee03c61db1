"""Fixtures for every kind of test: the repository, the shared upstream schema, the command line."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from hypothesis import settings as hypothesis_settings

from adapters import clock, settings
from core.time import LATEST_STAMP
from jobs.cli import main

REPO_ROOT = Path(__file__).resolve().parent.parent

# The upstream tables the way an installation has them (DOMAIN.md); kept beside the repository, not in it.
INSTALLATION_SQL = REPO_ROOT.parent / "shared" / "upstream-schema" / "installation.sqlite.sql"

# The hour runrecord's clock reads in every test (adapters.clock, RUNRECORD_NOW), and the hour the generated
# installations are built around: a test gives the same answer whenever the suite runs. A test about the
# calendar sets another one (tests/app/test_calendar.py).
NOW = datetime(2026, 11, 25, 14, tzinfo=UTC)

# Hypothesis fails an example that takes longer than its deadline (200 ms), which a test's first example on a
# shared two-core machine may (the log-rank comparison's first call into lifelines took 537 ms on one run and
# 17 ms on the next): a property's verdict does not depend on how busy the machine is.
hypothesis_settings.register_profile("runrecord", deadline=None)
hypothesis_settings.load_profile("runrecord")


@pytest.fixture(scope="session", autouse=True)
def fixed_clock() -> Iterator[datetime]:
    """NOW as the clock of every job, page, job log and command, set before any installation is built; and
    the system clock, which RUNRECORD_NOW does not fix (adapters.clock.system), after every instant a test
    runs a job at, so that a job run in the test's process reads the tables at its `now` whatever the hour.
    A test of a `now` ahead of the system clock sets that clock itself."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(settings.variable("now"), NOW.isoformat())
        patch.setattr(clock, "system", lambda: LATEST_STAMP)
        yield NOW


@pytest.fixture
def installation_sql() -> Path:
    """The SQL that creates an installation's own upstream tables in SQLite; skips when it is absent."""
    if not INSTALLATION_SQL.is_file():
        pytest.skip(f"no installation schema at {INSTALLATION_SQL}: the shared upstream-schema is absent")
    return INSTALLATION_SQL


@pytest.fixture
def run_cli() -> Callable[..., Result]:
    """Run `runrecord ARGS...` in-process; stdout and stderr are kept apart."""

    def run(*args: str) -> Result:
        return CliRunner().invoke(main, list(args), prog_name="runrecord")

    return run
