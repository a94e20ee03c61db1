"""Recording executions in tx_runrecord_job_run: one line per failure, never an exception to the scheduler,
and no execution lost while the database is away."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from sqlalchemy import select
from sqlalchemy.exc import OperationalError

from adapters.database import RunrecordError, make_engine
from adapters.schema import health, job_run
from jobs.job_log import JobResult, Status, execute, failure_line, run_logged


def sever_the_connection_mid_job(db_url: str, *, now: object = None) -> JobResult:
    """A job whose server ends its session between two batches, as a restarted server would."""
    engine = make_engine(db_url)
    try:
        with engine.connect() as connection:
            connection.execute(select(1))  # the first batch
            if engine.dialect.name == "postgresql":
                connection.exec_driver_sql("SELECT pg_terminate_backend(pg_backend_pid())")
            else:
                session = connection.exec_driver_sql("SELECT CONNECTION_ID()").scalar_one()
                connection.exec_driver_sql(f"KILL {int(session)}")
            connection.execute(select(1))  # the next batch
    finally:
        engine.dispose()
    return JobResult(2, 0, "never reached")


class SilentError(Exception):
    pass


@pytest.mark.parametrize(
    ("error", "line"),
    [
        (
            OperationalError("SELECT 1", {}, Exception("server closed\n  the connection")),
            "database: server closed the connection",
        ),
        (RunrecordError("no database file at /x"), "no database file at /x"),
        (RuntimeError("broke\nin two"), "RuntimeError"),  # never raised: nowhere to name
        (SilentError(), "SilentError"),
    ],
)
def test_a_failure_is_said_in_one_line(error: BaseException, line: str) -> None:
    assert failure_line(error) == line


def read_a_stamp(value: str) -> int:
    return int(value)


def test_an_error_runrecord_did_not_expect_is_named_by_its_type_and_place_never_by_its_message() -> None:
    # Its message may quote a value the job read: int() of a row's text quotes the text.
    with pytest.raises(ValueError) as raised:
        read_a_stamp("Jane Doe edited page 12")

    line = failure_line(raised.value)

    assert line.startswith(f"ValueError at {__name__}:") and line.split(":")[-1].isdigit()
    assert "Jane" not in line


def test_a_job_on_a_malformed_url_fails_without_raising(caplog: pytest.LogCaptureFixture) -> None:
    execution = run_logged("watch-conversations", "jobs.watch:run_job", "not a url at all")

    assert execution.status is Status.FAILED
    assert execution.result.message.startswith("not a database URL")
    assert [r.levelno for r in caplog.records if r.name == "jobs.job_log"] == [logging.ERROR]


def test_a_malformed_clock_fails_the_job_in_one_line_without_running_or_raising(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'runrecord.sqlite'}")
    job_run.create(engine)
    monkeypatch.setenv("RUNRECORD_NOW", "soon")
    ran = []

    execution = execute(engine, "watch-conversations", lambda: ran.append(1) or JobResult(1, 0, "ran"))

    with engine.connect() as connection:
        rows = connection.execute(select(job_run)).all()
    engine.dispose()
    assert execution.status is Status.FAILED and ran == [] and rows == []
    assert execution.result.message == "RUNRECORD_NOW is not an ISO 8601 date or time: 'soon'"


def test_a_job_that_returns_no_job_result_is_recorded_as_failed(tmp_path: Path) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'runrecord.sqlite'}")
    job_run.create(engine)

    execution = execute(engine, "derive-outcomes", lambda: {"processed": 3})  # type: ignore[arg-type,return-value]

    with engine.connect() as connection:
        [row] = connection.execute(select(job_run)).all()
    engine.dispose()
    assert execution.status is Status.FAILED
    assert (row.status, row.message) == (
        "failed",
        "derive-outcomes returned dict, not a JobResult",
    )


def test_an_execution_the_database_could_not_take_is_written_once_it_is_back(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path, elsewhere = tmp_path / "runrecord.sqlite", tmp_path / "elsewhere.sqlite"
    url = f"sqlite:///{path}"
    engine = make_engine(url)
    job_run.create(engine)
    engine.dispose()
    path.rename(elsewhere)  # the database is away: what answers at the URL has no table of ours

    engine = make_engine(url)
    while_away = execute(engine, "watch-conversations", lambda: JobResult(1, 0, "while away"))
    engine.dispose()
    path.unlink()
    elsewhere.rename(path)
    engine = make_engine(url)
    once_back = execute(engine, "watch-conversations", lambda: JobResult(1, 0, "once back"))
    with engine.connect() as connection:
        rows = connection.execute(select(job_run).order_by(job_run.c.uid)).all()
    engine.dispose()

    assert (while_away.status, once_back.status) == (Status.OK, Status.OK)
    assert [(r.status, r.message) for r in rows] == [("ok", "while away"), ("ok", "once back")]
    assert rows[0].started <= rows[1].started
    [away_line] = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    assert "not recorded in tx_runrecord_job_run yet: database: no such table" in away_line


def test_a_job_whose_server_goes_away_mid_job_fails_in_one_line_and_the_next_run_completes_the_work(
    dialect: str, installation_url: str
) -> None:
    if dialect == "sqlite":
        pytest.skip("a SQLite file has no server session to end")

    severed = run_logged(
        "watch-conversations", "tests.db.test_job_log:sever_the_connection_mid_job", installation_url
    )
    next_run = run_logged("watch-conversations", "jobs.watch:run_job", installation_url)

    engine = make_engine(installation_url)
    with engine.connect() as connection:
        rows = connection.execute(select(job_run).order_by(job_run.c.uid)).all()
        readings = connection.execute(select(health.c.uid)).all()
    engine.dispose()
    assert (severed.status, next_run.status) == (Status.FAILED, Status.OK)
    assert [r.status for r in rows] == ["failed", "ok"]
    assert rows[0].message.startswith("database: ") and "\n" not in rows[0].message
    assert len(readings) == 1
