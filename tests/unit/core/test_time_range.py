"""The time range the Rates page's charts share (core.time_range): presets back from today, every measured
period, chosen days, and the periods a range holds."""

from __future__ import annotations

from datetime import date

import pytest

from core.periods import Grain
from core.time_range import DEFAULT_RANGE, RANGE_NAMES, TimeRange, periods_in, time_range

TODAY = date(2026, 11, 25)  # a Wednesday
MONDAY = date(2026, 11, 23)


@pytest.mark.parametrize(
    ("name", "first"),
    [("4w", date(2026, 11, 2)), ("12w", date(2026, 9, 7)), ("26w", date(2026, 6, 1))],
)
def test_a_preset_of_n_weeks_starts_on_the_monday_n_minus_one_weeks_before_todays_week(
    name: str, first: date
) -> None:
    assert time_range(name, today=TODAY, earliest=None) == TimeRange(first, TODAY)


def test_all_reaches_back_to_the_first_period_measured() -> None:
    assert time_range("all", today=TODAY, earliest=date(2025, 1, 6)) == TimeRange(date(2025, 1, 6), TODAY)
    assert time_range("all", today=TODAY, earliest=None) == TimeRange(TODAY, TODAY)


FIRST_MEASURED = date(2025, 1, 6)


def test_a_custom_range_spans_the_chosen_days() -> None:
    chosen = time_range(
        "custom",
        today=TODAY,
        earliest=FIRST_MEASURED,
        chosen_from=date(2026, 10, 1),
        chosen_to=date(2026, 10, 31),
    )

    assert chosen == TimeRange(date(2026, 10, 1), date(2026, 10, 31))


def test_a_custom_range_keeps_only_the_days_of_the_measured_periods_up_to_today() -> None:
    # A link from the year 1970 to 8999 would otherwise draw every day of seven thousand years, six charts.
    chosen = time_range(
        "custom",
        today=TODAY,
        earliest=FIRST_MEASURED,
        chosen_from=date(1970, 1, 1),
        chosen_to=date(8999, 12, 31),
    )

    assert chosen == TimeRange(FIRST_MEASURED, TODAY)


def test_a_custom_range_before_anything_was_measured_keeps_its_days_up_to_today() -> None:
    chosen = time_range(
        "custom", today=TODAY, earliest=None, chosen_from=date(2026, 10, 1), chosen_to=date(2026, 12, 31)
    )

    assert chosen == TimeRange(date(2026, 10, 1), TODAY)


def test_a_custom_range_wholly_outside_the_measured_periods_spans_its_last_ten_years_at_most() -> None:
    chosen = time_range(
        "custom",
        today=TODAY,
        earliest=FIRST_MEASURED,
        chosen_from=date(2100, 1, 1),
        chosen_to=date(8999, 12, 31),
    )

    assert chosen == TimeRange(date(8989, 12, 31), date(8999, 12, 31))


@pytest.mark.parametrize(
    ("chosen_from", "chosen_to"),
    [(date(2024, 1, 1), date(2024, 12, 31)), (date(2026, 11, 26), date(2027, 1, 31))],
    ids=["before the first measured period", "after today"],
)
def test_a_custom_range_wholly_outside_the_measured_periods_stays_as_chosen(
    chosen_from: date, chosen_to: date
) -> None:
    chosen = time_range(
        "custom", today=TODAY, earliest=FIRST_MEASURED, chosen_from=chosen_from, chosen_to=chosen_to
    )

    assert chosen == TimeRange(chosen_from, chosen_to)


@pytest.mark.parametrize(
    ("name", "chosen_from", "chosen_to"),
    [
        ("custom", None, date(2026, 10, 31)),
        ("custom", date(2026, 10, 31), date(2026, 10, 1)),
        ("3w", None, None),
        ("", None, None),
    ],
    ids=[
        "custom without a from",
        "custom from after to",
        "an unknown preset",
        "nothing",
    ],
)
def test_a_range_that_cannot_be_read_is_the_default_one(
    name: str, chosen_from: date | None, chosen_to: date | None
) -> None:
    found = time_range(
        name, today=TODAY, earliest=FIRST_MEASURED, chosen_from=chosen_from, chosen_to=chosen_to
    )

    assert found == time_range(DEFAULT_RANGE, today=TODAY, earliest=FIRST_MEASURED)
    assert DEFAULT_RANGE in RANGE_NAMES


def test_a_range_holds_every_period_that_overlaps_it_and_a_mid_week_start_keeps_its_week() -> None:
    span = TimeRange(date(2026, 11, 4), TODAY)

    assert periods_in(span, Grain.WEEK) == (date(2026, 11, 2), date(2026, 11, 9), date(2026, 11, 16), MONDAY)
    assert periods_in(TimeRange(MONDAY, TODAY), Grain.DAY) == (MONDAY, date(2026, 11, 24), TODAY)
    assert span.holds(date(2026, 11, 2), Grain.WEEK) and not span.holds(date(2026, 11, 2), Grain.DAY)
    assert not span.holds(date(2026, 11, 30), Grain.WEEK)
