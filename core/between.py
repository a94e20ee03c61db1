"""One configuration against another over the same whole periods (`runrecord compare --between`, Rates page).

ADR-156's second criterion, which 003_… ("What this does not build") makes computable without deciding it:
does a canary configuration do better or worse than the stable one? Both sides sum the stored figures of
the same periods: every closed period of the grain that holds the metric's rows for both configurations,
bounded by --from/--to to the periods that lie wholly between them. Open periods are left out (a run in
them may still change). The arithmetic and the test are core.rates', the verdict core.verdicts', the sums
and the "too few to show" rule core.comparison's (a side with fewer than MIN_GROUP_RUNS runs in any of its
periods is hidden). Beside the verdict: how many runs each side still needs before a difference of
MIN_DETECTABLE_DIFFERENCE could be told apart (core.sample_size), and how many weeks that is at the side's
volume in the last seven days of the span.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date, timedelta

from core.comparison import (
    TOO_FEW_TO_SHOW,
    Figures,
    Needed,
    Side,
    need_of,
    per_side_needed,
    side_of,
    weekly_volume,
)
from core.groups import Group
from core.metrics import DEFINITIONS, Metric
from core.periods import Grain, is_open, period_length
from core.rates import Comparison, compare
from core.verdicts import HIGHER, LOWER, worded


def common_periods(
    metric: Metric,
    grain: Grain,
    first: Figures,
    second: Figures,
    *,
    first_open: date,
    start: date | None = None,
    end: date | None = None,
) -> tuple[date, ...]:
    """The closed periods holding the metric's rows of both groups, each wholly within start..end."""
    length = period_length(grain)
    held = [{period for name, period in figures if name == metric.value} for figures in (first, second)]
    return tuple(
        sorted(
            period
            for period in held[0] & held[1]
            if not is_open(period, first_open)
            and (start is None or period >= start)
            and (end is None or period + length - timedelta(days=1) <= end)
        )
    )


@dataclass(frozen=True)
class BetweenReport:
    metric: Metric
    grain: Grain
    groups: tuple[Group, Group]
    periods: tuple[date, ...]  # the span both sides are summed over, oldest first
    first: Side
    second: Side
    comparison: Comparison | None  # second against first; None when a side is too few to show
    needed: Needed | None  # None when a side is too few to show or has no data

    @property
    def verdict(self) -> str:
        """too few to show; else core.verdicts' finding: significantly higher/lower (": better" or ": worse"
        by the metric's direction), no difference of 5 points or more, too few to tell."""
        if self.comparison is None:
            return TOO_FEW_TO_SHOW
        return worded(
            self.comparison.finding,
            self.comparison.difference,
            rise=HIGHER,
            drop=LOWER,
            better=DEFINITIONS[self.metric].better,
        )

    def last_day(self) -> date:
        """The span's last day."""
        return self.periods[-1] + period_length(self.grain) - timedelta(days=1)


def needed(
    metric: Metric,
    periods: Sequence[date],
    first: Side,
    second: Side,
    figures: tuple[Figures, Figures],
    last: date,
) -> Needed | None:
    """Each side's runs and weeks still needed at the observed rates, at its volume in the span's last seven
    days; none needed once it can be told."""
    per_side = per_side_needed(first, second)
    if per_side is None:
        return None
    return Needed(
        per_side=per_side,
        first=need_of(
            first.proportion.denominator, per_side, weekly_volume(metric, periods, figures[0], last)
        ),
        second=need_of(
            second.proportion.denominator, per_side, weekly_volume(metric, periods, figures[1], last)
        ),
    )


def between_report(
    metric: Metric,
    grain: Grain,
    groups: tuple[Group, Group],
    periods: Iterable[date],
    figures: tuple[Figures, Figures],
    *,
    first_open: date,
) -> BetweenReport:
    """The metric of the second group against the first over the same periods (at least one)."""
    span = tuple(sorted(periods))
    if not span:
        raise ValueError("a comparison between groups needs at least one period both have")
    first, second = (
        side_of(metric, group, grain, span, found, first_open=first_open)
        for group, found in zip(groups, figures, strict=True)
    )
    shown = first.shown and second.shown
    last = span[-1] + period_length(grain) - timedelta(days=1)
    return BetweenReport(
        metric=metric,
        grain=grain,
        groups=groups,
        periods=span,
        first=first,
        second=second,
        comparison=compare(first.proportion, second.proportion) if shown else None,
        needed=needed(metric, span, first, second, figures, last) if shown else None,
    )
