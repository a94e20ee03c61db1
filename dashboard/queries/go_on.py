"""What followed the stored "go on" messages, before and after a release marker: the Rates page's split beside
the go-on rate, shaped from the stored rates (adapters.rates) like the before/after panel.

Each path (core.go_on) is a metric of its own (core.counting.GO_ON_PATH_METRICS) whose denominator is every
stored "go on" sent while an approval waited, so the three shares of a side add up to all of them. Both sides
are core.comparison's, the same as `runrecord compare go_on_second_run --at DATE`; only all runs are shown.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from sqlalchemy import Engine

from adapters import measure_marks, schema
from adapters import rates as stored_rates
from adapters.database import reported
from adapters.measure_marks import rates_version
from core.comparison import ComparisonReport, comparison_report
from core.counting import GO_ON_PATH_METRICS
from core.go_on import GoOnPath
from core.groups import ALL_RUNS
from core.metrics import DEFINITIONS, STORED_SINCE, Metric
from core.periods import Grain, comparison_periods

# The metrics beside which the page shows the split: the go-on rate and the split's own.
GO_ON_METRICS: frozenset[str] = frozenset(
    {Metric.GO_ON_WHILE_WAITING.value, *(metric.value for metric in GO_ON_PATH_METRICS.values())}
)


@dataclass(frozen=True)
class PathSides:
    """One path of a stored "go on": its name and both sides of the marker."""

    path: GoOnPath
    label: str
    report: ComparisonReport


def go_on_split(
    engine: Engine, tables: frozenset[str], grain: str, released_on: date, weeks: int, *, now: int
) -> tuple[PathSides, ...] | None:
    """Each path's share of the stored "go on" messages before and from `released_on`, all runs; None when
    the last measurement on this database did not count the paths (none yet, or an older runrecord)."""
    if schema.measure_mark.name not in tables:
        return None
    period = Grain(grain)
    sides = comparison_periods(released_on, weeks, period)
    metrics = (*GO_ON_PATH_METRICS.values(), Metric.RUNS)
    with reported(engine, 'reading what followed the "go on" messages'), engine.connect() as connection:
        stored_since = min(STORED_SINCE[metric] for metric in GO_ON_PATH_METRICS.values())
        if rates_version(connection, period) < stored_since:
            return None
        figures = stored_rates.rate_figures(connection, period, metrics, ALL_RUNS, sides.before + sides.after)
        first_open = measure_marks.first_open(connection, period, now=now)
    return tuple(
        PathSides(
            path,
            DEFINITIONS[metric].short_label,
            comparison_report(
                metric,
                released_on,
                sides,
                figures,
                weeks=weeks,
                group=ALL_RUNS,
                grain=period,
                releases=(),
                first_open=first_open,
            ),
        )
        for path, metric in GO_ON_PATH_METRICS.items()
    )
