"""A rate before and after a date (`runrecord compare --at`, measure-rates, the Rates page): how the two sides
are chosen.

Both sides are whole periods of one grain, N weeks before the date and N weeks from it
(core.periods.comparison_periods); a week that holds the date without starting on it is left out of both
sides. Open periods count with what they hold now, and the report says how many there are. The sums, the
verdict and the runs each side still needs are core.two_sided's, the same as `compare --between`'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date

from core.groups import Group
from core.metrics import RATES, Metric
from core.periods import Grain, Sides
from core.two_sided import Figures, Kind, Side, TwoSided, side_of, two_sided

DEFAULT_WEEKS = 4

# The metrics a comparison can name: every rate (runs and window_open are counts).
RATE_METRICS: tuple[Metric, ...] = RATES


@dataclass(frozen=True)
class ComparisonReport:
    group: Group
    at: date
    weeks: int
    straddling: date | None
    releases: tuple[str, ...]  # labels of the markers on `at`
    two_sided: TwoSided  # the periods after `at` against those before it

    @property
    def before(self) -> Side:
        """The periods before `at`."""
        return self.two_sided.first

    @property
    def after(self) -> Side:
        """The periods from `at` on."""
        return self.two_sided.second


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
    return ComparisonReport(
        group=group,
        at=at,
        weeks=weeks,
        straddling=sides.straddling,
        releases=tuple(releases),
        two_sided=two_sided(metric, grain, Kind.OVER_TIME, (before, after), (figures, figures)),
    )
