"""`runrecord release add|list` and `runrecord compare`: dated markers, and rates before and after a date.

compare reads the stored rates (tx_runrecord_rate, as measure-rates wrote them and the dashboard shows them)
rather than recomputing: both sides are sums of whole periods of one grain, N weeks before the date and N
weeks from it (core.measures.comparison_periods); a week that holds the date without starting on it is left
out of both sides. Open periods count with what they hold now, and the output says how many there are. The
arithmetic and the "too few to tell" rule are core.rates'; a configuration or skill with fewer than
MIN_GROUP_RUNS runs in any period of a side is "too few to show" (DESIGN.md, "Privacy"): judged per period,
not per side, or comparing sides of different lengths would give the figures of a small period away.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from sqlalchemy import Connection, Engine

from adapters import dialect as sql
from adapters import facts as q
from adapters import schema
from adapters.database import RunrecordError, reported
from core.measures import (
    ALL_RUNS,
    DEFINITIONS,
    RATES,
    Grain,
    Group,
    GroupKind,
    Metric,
    comparison_periods,
    period_length,
    shown,
    unix_of,
)
from core.rates import MIN_DETECTABLE_DIFFERENCE, MIN_GROUP_RUNS, Comparison, Interval, Proportion, compare

DEFAULT_WEEKS = 4
MAX_LABEL = 255  # tx_runrecord_release.label

# The metrics a comparison can name: every rate (runs and window_open are counts).
RATE_METRICS: tuple[Metric, ...] = RATES

RULE = (
    f'"too few to tell" when the 95% interval of the difference (Newcombe) is wider than '
    f"±{MIN_DETECTABLE_DIFFERENCE * 100:g} points, i.e. the samples cannot tell a difference of "
    f"{MIN_DETECTABLE_DIFFERENCE * 100:g} points from none; otherwise significant when the two-sided "
    "two-proportion z-test gives p < 0.05"
)


@dataclass(frozen=True)
class Release:
    released_on: date
    label: str


def parse_day(text: str, what: str) -> date:
    """An ISO 8601 date (YYYY-MM-DD); RunrecordError naming `what` otherwise."""
    try:
        return date.fromisoformat(text)
    except ValueError as error:
        raise RunrecordError(f"{what} is not a date (YYYY-MM-DD): {text!r}") from error


def add_release(engine: Engine, released_on: date, label: str, *, now: int) -> bool:
    """Record a marker; False when the same date and label are recorded already."""
    label = " ".join(label.split())
    if not label or len(label) > MAX_LABEL:
        raise RunrecordError(f"a release label has 1 to {MAX_LABEL} characters")
    release = schema.release
    with reported(engine, "recording the release"), engine.begin() as connection:
        statement = sql.insert_or_ignore(connection.dialect.name, release).returning(release.c.uid)
        inserted = connection.execute(
            statement, [{"released_on": released_on, "label": label, "crdate": now}]
        ).all()
    return bool(inserted)


def list_releases(engine: Engine) -> list[Release]:
    """Every marker, oldest first."""
    with reported(engine, "reading the releases"), engine.connect() as connection:
        return [Release(q.day_of(row.released_on), str(row.label)) for row in q.releases(connection)]


# --- comparisons -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Side:
    periods: tuple[date, ...]
    with_data: int  # periods that hold the metric's rows
    open_periods: int  # periods a run may still change at `now`
    runs: int  # runs of the group in these periods
    shown: bool  # a configuration or skill with fewer than MIN_GROUP_RUNS runs in a period is too few to show
    proportion: Proportion
    excluded: int

    @property
    def first(self) -> date:
        return self.periods[0]

    def last_day(self, grain: Grain) -> date:
        """The side's last day."""
        return self.periods[-1] + period_length(grain) - timedelta(days=1)


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

    @property
    def verdict(self) -> str:
        """significant drop/rise, no significant difference, too few to tell, or too few to show."""
        if self.comparison is None:
            return "too few to show"
        if self.comparison.too_few_to_tell:
            return "too few to tell"
        if not self.comparison.significant:
            return "no significant difference"
        difference = self.comparison.difference or 0.0
        return "significant drop" if difference < 0 else "significant rise"


