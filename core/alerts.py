"""When a rate moves: the comparisons made after every measurement, and which of them are an alert.

A rule is added to the system prompt only if the measurement shows it is needed (000_…, "Decision", "No new
system-prompt rule"), so a move of a rate must be noticed. After every measurement of the week grain, each
rate is compared for all runs and for every configuration and skill, on closed weeks only:

* **trend**: the newest closed week against the TREND_PERIODS weeks before it, summed;
* **release**: every release marker of the RELEASE_WEEKS weeks before the first open week, as `runrecord
  compare --at` compares it (DEFAULT_WEEKS weeks each side), on the closed weeks only, so that an alert's
  figures are final.

Alerts compare weeks, never days (ALERT_GRAIN): a day holds a few runs of a small installation, and its
trend, tested every night, raised most of the false alerts the simulation counted (benchmarks/sim_alerts.py,
docs/alerts.md, "How often alerts fire"); the day grain stays on the Rates page, for reading. **Each closed
week is tested once**: every comparison of a measurement reads closed weeks only, whose figures are final, and
which weeks it reads follows from the first open week alone (the release markers too are taken relative to
it, not to today), so every measurement while a week is the newest closed one makes the same comparisons
with the same figures and reaches the same alerts, which the table's key then writes once.

A comparison is tested only when both sides are shown and hold data: a configuration or skill with fewer than
MIN_GROUP_RUNS runs in any period of a side is too few to show (core.two_sided.side_of, DESIGN.md
"Privacy"). The comparisons one measurement tests — every rate, group and check — are corrected together
(core.multiple_testing: Benjamini–Hochberg at q = 0.05), and a tested comparison is an alert when the
correction rejects it (its adjusted p is at most q) and its verdict is significant (core.verdicts: p < 0.05,
which BH's rejection implies but for a p of exactly 0.05). An alert is keyed on its move (metric, grain,
group, kind, date), so that the same move is written once however often it is checked.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import date, timedelta
from enum import StrEnum

from core.comparison import DEFAULT_WEEKS, RATE_METRICS
from core.groups import Group
from core.metrics import Metric
from core.multiple_testing import FALSE_DISCOVERY_RATE, adjusted_p_values, rejected
from core.periods import Grain, Sides, comparison_periods, period_length
from core.rates import Interval, Proportion, compare
from core.two_sided import Figures, side_of
from core.verdicts import is_significant

# The issue behind the alerts: the newest closed week against "the four periods before it summed".
TREND_PERIODS = 4
# Release markers of the eight weeks before the first open week: a release's after side (DEFAULT_WEEKS
# weeks) has closed within that time, and a marker older than that has been looked at for long enough.
RELEASE_WEEKS = 8
# The one grain alerts compare: weeks, compare's default. A day's trend on a day's few runs, tested every
# night, was most of a quiet installation's false alerts; the days of a release's weeks would repeat the
# week's comparison as a second alert.
ALERT_GRAIN = Grain.WEEK


class AlertKind(StrEnum):
    TREND = "trend"  # the newest closed week against the TREND_PERIODS weeks before it
    RELEASE = "release"  # the periods before a release marker against those from it


class AlertStatus(StrEnum):
    OPEN = "open"
    CLOSED = "closed"  # acknowledged: `runrecord alerts ack ID`


@dataclass(frozen=True)
class Check:
    """One comparison to make for every rate and group: its kind, its date, its label and its periods."""

    kind: AlertKind
    at: date  # the newest closed week (trend) or the release date (release)
    label: str  # the labels of the release markers on `at`; "" for a trend
    sides: Sides


@dataclass(frozen=True)
class Alert:
    """A significant move of a rate: both sides with their figures, the difference, its interval and p."""

    metric: str
    grain: str
    group: Group
    kind: AlertKind
    at: date
    label: str
    before_from: date
    before_to: date
    after_from: date
    after_to: date
    before: Proportion
    after: Proportion
    difference: float  # after − before
    interval: Interval  # Newcombe's 95% interval of the difference
    p_value: float  # core.rates.p_value: the z-test, or Fisher's exact test where a cell expects fewer than 5
    # Benjamini–Hochberg's adjusted p over the comparisons of the measurement that raised it (an alert has
    # it at most q); None before the correction (a comparison) and for an alert stored before migration 0011.
    adjusted_p_value: float | None = None

    @property
    def key(self) -> tuple[str, str, str, str, str, date]:
        """What makes the move this move: metric, grain, group, kind and date (the table's unique key)."""
        return (self.metric, self.grain, self.group.kind.value, self.group.value, self.kind.value, self.at)

    @property
    def direction(self) -> str:
        """rise or drop."""
        return "rise" if self.difference > 0 else "drop"


@dataclass(frozen=True)
class StoredAlert:
    """An alert as tx_runrecord_alert holds it."""

    uid: int
    alert: Alert
    created_at: int
    status: AlertStatus
    closed_at: int  # 0 while open


def newest_closed(first_open: date, grain: Grain) -> date:
    """The newest closed period: the one before the first open period (core.periods.open_from)."""
    return first_open - period_length(grain)


def trend_check(first_open: date) -> Check:
    """The newest closed week against the TREND_PERIODS weeks before it."""
    newest = newest_closed(first_open, ALERT_GRAIN)
    length = period_length(ALERT_GRAIN)
    before = tuple(newest - length * k for k in range(TREND_PERIODS, 0, -1))
    return Check(AlertKind.TREND, newest, "", Sides(before, (newest,), None))


def recent_releases(markers: Iterable[tuple[date, str]], first_open: date) -> list[tuple[date, str]]:
    """The release dates of the RELEASE_WEEKS weeks before the first open week, each with its labels joined,
    oldest first; a marker dated in the first open week or later has no closed week after it yet."""
    earliest = first_open - timedelta(weeks=RELEASE_WEEKS)
    labels: dict[date, list[str]] = {}
    for day, label in markers:
        if earliest <= day < first_open:
            labels.setdefault(day, []).append(label)
    return [(day, "; ".join(sorted(labels[day]))) for day in sorted(labels)]


def release_check(released_on: date, label: str, first_open: date) -> Check | None:
    """The DEFAULT_WEEKS weeks before a release against those from it (as `runrecord compare --at`), closed
    weeks only; None while no closed week follows the release."""
    sides = comparison_periods(released_on, DEFAULT_WEEKS, ALERT_GRAIN)
    before = tuple(p for p in sides.before if p < first_open)
    after = tuple(p for p in sides.after if p < first_open)
    if not before or not after:
        return None
    return Check(AlertKind.RELEASE, released_on, label, Sides(before, after, sides.straddling))


def checks(first_open: date, markers: Iterable[tuple[date, str]]) -> list[Check]:
    """Every comparison to make after a measurement whose first open week is `first_open`: the trend, and
    each recent release; the same for every measurement while the same week is the newest closed one."""
    found = [trend_check(first_open)]
    for released_on, label in recent_releases(markers, first_open):
        check = release_check(released_on, label, first_open)
        if check is not None:
            found.append(check)
    return found


def periods_read(found: Iterable[Check]) -> set[date]:
    """The periods whose stored figures the checks need."""
    return {period for check in found for period in check.sides.before + check.sides.after}


def comparison_of(
    metric: Metric, group: Group, check: Check, figures: Figures, *, first_open: date
) -> Alert | None:
    """One comparison of weeks as an alert would carry it, when both sides are shown and hold data (so that it
    has a difference, its interval and p); None when a side is too few to show or has no data."""
    grain = ALERT_GRAIN
    before = side_of(metric, group, grain, check.sides.before, figures, first_open=first_open)
    after = side_of(metric, group, grain, check.sides.after, figures, first_open=first_open)
    if not (before.shown and after.shown):
        return None
    comparison = compare(before.proportion, after.proportion)
    if comparison.difference is None or comparison.difference_interval is None or comparison.p_value is None:
        return None
    return Alert(
        metric=metric.value,
        grain=grain.value,
        group=group,
        kind=check.kind,
        at=check.at,
        label=check.label,
        before_from=before.first,
        before_to=before.last_day(grain),
        after_from=after.first,
        after_to=after.last_day(grain),
        before=before.proportion,
        after=after.proportion,
        difference=comparison.difference,
        interval=comparison.difference_interval,
        p_value=comparison.p_value,
    )


def compared(
    found: Sequence[Check],
    figures_by_group: Mapping[Group, Figures],
    *,
    first_open: date,
    metrics: Sequence[Metric] = RATE_METRICS,
) -> list[Alert]:
    """Every rate, every group and every check: the comparisons that are tested, in key order."""
    made = [
        comparison
        for group in sorted(figures_by_group)
        for check in found
        for metric in metrics
        if (comparison := comparison_of(metric, group, check, figures_by_group[group], first_open=first_open))
        is not None
    ]
    return sorted(made, key=lambda comparison: comparison.key)


def alerts(measured: Sequence[Alert], *, q: float = FALSE_DISCOVERY_RATE) -> list[Alert]:
    """The alerts of one measurement's tested comparisons, corrected together: those Benjamini–Hochberg
    rejects at q (their adjusted p at most q) whose verdict is significant (p < 0.05), each with its
    adjusted p, in key order."""
    p_values = [comparison.p_value for comparison in measured]
    decided = zip(measured, rejected(p_values, q), adjusted_p_values(p_values), strict=True)
    moved = [
        replace(comparison, adjusted_p_value=adjusted)
        for comparison, rejects, adjusted in decided
        if rejects and is_significant(comparison.p_value)
    ]
    return sorted(moved, key=lambda alert: alert.key)
