"""Two sides of a rate against each other: each side's sums, the difference, the verdict, and the runs each
side still needs (`runrecord compare --at` and `--between`, measure-rates, the Rates page).

What chose the sides is another module's: core.comparison takes the periods before a date against those
from it, core.between one configuration against another over the same periods. Whatever chose them, a side
is the sum of the stored figures of whole periods of one grain; a configuration or skill with fewer than
MIN_GROUP_RUNS runs in any period of a side is "too few to show" (DESIGN.md, "Privacy"): judged per period,
not per side, or comparing sides of different lengths would give the figures of a small period away. The
arithmetic is core.rates', the verdict core.verdicts', in the words of the kind: a rate over time rose or
fell, a group is higher or lower than another. When the verdict is "too few to tell", the report says how
many more runs each side needs before a difference of MIN_DETECTABLE_DIFFERENCE could be told apart
(core.sample_size), and how many weeks that is at the side's volume in the last seven days of its periods
that hold data.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from enum import StrEnum

from core.counting import Count
from core.groups import Group, shown
from core.metrics import DEFINITIONS, Metric
from core.periods import Grain, is_open, last_day
from core.rates import Comparison, Proportion, compare
from core.rule_versions import ordered
from core.sample_size import more_needed, runs_per_side, weeks_needed
from core.verdicts import FELL, HIGHER, LOWER, ROSE, worded

WEEK = timedelta(days=7)

# A side of a configuration or skill with a period under MIN_GROUP_RUNS runs (DESIGN.md, "Privacy").
TOO_FEW_TO_SHOW = "too few to show"

# The stored figures a side sums: (metric name, period start) → numerator, denominator, excluded.
Figures = Mapping[tuple[str, date], Count]


class Kind(StrEnum):
    """What chose the two sides."""

    OVER_TIME = "over time"  # one group, the periods before a date against those from it (core.comparison)
    BETWEEN = "between groups"  # one group against another over the same periods (core.between)


# How a significant move reads, by kind (rise, drop): a rate over time rose or fell; a group is higher or
# lower than the other.
MOVES: dict[Kind, tuple[str, str]] = {Kind.OVER_TIME: (ROSE, FELL), Kind.BETWEEN: (HIGHER, LOWER)}


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
        return last_day(self.periods[-1], grain)


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


@dataclass(frozen=True)
class TwoSided:
    """The second side against the first: compared only when both are shown."""

    metric: Metric
    grain: Grain
    kind: Kind
    first: Side
    second: Side
    comparison: Comparison | None  # None when a side is too few to show
    needed: Needed | None  # None when a side is too few to show or has no data

    @property
    def verdict(self) -> str:
        """too few to show; else core.verdicts' finding in the kind's words (MOVES, followed by ": better" or
        ": worse" by the metric's direction), no difference of 5 points or more, too few to tell."""
        if self.comparison is None:
            return TOO_FEW_TO_SHOW
        rise, drop = MOVES[self.kind]
        return worded(
            self.comparison.finding,
            self.comparison.difference,
            rise=rise,
            drop=drop,
            better=DEFINITIONS[self.metric].better,
        )


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


def newest_weekly_volume(metric: Metric, grain: Grain, side: Side, figures: Figures) -> int:
    """A side's denominator in the last seven days of its periods that hold data (0 without any)."""
    held = [period for period in side.periods if (metric.value, period) in figures]
    if not held:
        return 0
    return weekly_volume(metric, side.periods, figures, last_day(max(held), grain))


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


def two_sided(
    metric: Metric, grain: Grain, kind: Kind, sides: tuple[Side, Side], figures: tuple[Figures, Figures]
) -> TwoSided:
    """The second side against the first, each summed from its figures: compared, and what each still needs,
    only when both are shown."""
    first, second = sides
    both_shown = first.shown and second.shown
    per_side = per_side_needed(first, second) if both_shown else None
    needed = (
        None
        if per_side is None
        else Needed(
            per_side=per_side,
            first=need_of(
                first.proportion.denominator, per_side, newest_weekly_volume(metric, grain, first, figures[0])
            ),
            second=need_of(
                second.proportion.denominator,
                per_side,
                newest_weekly_volume(metric, grain, second, figures[1]),
            ),
        )
    )
    return TwoSided(
        metric=metric,
        grain=grain,
        kind=kind,
        first=first,
        second=second,
        comparison=compare(first.proportion, second.proportion) if both_shown else None,
        needed=needed,
    )