def compare_at(
    engine: Engine,
    metric: Metric,
    at: date,
    *,
    weeks: int = DEFAULT_WEEKS,
    group: Group = ALL_RUNS,
    grain: Grain = Grain.WEEK,
    now: int,
    window_s: int,
) -> ComparisonReport:
    """The metric over the N weeks before `at` against the N weeks from it, from the stored rates."""
    with reported(engine, "reading the rates"), engine.connect() as connection:
        if grain.value not in q.measured_grains(connection):
            raise RunrecordError(
                f"no rates at grain {grain.value} yet: run `runrecord measure-rates --grain {grain.value}`"
            )
        return _compare(connection, metric, at, weeks, group, grain, now, window_s)


def release_comparisons(
    engine: Engine, *, grain: Grain, now: int, window_s: int, weeks: int = DEFAULT_WEEKS
) -> list[tuple[Release, list[ComparisonReport]]]:
    """Every rate metric, all runs, across every recorded release."""
    with reported(engine, "reading the rates"), engine.connect() as connection:
        releases = [Release(q.day_of(row.released_on), str(row.label)) for row in q.releases(connection)]
        return [
            (
                release,
                [
                    _compare(connection, metric, release.released_on, weeks, ALL_RUNS, grain, now, window_s)
                    for metric in RATE_METRICS
                ],
            )
            for release in releases
        ]


def _compare(
    connection: Connection,
    metric: Metric,
    at: date,
    weeks: int,
    group: Group,
    grain: Grain,
    now: int,
    window_s: int,
) -> ComparisonReport:
    sides = comparison_periods(at, weeks, grain)
    figures = q.rate_figures(
        connection,
        grain,
        [metric.value, Metric.RUNS.value],
        group.kind.value,
        group.value,
        sides.before + sides.after,
    )

    def side(periods: Sequence[date]) -> Side:
        rows = [figures[(metric.value, p)] for p in periods if (metric.value, p) in figures]
        per_period = [
            figures[(Metric.RUNS.value, p)].numerator for p in periods if (Metric.RUNS.value, p) in figures
        ]
        runs = sum(per_period)
        length = period_length(grain)
        return Side(
            periods=tuple(periods),
            with_data=len(rows),
            open_periods=sum(1 for p in periods if unix_of(p + length) > now - window_s),
            runs=runs,
            shown=shown(group, runs) and all(shown(group, n) for n in per_period if n > 0),
            proportion=Proportion(sum(r.numerator for r in rows), sum(r.denominator for r in rows)),
            excluded=sum(r.excluded for r in rows),
        )

    before, after = side(sides.before), side(sides.after)
    comparison = compare(before.proportion, after.proportion) if before.shown and after.shown else None
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
        releases=tuple(q.release_labels_on(connection, at)),
    )


# --- what it says -------------------------------------------------------------------------------------------


def _percent(value: float | None) -> str:
    return "–" if value is None else f"{value * 100:.1f}%"


def _interval(interval: Interval | None) -> str:
    return "–" if interval is None else f"{interval.low * 100:.1f}% – {interval.high * 100:.1f}%"


def _points(value: float) -> str:
    return f"{value * 100:+.1f}".replace("-", "−")


def group_text(group: Group) -> str:
    """How a group reads in a line: all runs, configuration X, skill Y (skill none)."""
    if group.kind is GroupKind.ALL:
        return "all runs"
    return f"{group.kind.value} {group.value or 'none'}"


