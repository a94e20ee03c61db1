"""`runrecord release add|list` and `runrecord compare`: dated markers, and rates before and after a date.

compare reads the stored rates (tx_runrecord_rate, as measure-rates wrote them and the dashboard shows them)
rather than recomputing; the sides are core.comparison's, the sums and the verdict core.two_sided's, and the
lines and the JSON core.two_sided_text's (framed by core.comparison_text), the same as compare --between's.
"""

from __future__ import annotations

from datetime import date

from sqlalchemy import Connection, Engine

from adapters import measure_marks, rates
from adapters import releases as markers
from adapters.database import RunrecordError, reported
from adapters.releases import MAX_LABEL, Release
from core.comparison import DEFAULT_WEEKS, RATE_METRICS, ComparisonReport, comparison_report
from core.groups import ALL_RUNS, Group
from core.metrics import Metric
from core.periods import Grain, comparison_periods
from core.two_sided import metrics_read
from jobs.between import unknown_group


def add_release(engine: Engine, released_on: date, label: str, *, now: int) -> bool:
    """Record a marker; False when the same date and label are recorded already."""
    label = " ".join(label.split())
    if not label or len(label) > MAX_LABEL:
        raise RunrecordError(f"a release label has 1 to {MAX_LABEL} characters")
    if not label.isprintable():  # an escape or a zero-width mark would act on the terminal or hide in a page
        raise RunrecordError("a release label holds a control or format character")
    with reported(engine, "recording the release"), engine.begin() as connection:
        return markers.add_release(connection, released_on, label, now=now)


def list_releases(engine: Engine) -> list[Release]:
    """Every marker, oldest first."""
    with reported(engine, "reading the releases"), engine.connect() as connection:
        return markers.releases(connection)


def compare_at(
    engine: Engine,
    metric: Metric,
    at: date,
    *,
    weeks: int = DEFAULT_WEEKS,
    group: Group = ALL_RUNS,
    grain: Grain = Grain.WEEK,
    now: int,
) -> ComparisonReport:
    """The metric over the N weeks before `at` against the N weeks from it, from the stored rates."""
    with reported(engine, "reading the rates"), engine.connect() as connection:
        if grain.value not in rates.measured_grains(connection):
            raise RunrecordError(
                f"no rates at grain {grain.value} yet: run `runrecord measure-rates --grain {grain.value}`"
            )
        if group != ALL_RUNS:
            known = rates.group_values(connection, grain, group.kind.value)
            if group.value not in known:
                raise unknown_group(group, known, f"the rates at grain {grain.value}")
        return stored_comparison(connection, metric, at, weeks, group, grain, now=now)


def release_comparisons(
    engine: Engine, *, grain: Grain, now: int, weeks: int = DEFAULT_WEEKS
) -> list[tuple[Release, list[ComparisonReport]]]:
    """Every rate metric, all runs, across every recorded release."""
    with reported(engine, "reading the rates"), engine.connect() as connection:
        return [
            (
                release,
                [
                    stored_comparison(
                        connection,
                        metric,
                        release.released_on,
                        weeks,
                        ALL_RUNS,
                        grain,
                        now=now,
                    )
                    for metric in RATE_METRICS
                ],
            )
            for release in markers.releases(connection)
        ]


def stored_comparison(
    connection: Connection,
    metric: Metric,
    at: date,
    weeks: int,
    group: Group,
    grain: Grain,
    *,
    now: int,
) -> ComparisonReport:
    """The comparison of the stored figures of the periods on both sides of `at`."""
    sides = comparison_periods(at, weeks, grain)
    figures = rates.rate_figures(connection, grain, metrics_read(metric), group, sides.before + sides.after)
    return comparison_report(
        metric,
        at,
        sides,
        figures,
        weeks=weeks,
        group=group,
        grain=grain,
        releases=markers.labels_on(connection, at),
        first_open=measure_marks.first_open(connection, grain, now=now),
    )
