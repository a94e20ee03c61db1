"""The summary row of the Rates page: one tile per headline rate, read from the stored rate rows.

A tile holds the metric's last closed period (its figures and interval), the change against the period
before it, and the change across the newest release (RELEASE_WEEKS on each side, as `runrecord compare --at`
sums them). Both changes are core.comparison's reports, so a tile says what compare and the before/after
panel say, and its tone (the colour) is their verdict: better or worse only for a significant move of a
metric whose good direction the registry gives (core.metrics, `better`); a move that is not significant, or
of a metric that moves neither way by itself, has no tone. A configuration or skill with fewer than
MIN_GROUP_RUNS runs in a period is too few to show here too (core.comparison.side_of).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from enum import StrEnum

from core.comparison import ComparisonReport, comparison_report
from core.groups import ALL_RUNS, Group
from core.metrics import Metric
from core.periods import Grain, Sides, comparison_periods, period_length
from core.two_sided import Figures
from core.verdicts import is_move, is_worse

# The tiles, in the order of the row: EDITED, nothingSaved as the chat stored it and as runrecord recomputes
# it, the denials of earlier work, and "go on" while an approval waits.
TILE_METRICS: tuple[Metric, ...] = (
    Metric.EDITED_RATE,
    Metric.NOTHING_SAVED_RATE,
    Metric.CLAIMED_UNWRITTEN_RATE,
    Metric.DENIAL_RATE,
    Metric.GO_ON_WHILE_WAITING,
)
# The span on each side of the newest release, in weeks: compare's default and the alerts' span.
RELEASE_WEEKS = 4


class Tone(StrEnum):
    """How a change reads for its metric: the colour of a tile's change."""

    BETTER = "better"
    WORSE = "worse"
    NONE = "none"  # not significant, too few to tell or to show, or a metric that moves neither way


def tone(report: ComparisonReport | None) -> Tone:
    """Better or worse for a significant move the metric registry judges; otherwise no tone."""
    if report is None:
        return Tone.NONE
    verdict = report.two_sided.verdict
    if not is_move(verdict) or not verdict.endswith((": better", ": worse")):
        return Tone.NONE
    return Tone.WORSE if is_worse(verdict) else Tone.BETTER


@dataclass(frozen=True)
class Tile:
    metric: Metric
    period: date  # the last closed period
    previous: ComparisonReport  # the period before it against it; .after is the tile's own figure
    release: ComparisonReport | None  # across the newest release; None without a release marker

    @property
    def previous_tone(self) -> Tone:
        """The colour of the change against the period before."""
        return tone(self.previous)

    @property
    def release_tone(self) -> Tone:
        """The colour of the change across the newest release."""
        return tone(self.release)


def last_closed(first_open: date, grain: Grain) -> date:
    """The last closed period: the one before the first period a run may still change."""
    return first_open - period_length(grain)


def _previous_sides(first_open: date, grain: Grain) -> Sides:
    last = last_closed(first_open, grain)
    return Sides(before=(last - period_length(grain),), after=(last,), straddling=None)


def periods_read(first_open: date, grain: Grain, release: date | None) -> tuple[date, ...]:
    """Every period the tiles read: the last closed one, the one before, and both sides of the release."""
    sides = _previous_sides(first_open, grain)
    periods = {*sides.before, *sides.after}
    if release is not None:
        across = comparison_periods(release, RELEASE_WEEKS, grain)
        periods |= {*across.before, *across.after}
    return tuple(sorted(periods))


def tiles(
    figures: Figures,
    *,
    grain: Grain,
    first_open: date,
    release: date | None,
    release_labels: Sequence[str] = (),
    group: Group = ALL_RUNS,
    metrics: Sequence[Metric] = TILE_METRICS,
) -> tuple[Tile, ...]:
    """A tile per metric from the stored figures (metric and `runs`, by name and period) of one group: the
    last closed period against the one before, and RELEASE_WEEKS each side of the newest release."""
    found = []
    period_weeks = max(1, period_length(grain).days // 7)  # the span each side names, in weeks
    for metric in metrics:
        previous = comparison_report(
            metric,
            last_closed(first_open, grain),
            _previous_sides(first_open, grain),
            figures,
            weeks=period_weeks,
            group=group,
            grain=grain,
            releases=(),
            first_open=first_open,
        )
        across = None
        if release is not None:
            across = comparison_report(
                metric,
                release,
                comparison_periods(release, RELEASE_WEEKS, grain),
                figures,
                weeks=RELEASE_WEEKS,
                group=group,
                grain=grain,
                releases=release_labels,
                first_open=first_open,
            )
        found.append(Tile(metric, last_closed(first_open, grain), previous, across))
    return tuple(found)
