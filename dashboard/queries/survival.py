"""The Rates page's survival of AI text: `runrecord survival`, shaped for a chart.

The tallies are counted in the database (adapters.survival: a count per distinct time, never a list of
per-write times); the curves, the 95% band, the median and the log-rank test are core.survival_report's.
The chart is drawn from the curve read on an hourly grid, so that no point of it is one write's own time,
and a group with fewer than MIN_GROUP_RUNS runs gets no curve at all.

What `curves` returns, and the dashboard caches, is that chart as drawn (a SurvivalView): the hourly points,
the writes at risk at the marks, each curve's figures and the log-rank test. Not the curves themselves: a
curve of 1,000,000 runs has some 140,000 distinct times, and the cache would copy (pickle) all of them on
every render to draw 169 points.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd
from sqlalchemy import Engine

from adapters import schema, survival
from adapters.database import reported
from core.groups import ALL_RUNS, Group, GroupKind
from core.survival import LogRank
from core.survival_report import HOUR_S, SurvivalReport, survival_report
from core.survival_text import mark_text
from core.time import DAY_S

GRID_S = HOUR_S  # the chart's resolution: one point an hour
POINT_COLUMNS = ["curve", "days", "untouched", "low", "high", "at_risk"]


@dataclass(frozen=True)
class ShownCurve:
    """A curve's figures as the caption gives them."""

    label: str
    writes: int
    runs: int
    median: int | None  # seconds after the write; None: not reached within the window
    unknown: int
    undated: int


@dataclass(frozen=True)
class SurvivalView:
    """The survival chart as drawn: a few hundred values whatever the number of writes."""

    points: pd.DataFrame  # POINT_COLUMNS: each shown curve read every GRID_S up to the window's end
    at_risk: pd.DataFrame  # one row per shown curve: curve, then the writes at risk at each mark
    shown: tuple[ShownCurve, ...]
    too_few: tuple[str, ...]  # the groups too few to show, as the chart names them
    log_rank: LogRank | None  # with exactly two curves, both shown
    window_s: int


def configurations(engine: Engine, tables: frozenset[str]) -> list[str]:
    """The configurations of the derived runs; none before derive-outcomes has run."""
    if schema.run_outcome.name not in tables:
        return []
    with reported(engine, "reading the configurations"), engine.connect() as connection:
        return survival.configurations(connection)


def curves(
    engine: Engine, tables: frozenset[str], configurations: Sequence[str], *, window_s: int
) -> SurvivalView | None:
    """All writes (no configuration chosen), or the chosen configurations' curves and, for two, the
    log-rank test, as the chart draws them; None when no write has a derived outcome yet."""
    if schema.write_outcome.name not in tables or schema.run_outcome.name not in tables:
        return None
    groups = [Group(GroupKind.CONFIGURATION, name) for name in configurations] or [ALL_RUNS]
    with reported(engine, "reading the write outcomes"), engine.connect() as connection:
        if not survival.has_derived_writes(connection):
            return None
        counted = [survival.group_tallies(connection, group, window_s=window_s) for group in groups]
    return view(survival_report(counted, window_s=window_s))


def view(report: SurvivalReport) -> SurvivalView:
    """The report as the chart draws it: the hourly points, the writes at risk at the marks, each shown
    curve's figures, the groups too few to show and the log-rank test."""
    shown = tuple(
        ShownCurve(
            label=curve_label(found.group),
            writes=found.curve.writes,
            runs=found.runs,
            median=found.curve.median,
            unknown=found.unknown,
            undated=found.undated,
        )
        for found in report.curves
        if found.curve is not None
    )
    return SurvivalView(
        points=grid(report),
        at_risk=marks(report),
        shown=shown,
        too_few=tuple(curve_label(found.group) for found in report.curves if found.curve is None),
        log_rank=report.log_rank,
        window_s=report.window_s,
    )


def curve_label(group: Group) -> str:
    """A curve as the chart names it."""
    return "all writes" if group == ALL_RUNS else group.value


def grid(report: SurvivalReport) -> pd.DataFrame:
    """Each shown curve read every GRID_S up to the window's end: curve, days, untouched, low, high,
    at_risk."""
    rows = []
    for found in report.curves:
        if found.curve is None:
            continue
        for t in range(0, report.window_s + 1, GRID_S):
            band = found.curve.band_at(t)
            rows.append(
                {
                    "curve": curve_label(found.group),
                    "days": t / DAY_S,
                    "untouched": found.curve.survival_at(t),
                    "low": band.low,
                    "high": band.high,
                    "at_risk": found.curve.at_risk_at(t),
                }
            )
    return pd.DataFrame(rows, columns=POINT_COLUMNS)


def marks(report: SurvivalReport) -> pd.DataFrame:
    """One row per shown curve: the writes still at risk at each mark (the table under the chart)."""
    rows = []
    for found in report.curves:
        if found.curve is None:
            continue
        row: dict[str, object] = {"curve": curve_label(found.group)}
        for mark in report.marks:
            row[mark_text(mark)] = found.curve.at_risk_at(mark)
        rows.append(row)
    return pd.DataFrame(rows, columns=["curve", *(mark_text(mark) for mark in report.marks)])
