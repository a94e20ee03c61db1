"""derive-outcomes after a crash: killed with SIGKILL at any moment, or its database connection ended in the
middle of a batch, the next run completes, and the rows are those of an uninterrupted run, none twice
(003_…: derived once, and the answer is final). A batch whose table outgrows the memory MariaDB keeps it in
is tried again with its tables on disk, with the same rows.

The installation is the demo generator's (every outcome, reason and kind of bad row it plants), derived in
small batches so that a kill finds the job between and inside many transactions. The uninterrupted run's
rows are the reference; before every attempt the installation is put back as it was before any run
(tests/db/faults.py), the job's own bookkeeping included, whatever tables it keeps.
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
from tests.db import faults

NOW = datetime(2026, 11, 29, tzinfo=UTC)
JOB = "derive-outcomes"
CONVERSATIONS = 400
BATCH = 32  # runs per batch: some twenty transactions, so that a kill lands inside the job's loop
# SIGKILLs per dialect, one in each equal part of the job. The job's transactions are the same on every
# dialect (adapters/dialect spells a few statements differently), so SQLite, the quickest, takes two and
# each server one, where a kill and its rerun cost some two runs of the job on a slower database.
KILLS = {"sqlite": 2, "mariadb": 1, "postgresql": 1}
SEED = 1198  # the kill moments: the same seed kills at the same moments of the job, none in its first or
# last fifth of a part (where a quicker run than the timed one could be over)
OUTPUT = (schema.write_outcome.name, schema.run_outcome.name)  # and the observed tx_nrllm_call_outcome rows


@dataclass(frozen=True)
class Case:
    engine: Engine
    dialect: str
    pristine: faults.Pristine
    expected: faults.Stored  # the uninterrupted run's rows
    seconds: float  # how long the uninterrupted run's job took, as a command


def _arguments(engine: Engine) -> list[str]:
    url = engine.url.render_as_string(hide_password=False)
    return ["derive-outcomes", "--db", url, "--now", NOW.isoformat(), "--batch-size", str(BATCH), "--json"]


@pytest.fixture(scope="module")
def case(dialect: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Case]:
    directory = tmp_path_factory.mktemp(f"derive-faults-{dialect}")
    with faults.generated(dialect, directory, CONVERSATIONS, seed=5, now=NOW) as engine:
        pristine = faults.capture(engine)
        seconds = faults.timed(faults.command(*_arguments(engine)), engine, JOB)
        expected = faults.stored(engine, OUTPUT, pristine)
        yield Case(engine, dialect, pristine, expected, seconds)


def _rerun(case: Case) -> faults.Stored:
    finished = faults.run(faults.command(*_arguments(case.engine)))
    assert finished.returncode == 0, finished.stderr
    return faults.stored(case.engine, OUTPUT, case.pristine)


def test_the_uninterrupted_run_derives_every_kind_of_outcome(case: Case) -> None:
    outcomes = set(case.expected.values(schema.run_outcome.name, "outcome"))

    assert outcomes == {"accepted_unchanged", "edited", "discarded", "unknown"}
    assert case.expected.count(schema.run_outcome.name) > 20 * BATCH
    assert case.expected.count(schema.call_outcome.name) == case.expected.count(schema.run_outcome.name)


def test_a_job_killed_at_any_moment_leaves_rows_identical_to_an_uninterrupted_run_none_twice(
    case: Case,
) -> None:
    command = faults.command(*_arguments(case.engine))
    attempt = faults.Attempt(case.engine, case.pristine, case.expected, command, JOB, OUTPUT)
    moments = faults.moments(random.Random(f"{SEED}:{case.dialect}"), case.seconds, KILLS[case.dialect])

    kills, failures = faults.killed_and_rerun(attempt, moments, SEED)

    assert failures == []
    assert any(kill.while_running for kill in kills), f"no kill found the job running: {kills}"


@pytest.mark.parametrize("dialect", ["postgresql", "mariadb"], indirect=True)
def test_a_connection_ended_mid_batch_fails_the_command_with_one_line_and_the_next_run_completes(
    case: Case, tmp_path: Path
) -> None:
    faults.restore(case.engine, case.pristine)
    marker = tmp_path / "ended"

    # Just before the second batch writes its run rows: the first batch is committed, the second one open.
    failed = faults.run(faults.terminating(schema.run_outcome.name, 2, marker, *_arguments(case.engine)))
    left = faults.stored(case.engine, OUTPUT, case.pristine)
    differences = _rerun(case).differences(case.expected)

    assert marker.is_file(), f"the connection was never ended: {failed.stderr}"
    assert failed.returncode == 1 and failed.stdout == ""
    assert failed.stderr.count("\n") == 1 and failed.stderr.startswith(f"runrecord: error: {JOB} on ")
    assert left.count(schema.run_outcome.name) < case.expected.count(schema.run_outcome.name)
    assert differences == []


@pytest.mark.parametrize("dialect", ["mariadb"], indirect=True)
def test_a_derivation_whose_table_outgrows_mariadbs_memory_goes_on_on_disk_with_an_uninterrupted_runs_rows(
    case: Case, monkeypatch: pytest.MonkeyPatch
) -> None:
    faults.restore(case.engine, case.pristine)
    spilled = faults.memory_full(monkeypatch)

    derive_outcomes(case.engine, now=int(NOW.timestamp()), window_s=7 * DAY_S, batch_size=BATCH)

    assert spilled == [True]
    assert faults.stored(case.engine, OUTPUT, case.pristine).differences(case.expected) == []
