"""The time range every chart of the Rates page shares: a preset span ending today, every period measured, or
chosen days; and the periods it holds, so that a period without data is a gap, never a line drawn across.

A range is a rule table (RANGES): its name as the URL carries it, its label, and how many weeks back it
reaches (None: from the first period measured; CUSTOM: the days chosen). `today` is an argument, never the
clock's.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta

from core.periods import Grain, period_length, period_start, unix_of

ALL = "all"
CUSTOM = "custom"


@dataclass(frozen=True)
class RangeChoice:
    name: str  # as ?range= carries it
    label: str
    weeks: int | None  # weeks back from today's period; None: from the first period measured (or custom)


RANGES: tuple[RangeChoice, ...] = (
    # Labels short enough for the filter bar's row: the control is labelled "Time range (last …)".
    RangeChoice("4w", "4 weeks", 4),
    RangeChoice("12w", "12 weeks", 12),
    RangeChoice("26w", "26 weeks", 26),
    RangeChoice(ALL, "all", None),
    RangeChoice(CUSTOM, "custom", None),
)
MAX_CUSTOM_DAYS = 3653  # ten years: the most a custom range outside the measured periods spans
DEFAULT_RANGE = "26w"  # half a year: a release and enough weeks on both sides of it
RANGE_NAMES: tuple[str, ...] = tuple(choice.name for choice in RANGES)
_WEEKS = {choice.name: choice.weeks for choice in RANGES}


@dataclass(frozen=True)
class TimeRange:
    """The days a chart spans, both included."""

    first: date
    last: date

    def start(self, grain: Grain) -> date:
        """The first period's start: a range starting mid-week keeps that week."""
        return period_start(unix_of(self.first), grain)

    def holds(self, period: date, grain: Grain) -> bool:
        """Whether the period starting on `period` overlaps the range (and so is drawn)."""
        return self.start(grain) <= period <= self.last


def time_range(
    name: str,
    *,
    today: date,
    earliest: date | None,
    chosen_from: date | None = None,
    chosen_to: date | None = None,
) -> TimeRange:
    """The range a choice names: N weeks back to the start of the week N − 1 weeks before today's, every
    measured period (from `earliest`, today without one), or the chosen days; an unknown name, or a custom
    range without both days in order, is the default range. Chosen days that reach into those of the
    measured periods (from the first, up to today) keep only those: no other period has a figure, and a
    chart draws each period of its range (a link from 1970 to 8999 would draw every day of seven thousand
    years). Days wholly outside them stay as chosen, their last MAX_CUSTOM_DAYS at most, and their charts
    say that no period has a figure."""
    if name == CUSTOM:
        if chosen_from is not None and chosen_to is not None and chosen_from <= chosen_to:
            first = chosen_from if earliest is None else max(chosen_from, min(earliest, today))
            last = min(chosen_to, today)
            if first <= last:
                return TimeRange(first, last)
            return TimeRange(max(chosen_from, chosen_to - timedelta(days=MAX_CUSTOM_DAYS - 1)), chosen_to)
        name = DEFAULT_RANGE
    if name == ALL:
        start = today if earliest is None else min(earliest, today)
        return TimeRange(start, today)
    weeks = _WEEKS.get(name) or _WEEKS[DEFAULT_RANGE]
    assert weeks is not None  # the default range is a span of weeks
    this_week = period_start(unix_of(today), Grain.WEEK)
    return TimeRange(this_week - timedelta(weeks=weeks - 1), today)


def periods_in(span: TimeRange, grain: Grain) -> tuple[date, ...]:
    """Every period of the grain that starts within the range (a week: from the Monday of its first day's
    week, so that a range starting mid-week keeps that week), oldest first."""
    step = period_length(grain)
    current = span.start(grain)
    found = []
    while current <= span.last:
        found.append(current)
        current += step
    return tuple(found)
