"""Grains and periods: the UTC day or the ISO week (Monday to Sunday) of a run's end (DESIGN.md, "Rates").

A period is open while a run ending in it may still change (its window has not closed at `now`, or it is the
current period); the before/after comparison sums whole periods on each side of a date.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from enum import StrEnum


class Grain(StrEnum):
    DAY = "day"
    WEEK = "week"


def period_start(unix: int, grain: Grain) -> date:
    """The period holding a unix time, in UTC: the day itself, or the Monday of its ISO week."""
    return period_of(datetime.fromtimestamp(unix, UTC).date(), grain)


def period_of(day: date, grain: Grain) -> date:
    """The period holding a UTC day: the day itself, or the Monday of its ISO week."""
    return day - timedelta(days=day.weekday()) if grain is Grain.WEEK else day


def period_length(grain: Grain) -> timedelta:
    """A day, or a week."""
    return timedelta(days=7) if grain is Grain.WEEK else timedelta(days=1)


def last_day(period: date, grain: Grain) -> date:
    """The last day a period holds: the day itself, or the Sunday of its week."""
    return period + period_length(grain) - timedelta(days=1)


def unix_of(day: date) -> int:
    """Midnight UTC of a day, as unix time."""
    return int(datetime(day.year, day.month, day.day, tzinfo=UTC).timestamp())


def open_from(now: int, window_s: int, earliest_open_end: int | None, grain: Grain) -> date:
    """The first open period: runs ending at or after now − window may still change (a write at that second is
    not due yet: core.outcomes.is_due), and so may the current period.

    `earliest_open_end` is the earliest run end at or after now − window (None when there is none). Every
    period from the one holding it on is open, since each later period's runs end later still.
    """
    current = period_start(now, grain)
    if earliest_open_end is None:
        return current
    return min(current, period_start(earliest_open_end, grain))


def is_open(period: date, first_open: date) -> bool:
    """A period is open from the first open period on (`open_from`): measure-rates rewrites exactly these.

    A quiet period that holds now − window but no run ending at or after it is closed, although it ends
    after now − window: none of its runs can change any more.
    """
    return period >= first_open


@dataclass(frozen=True)
class Sides:
    """The periods a before/after comparison sums: N weeks of full periods on each side of a date."""

    before: tuple[date, ...]  # oldest first
    after: tuple[date, ...]
    straddling: date | None  # the period holding the date when it does not start it: on neither side


def comparison_periods(at: date, weeks: int, grain: Grain) -> Sides:
    """Before: the full periods of the `weeks` weeks that end on or before `at`; after: those from `at` on.

    A week that holds `at` without starting on it has runs of both sides and is left out of both.
    """
    length = period_length(grain)
    count = weeks * 7 // length.days
    first = period_start(unix_of(at), grain)
    straddling = None if first == at else first
    # Only periods a date can name: a marker at the edge of the calendar (a hand-made row) has fewer.
    before = tuple(first - length * k for k in range(count, 0, -1) if first - date.min >= length * k)
    skipped = 0 if straddling is None else 1
    after = tuple(
        first + length * k for k in range(skipped, count + skipped) if date.max - first >= length * k
    )
    return Sides(before, after, straddling)
