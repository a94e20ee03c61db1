"""One configuration against another over the same whole periods (`runrecord compare --between`, Rates page):
how the two sides are chosen.

ADR-156's second criterion, which 003_… ("What this does not build") makes computable without deciding it:
does a canary configuration do better or worse than the stable one? Both sides sum the stored figures of
the same periods: every closed period of the grain that holds the metric's rows for both configurations,
bounded by --from/--to to the periods that lie wholly between them. Open periods are left out (a run in
them may still change). The sums, the "too few to show" rule, the verdict and the runs each side still
needs are core.two_sided's, the same as `compare --at`'s.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date

from core.groups import Group
from core.metrics import Metric
from core.periods import Grain, is_open, last_day
from core.two_sided import Figures, Kind, TwoSided, side_of, two_sided


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
    held = [{period for name, period in figures if name == metric.value} for figures in (first, second)]
    return tuple(
        sorted(
            period
            for period in held[0] & held[1]
            if not is_open(period, first_open)
            and (start is None or period >= start)
            and (end is None or last_day(period, grain) <= end)
        )
    )


@dataclass(frozen=True)
class BetweenReport:
    groups: tuple[Group, Group]
    periods: tuple[date, ...]  # the span both sides are summed over, oldest first
    two_sided: TwoSided  # the second group against the first

    def last_day(self) -> date:
        """The span's last day."""
        return last_day(self.periods[-1], self.two_sided.grain)


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
    return BetweenReport(
        groups=groups,
        periods=span,
        two_sided=two_sided(metric, grain, Kind.BETWEEN, (first, second), figures),
    )
