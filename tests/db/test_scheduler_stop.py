"""A scheduler that stops starts nothing more: a job due at that moment keeps its run in the job store for the
scheduler that comes next (APScheduler's loop looks for due jobs once more after shutdown)."""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy import select

from adapters.database import make_engine
from adapters.schema import apscheduler_jobs
from jobs.scheduler import build_scheduler
from jobs.scheduler_config import SchedulerConfig

DUE = datetime(2026, 1, 1, 2, 30, tzinfo=UTC)  # long past: due whenever the scheduler looks


def never_run() -> None:
    raise AssertionError("a stopped scheduler started a job")


def test_a_job_due_as_the_scheduler_stops_keeps_its_run_and_nothing_is_logged_as_an_error(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'scheduler.sqlite'}")
    config = SchedulerConfig(jobs=(), timezone=ZoneInfo("UTC"), misfire_grace_s=3600, lease_s=60)
    scheduler = build_scheduler(engine, config)
    scheduler.start(paused=True)  # as a scheduler that lost its lease: no job starts
    scheduler.add_job(f"{__name__}:never_run", "cron", hour=2, minute=30, id="nightly", next_run_time=DUE)

    with caplog.at_level(logging.ERROR, logger="apscheduler"):
        scheduler.shutdown(wait=True)  # joins the loop's thread, whose last pass comes after the shutdown

    with engine.connect() as connection:
        stored = connection.execute(select(apscheduler_jobs.c.id, apscheduler_jobs.c.next_run_time)).all()
    engine.dispose()
    assert [(job, datetime.fromtimestamp(at, UTC)) for job, at in stored] == [("nightly", DUE)]
    assert [record.getMessage() for record in caplog.records if record.levelno >= logging.ERROR] == []


def test_an_exception_apscheduler_logs_is_one_line_naming_it_without_its_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    build_scheduler(make_engine("sqlite://"), SchedulerConfig((), ZoneInfo("UTC"), 3600, 60))  # its filters
    log = logging.getLogger("apscheduler.scheduler")

    with caplog.at_level(logging.ERROR, logger="apscheduler"):
        try:
            raise RuntimeError("cannot schedule new futures\nafter shutdown")
        except RuntimeError:
            log.exception('Error submitting job "%s" to executor "%s"', "nightly", "default")

    (record,) = caplog.records
    assert record.getMessage() == (
        'Error submitting job "nightly" to executor "default": RuntimeError: cannot schedule new futures '
        "after shutdown"
    )
    assert record.exc_info is None and record.exc_text is None