def comparison_text(report: ComparisonReport) -> list[str]:
    """The comparison as the lines compare prints."""
    definition = DEFINITIONS[report.metric]
    marker = f" (release: {'; '.join(report.releases)})" if report.releases else ""
    lines = [
        f"{report.metric.value}, {group_text(report.group)}, at {report.at.isoformat()}{marker}",
        f"  numerator:   {definition.numerator}",
        f"  denominator: {definition.denominator}",
        f"  excluded:    {definition.excluded}",
    ]
    for name, side in (("before", report.before), ("after", report.after)):
        span = f"{side.first.isoformat()} – {side.last_day(report.grain).isoformat()}"
        count = f"{len(side.periods)} {report.grain.value}s, {side.with_data} with data"
        if side.open_periods:
            count += f", {side.open_periods} still open"
        if not side.shown:
            few = f"fewer than {MIN_GROUP_RUNS} runs in a {report.grain.value}"
            lines.append(f"  {name:<6}  {span} ({count}): too few to show ({few})")
            continue
        p = side.proportion
        lines.append(
            f"  {name:<6}  {span} ({count}): {p.numerator:,} / {p.denominator:,} = {_percent(p.rate)}, "
            f"95% CI {_interval(p.interval)}, excluded {side.excluded:,}"
        )
    if report.straddling is not None:
        lines.append(f"  the week of {report.straddling.isoformat()} holds the date and is on neither side")
    comparison = report.comparison
    if comparison is not None and comparison.difference is not None:
        interval = comparison.difference_interval
        assert interval is not None and comparison.p_value is not None
        lines.append(
            f"  difference {_points(comparison.difference)} points, 95% CI {_points(interval.low)} to "
            f"{_points(interval.high)} (Newcombe); two-proportion z-test {_p(comparison.p_value)}"
        )
    lines.append(f"  → {report.verdict}")
    lines.append(f"  rule: {RULE}")
    return lines


def _p(value: float) -> str:
    """The p-value as it reads in a line: "p = 0.0123", or "p < 0.0001"."""
    return "p < 0.0001" if value < 0.0001 else f"p = {value:.4f}"


def comparison_line(report: ComparisonReport) -> str:
    """One line per metric, as measure-rates prints it under a release."""
    before, after = report.before.proportion, report.after.proportion
    text = (
        f"{report.metric.value:<24} {_percent(before.rate):>6} ({before.numerator}/{before.denominator}) → "
        f"{_percent(after.rate):>6} ({after.numerator}/{after.denominator})"
    )
    comparison = report.comparison
    if comparison is not None and comparison.difference is not None and comparison.p_value is not None:
        text += f"  {_points(comparison.difference)} points, {_p(comparison.p_value)}"
    return f"{text}: {report.verdict}"


def comparison_json(report: ComparisonReport) -> dict[str, Any]:
    """The comparison for `--json`; a side too few to show carries no figures."""

    def side(value: Side) -> dict[str, Any]:
        shown_side: dict[str, Any] = {
            "from": value.first.isoformat(),
            "to": value.last_day(report.grain).isoformat(),
            "periods": len(value.periods),
            "periods_with_data": value.with_data,
            "open_periods": value.open_periods,
        }
        if not value.shown:
            return {**shown_side, "too_few_to_show": True}
        interval = value.proportion.interval
        return {
            **shown_side,
            "numerator": value.proportion.numerator,
            "denominator": value.proportion.denominator,
            "excluded": value.excluded,
            "rate": value.proportion.rate,
            "wilson_95": None if interval is None else [interval.low, interval.high],
        }

    comparison = report.comparison
    difference: dict[str, Any] | None = None
    if comparison is not None:
        interval = comparison.difference_interval
        difference = {
            "after_minus_before": comparison.difference,
            "newcombe_95": None if interval is None else [interval.low, interval.high],
            "p_value": None
            if comparison.p_value is None or math.isnan(comparison.p_value)
            else comparison.p_value,
            "too_few_to_tell": comparison.too_few_to_tell,
            "significant": comparison.significant,
        }
    definition = DEFINITIONS[report.metric]
    return {
        "metric": report.metric.value,
        "definition": {
            "numerator": definition.numerator,
            "denominator": definition.denominator,
            "excluded": definition.excluded,
        },
        "group": report.group.label,
        "grain": report.grain.value,
        "at": report.at.isoformat(),
        "weeks": report.weeks,
        "releases": list(report.releases),
        "straddling_period": None if report.straddling is None else report.straddling.isoformat(),
        "before": side(report.before),
        "after": side(report.after),
        "difference": difference,
        "verdict": report.verdict,
        "rule": RULE,
    }
