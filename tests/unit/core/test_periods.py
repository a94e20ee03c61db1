"""Grains and periods (core.periods): the UTC day or ISO week, open periods, the sides of a comparison."""

from __future__ import annotations

from datetime import date

import pytest

from core.periods import Grain, comparison_periods, is_open, last_day, open_from, period_start
from tests.unit.core.measure_helpers import DAY, unix


@pytest.mark.parametrize(
    ("moment", "grain", "start"),
    [
        ("2026-10-12T00:00:00", Grain.WEEK, date(2026, 10, 12)),  # a Monday starts its week
        ("2026-10-11T23:59:59", Grain.WEEK, date(2026, 10, 5)),  # Sunday night is the week before
        ("2026-10-18T23:59:59", Grain.WEEK, date(2026, 10, 12)),
        ("2026-01-01T10:00:00", Grain.WEEK, date(2025, 12, 29)),  # ISO week 1 starts in the old year
        ("2026-10-11T23:59:59", Grain.DAY, date(2026, 10, 11)),
        ("2026-10-12T00:00:00", Grain.DAY, date(2026, 10, 12)),
    ],
)
def test_a_period_is_the_utc_day_or_the_iso_week_from_monday(moment: str, grain: Grain, start: date) -> None:
    assert period_start(unix(moment), grain) == start


def test_every_period_from_the_first_run_still_inside_its_window_is_open() -> None:
    now = unix("2026-11-04T12:00:00")  # a Wednesday

    first = open_from(now, 7 * DAY, earliest_open_end=unix("2026-10-29T08:00:00"), grain=Grain.WEEK)

    assert first == date(2026, 10, 26)
    assert open_from(now, 7 * DAY, None, Grain.WEEK) == date(2026, 11, 2)  # the current period is open
    assert open_from(now, 7 * DAY, unix("2026-10-29T08:00:00"), Grain.DAY) == date(2026, 10, 29)
    # A run ending at now − window exactly may still change: a write at that second is not due yet.
    assert open_from(now, 7 * DAY, now - 7 * DAY, Grain.DAY) == date(2026, 10, 28)


def test_a_comparison_on_a_monday_sums_n_weeks_each_side() -> None:
    sides = comparison_periods(date(2026, 10, 12), 2, Grain.WEEK)

    assert sides.before == (date(2026, 9, 28), date(2026, 10, 5))
    assert sides.after == (date(2026, 10, 12), date(2026, 10, 19))
    assert sides.straddling is None


def test_the_week_that_holds_a_midweek_date_is_on_neither_side() -> None:
    sides = comparison_periods(date(2026, 10, 14), 1, Grain.WEEK)

    assert sides.before == (date(2026, 10, 5),)
    assert sides.after == (date(2026, 10, 19),)
    assert sides.straddling == date(2026, 10, 12)


def test_a_comparison_by_day_is_exact_to_the_day() -> None:
    sides = comparison_periods(date(2026, 10, 14), 1, Grain.DAY)

    assert sides.before[0] == date(2026, 10, 7) and sides.before[-1] == date(2026, 10, 13)
    assert sides.after[0] == date(2026, 10, 14) and len(sides.after) == 7


def test_a_period_is_open_from_the_first_open_period_on() -> None:
    first_open = date(2026, 10, 26)

    assert is_open(date(2026, 10, 26), first_open)
    assert is_open(date(2026, 11, 2), first_open)
    assert not is_open(date(2026, 10, 19), first_open)


def test_a_quiet_period_that_holds_now_minus_the_window_is_closed_when_no_run_in_it_may_change() -> None:
    now = unix("2026-11-04T12:00:00")  # now − 7 days falls in the week of 10-26
    no_run_since_the_cutoff_before = unix("2026-11-02T09:00:00")  # the first run ending at or after it

    first_open = open_from(now, 7 * DAY, no_run_since_the_cutoff_before, Grain.WEEK)

    assert not is_open(date(2026, 10, 26), first_open)
    assert is_open(date(2026, 11, 2), first_open)


def test_a_weeks_last_day_is_its_sunday_and_a_days_is_itself() -> None:
    monday = date(2026, 11, 9)

    assert last_day(monday, Grain.WEEK) == date(2026, 11, 15)
    assert last_day(monday, Grain.DAY) == monday
