"""A rate before and after a date, from the stored figures of whole periods (`runrecord compare`, Rates page).

Both sides are sums of whole periods of one grain, N weeks before the date and N weeks from it
(core.periods.comparison_periods); a week that holds the date without starting on it is left out of both
sides. Open periods count with what they hold now, and the report says how many there are. The arithmetic
is core.rates', the verdict core.verdicts'; a configuration or skill with fewer than MIN_GROUP_RUNS runs
in any period of a side is "too few to show" (DESIGN.md, "Privacy"): judged per period, not per side, or
comparing sides of different lengths would give the figures of a small period away. When the verdict is
"too few to tell", the report says how many more runs each side needs before a difference of
MIN_DETECTABLE_DIFFERENCE could be told apart (core.sample_size), and how many weeks that is at the side's
volume in the last seven days of it that hold data — the same figures `compare --between` gives.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, timedelta

from core.counting import Count
from core.groups import Group, shown
from core.metrics import DEFINITIONS, RATES, Metric
from core.periods import Grain, Sides, is_open, period_length
from core.rates import Comparison, Proportion, compare
from core.rule_versions import ordered
from core.sample_size import more_needed, runs_per_side, weeks_needed
from core.verdicts import FELL, ROSE, worded

DEFAULT_WEEKS = 4
WEEK = timedelta(days=7)

# A side of a configuration or skill with a period under MIN_GROUP_RUNS runs (DESIGN.md, "Privacy").
TOO_FEW_TO_SHOW = "too few to show"

# The metrics a comparison can name: every rate (runs and window_open are counts).
RATE_METRICS: tuple[Metric, ...] = RATES


# The stored figures a comparison sums: (metric name, period start) → numerator, denominator, excluded.
Figures = Mapping[tuple[str, date], Count]


def metrics_read(metric: Metric) -> tuple[Metric, Metric]:
    """The metrics whose figures a comparison of `metric` needs: it, and the runs its groups are judged by."""
    return metric, Metric.RUNS


@dataclass(frozen=True)
class Side:
    periods: tuple[date, ...]
    with_data: int  # periods that hold the metric's rows
    open_periods: int  # periods a run may still change at `now`
    runs: int  # runs of the group in these periods
    shown: bool  # a configuration or skill with fewer than MIN_GROUP_RUNS runs in a period is too few to show
    proportion: Proportion
    excluded: int
    # The rule versions of the derived runs its figures count (core.rule_versions), oldest first.
    rule_versions: tuple[str, ...] = ()

    @property
    def first(self) -> date:
        """The side's first period."""
        return self.periods[0]

    def last_day(self, grain: Grain) -> date:
        """The side's last day."""
        return self.periods[-1] + period_length(grain) - timedelta(days=1)


@dataclass(frozen=True)
class Need:
    """What one side lacks before the difference can be told apart."""

    have: int  # its denominator
    more: int  # runs (units of the denominator) it still needs
    weekly: int  # its denominator in the last seven days of the periods it is judged by
    weeks: int | None  # whole weeks at that volume; None when it had none in those days


@dataclass(frozen=True)
class Needed:
    per_side: int  # core.sample_size.runs_per_side at the observed rates; 0 once the verdict is told
    first: Need
    second: Need


def weekly_volume(metric: Metric, periods: Sequence[date], figures: Figures, last_day: date) -> int:
    """The denominator of the periods starting in the seven days up to `last_day`."""
    since = last_day - WEEK
    return sum(
        figures[(metric.value, period)].denominator
        for period in periods
        if since < period <= last_day and (metric.value, period) in figures
    )


def need_of(have: int, per_side: int, weekly: int) -> Need:
    """A side with `have` in its denominator, when each side needs `per_side`, at `weekly` a week."""
    more = more_needed(have, per_side)
    return Need(have=have, more=more, weekly=weekly, weeks=weeks_needed(more, weekly))


def per_side_needed(first: Side, second: Side) -> int | None:
    """The runs each side needs at the observed rates, 0 when the verdict is told already; None when a side
    has no data."""
    p1, p2 = first.proportion.rate, second.proportion.rate
    if p1 is None or p2 is None:
        return None
    told = not compare(first.proportion, second.proportion).too_few_to_tell
    return 0 if told else runs_per_side(p1, p2)


def _newest_seven_days(metric: Metric, grain: Grain, side: Side, figures: Figures) -> int:
    held = [period for period in side.periods if (metric.value, period) in figures]
    if not held:
        return 0
    last = max(held) + period_length(grain) - timedelta(days=1)
    return weekly_volume(metric, side.periods, figures, last)


@dataclass(frozen=True)
class ComparisonReport:
    metric: Metric
    group: Group
    grain: Grain
    at: date
    weeks: int
    straddling: date | None
    before: Side
    after: Side
    comparison: Comparison | None  # None when a side is too few to show
    releases: tuple[str, ...]  # labels of the markers on `at`
    needed: Needed | None = None  # None when a side is too few to show or has no data

    @property
    def verdict(self) -> str:
        """too few to show; else core.verdicts' finding: rose/fell significantly (": better" or ": worse" by
        the metric's direction), no difference of 5 points or more, too few to tell."""
        if self.comparison is None:
            return TOO_FEW_TO_SHOW
        return worded(
            self.comparison.finding,
            self.comparison.difference,
            rise=ROSE,
            drop=FELL,
            better=DEFINITIONS[self.metric].better,
        )


def side_of(
    metric: Metric,
    group: Group,
    grain: Grain,
    periods: Sequence[date],
    figures: Figures,
    *,
    first_open: date,
) -> Side:
    """A side: the metric's figures summed over its periods, shown only if no period of it is too small."""
    rows = [figures[(metric.value, p)] for p in periods if (metric.value, p) in figures]
    runs = Metric.RUNS.value
    per_period = [figures[(runs, p)].numerator for p in periods if (runs, p) in figures]
    total = sum(per_period)
    return Side(
        periods=tuple(periods),
        with_data=len(rows),
        open_periods=sum(1 for p in periods if is_open(p, first_open)),
        runs=total,
        shown=shown(group, total) and all(shown(group, n) for n in per_period if n > 0),
        proportion=Proportion(sum(r.numerator for r in rows), sum(r.denominator for r in rows)),
        excluded=sum(r.excluded for r in rows),
        rule_versions=ordered(version for r in rows for version in r.rule_versions),
    )


def comparison_report(
    metric: Metric,
    at: date,
    sides: Sides,
    figures: Figures,
    *,
    weeks: int,
    group: Group,
    grain: Grain,
    releases: Sequence[str],
    first_open: date,
) -> ComparisonReport:
    """The metric over the periods before `at` against those from it; no comparison when a side is too few
    to show."""
    before = side_of(metric, group, grain, sides.before, figures, first_open=first_open)
    after = side_of(metric, group, grain, sides.after, figures, first_open=first_open)
    shown = before.shown and after.shown
    comparison = compare(before.proportion, after.proportion) if shown else None
    per_side = per_side_needed(before, after) if shown else None
    needed = (
        None
        if per_side is None
        else Needed(
            per_side=per_side,
            first=need_of(
                before.proportion.denominator, per_side, _newest_seven_days(metric, grain, before, figures)
            ),
            second=need_of(
                after.proportion.denominator, per_side, _newest_seven_days(metric, grain, after, figures)
            ),
        )
    )
    return ComparisonReport(
        metric=metric,
        group=group,
        grain=grain,
        at=at,
        weeks=weeks,
        straddling=sides.straddling,
        before=before,
        after=after,
        comparison=comparison,
        releases=tuple(releases),
        needed=needed,
    )
