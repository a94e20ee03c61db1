"""measure-rates after a crash: killed with SIGKILL at any moment, or its database connection ended in the
middle of a unit of work, the next run completes, and the facts, rates, marks and alerts are those of an
uninterrupted run, none twice. A batch whose table outgrows the memory MariaDB keeps it in is done again with
its tables on disk, with the same rows.

The installation is the demo generator's, its outcomes derived first; before every attempt it is put back
as it was then (tests/db/faults.py), measure-rates' own bookkeeping included.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import Engine

from adapters import schema
from core.time import DAY_S
from jobs.derive import derive_outcomes
from jobs.measure import measure_rates
from tests.db import faults

NOW = datetime(2026, 11, 29, tzinfo=UTC)
JOB = "measure-rates"
CONVERSATIONS = 200
# SIGKILLs per dialect, one in each equal part of the job. The job's transactions are the same on every
# dialect (adapters/dialect spells a few statements differently), so SQLite, the quickest, takes two and
# each server one, where a kill and its rerun cost some two runs of the job on a slower database.
KILLS = {"sqlite": 2, "mariadb": 1, "postgresql": 1}
SEED = 1202  # the kill moments: the same seed kills at the same moments of the job, none in its first or
# last fifth of a part (where a quicker run than the timed one could be over)
OUTPUT = (schema.measure_fact.name, schema.rate.name, schema.measure_mark.name, schema.alert.name)


@dataclass(frozen=True)
class Case:
    engine: Engine
    dialect: str
    pristine: faults.Pristine
    expected: faults.Stored  # the uninterrupted run's rows
    seconds: float  # how long the uninterrupted run's job took, as a command


def _arguments(engine: Engine) -> list[str]:
    url = engine.url.render_as_string(hide_password=False)
    return ["measure-rates", "--db", url, "--now", NOW.isoformat(), "--json"]


@pytest.fixture(scope="module")
def case(dialect: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Case]:
    directory = tmp_path_factory.mktemp(f"measure-faults-{dialect}")
    with faults.generated(dialect, directory, CONVERSATIONS, seed=5, now=NOW) as engine:
        derive_outcomes(engine, now=int(NOW.timestamp()), window_s=7 * DAY_S)
        pristine = faults.capture(engine)
        seconds = faults.timed(faults.command(*_arguments(engine)), engine, JOB)
        expected = faults.stored(engine, OUTPUT, pristine)
        yield Case(engine, dialect, pristine, expected, seconds)


def _rerun(case: Case) -> faults.Stored:
    finished = faults.run(faults.command(*_arguments(case.engine)))
    assert finished.returncode == 0, finished.stderr
    return faults.stored(case.engine, OUTPUT, case.pristine)


def test_the_uninterrupted_run_stores_facts_rates_and_marks(case: Case) -> None:
    counts = {name: case.expected.count(name) for name in OUTPUT[:3]}

    assert all(counts.values()), counts


def test_a_measurement_killed_at_any_moment_leaves_rows_identical_to_an_uninterrupted_run_none_twice(
    case: Case,
) -> None:
    command = faults.command(*_arguments(case.engine))
    attempt = faults.Attempt(case.engine, case.pristine, case.expected, command, JOB, OUTPUT)
    moments = faults.moments(random.Random(f"{SEED}:{case.dialect}"), case.seconds, KILLS[case.dialect])

    kills, failures = faults.killed_and_rerun(attempt, moments, SEED)

    assert failures == []
    assert any(kill.while_running for kill in kills), f"no kill found the job running: {kills}"


# Each unit of work (the facts, the rates) ended on one server; the transactions are the same on both.
ENDED_IN = {"postgresql": schema.measure_fact.name, "mariadb": schema.rate.name}


@pytest.mark.parametrize("dialect", list(ENDED_IN), indirect=True)
def test_a_connection_ended_mid_transaction_fails_the_command_with_one_line_and_the_next_run_completes(
    case: Case, tmp_path: Path
) -> None:
    table = ENDED_IN[case.dialect]
    faults.restore(case.engine, case.pristine)
    marker = tmp_path / "ended"

    # Just before the first facts, or the first rates, are written: inside that unit of work.
    failed = faults.run(faults.terminating(table, 1, marker, *_arguments(case.engine)))
    left = faults.stored(case.engine, OUTPUT, case.pristine)
    differences = _rerun(case).differences(case.expected)

    assert marker.is_file(), f"the connection was never ended: {failed.stderr}"
    assert failed.returncode == 1 and failed.stdout == ""
    assert failed.stderr.startswith(f"runrecord: error: {JOB} on ") and failed.stderr.count("\n") == 1, (
        failed.stderr
    )
    assert left.count(schema.rate.name) == 0
    assert differences == []


@pytest.mark.parametrize("dialect", ["mariadb"], indirect=True)
def test_a_measurement_whose_table_outgrows_mariadbs_memory_goes_on_on_disk_with_an_uninterrupted_runs_rows(
    case: Case, monkeypatch: pytest.MonkeyPatch
) -> None:
    faults.restore(case.engine, case.pristine)
    spilled = faults.memory_full(monkeypatch)

    measure_rates(case.engine, now=int(NOW.timestamp()), window_s=7 * DAY_S)

    assert spilled == [True]
    assert faults.stored(case.engine, OUTPUT, case.pristine).differences(case.expected) == []
