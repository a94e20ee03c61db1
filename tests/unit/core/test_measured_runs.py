"""A run as measure-rates reads it (core.measured_runs)."""

from __future__ import annotations

from core.measured_runs import run_end, run_start
from core.time import LATEST_STAMP


def test_a_run_that_has_not_finished_ends_at_its_last_update() -> None:
    assert run_end(finished_at=0, tstamp=500, started_at=100, crdate=100) == 500
    assert run_end(finished_at=400, tstamp=500, started_at=100, crdate=100) == 400


def test_a_stamp_from_the_year_9000_on_is_passed_over_as_no_end() -> None:
    # Only SQLite stores such a stamp in nr-llm's int(11) columns; its day is no date from the year 10000.
    assert run_end(finished_at=253_402_300_800, tstamp=500, started_at=100, crdate=100) == 500
    assert run_end(finished_at=LATEST_STAMP - 1, tstamp=500, started_at=100, crdate=100) == LATEST_STAMP - 1
    assert run_end(finished_at=LATEST_STAMP, tstamp=LATEST_STAMP, started_at=0, crdate=0) == 0


def test_a_run_without_a_start_time_started_when_its_row_was_created() -> None:
    assert run_start(started_at=0, crdate=100) == 100
    assert run_start(started_at=90, crdate=100) == 90
