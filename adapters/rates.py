"""tx_runrecord_rate: the rates measure-rates writes, and every read of them (compare, the Rates page).

The table is small whatever the number of runs: a row per metric, grain, period and group. It is written by
upsert on its key (metric, grain, period_start, group_kind, group_value), so that recomputing a period
replaces it; a row of a period written again that no longer has data is deleted: a period without data is
absent, never 0%. No row names a run or an editor.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

from sqlalchemy import ColumnElement, Connection, delete, func, or_, select, true

from adapters import schema
from adapters.dialect import bulk
from adapters.dialect.days import day_of
from core import rule_versions
from core.counting import Count, Key
from core.groups import ALL_RUNS, Group, GroupKind
from core.metrics import Metric
from core.periods import Grain

rate = schema.rate

RATE_KEY = ("metric", "grain", "period_start", "group_kind", "group_value")
# Stale rate rows are deleted by uid in chunks of this many (bound parameters).
DELETE_CHUNK = 1_000


@dataclass(frozen=True)
class RateRow:
    """A stored rate row, as the Rates page and its CSV read it."""

    metric: str
    grain: str
    period_start: date
    group_kind: str
    group_value: str
    numerator: int
    denominator: int
    excluded: int
    rule_versions: frozenset[str] = frozenset()  # of the derived runs it counts (core.rule_versions)


# --- writes ----------------------------------------------------------------------------------------------


def _in_periods(open_from: date | None, periods: Collection[date]) -> ColumnElement[bool]:
    """Rows of the open periods (from `open_from` on) and of the listed ones; None and no list: all."""
    r = rate.c
    conditions: list[ColumnElement[bool]] = []
    if open_from is not None:
        conditions.append(r.period_start >= open_from)
    if periods:
        conditions.append(r.period_start.in_(sorted(periods)))
    return or_(*conditions) if conditions else true()


def save_rates(
    connection: Connection,
    grain: Grain,
    counted: Sequence[tuple[Key, Count]],
    *,
    now: int,
    open_from: date | None,
    periods: Collection[date],
) -> int:
    """Write the counted rows of the periods written (the open ones from `open_from`, and `periods`): upsert
    each, delete a stored row of those periods that was not counted. Returns the rows deleted."""
    rows = [
        {
            "metric": metric.value,
            "grain": grain.value,
            "period_start": period,
            "group_kind": group.kind.value,
            "group_value": group.value,
            "numerator": count.numerator,
            "denominator": count.denominator,
            "excluded": count.excluded,
            "rule_versions": rule_versions.stored(count.rule_versions),
            "computed_at": now,
        }
        for (metric, period, group), count in counted
    ]
    keys = {(row["metric"], row["period_start"], row["group_kind"], row["group_value"]) for row in rows}
    r = rate.c
    stored = select(r.uid, r.metric, r.period_start, r.group_kind, r.group_value).where(
        r.grain == grain.value, _in_periods(open_from, periods)
    )
    stale = [
        int(row.uid)
        for row in connection.execute(stored)
        if (row.metric, day_of(row.period_start), row.group_kind, row.group_value) not in keys
    ]
    for start in range(0, len(stale), DELETE_CHUNK):
        connection.execute(delete(rate).where(r.uid.in_(stale[start : start + DELETE_CHUNK])))
    if rows:
        connection.execute(bulk.upsert(connection.dialect.name, rate, RATE_KEY), rows)
    return len(stale)


# --- reads -----------------------------------------------------------------------------------------------


def stored_periods(connection: Connection, grain: Grain) -> set[date]:
    """The periods the table holds rows of at this grain."""
    r = rate.c
    query = select(r.period_start).where(r.grain == grain.value).distinct()
    return {day_of(value) for value in connection.execute(query).scalars()}


def periods_with(connection: Connection, grain: Grain, metric: Metric, *, before: date) -> set[date]:
    """The periods before `before` that hold a row of the metric, at this grain."""
    r = rate.c
    query = (
        select(r.period_start)
        .where(r.grain == grain.value, r.metric == metric.value, r.period_start < before)
        .distinct()
    )
    return {day_of(value) for value in connection.execute(query).scalars()}


def measured_grains(connection: Connection) -> set[str]:
    """The grains the table holds."""
    return {str(grain) for grain in connection.execute(select(rate.c.grain).distinct()).scalars()}


def group_values(connection: Connection, grain: Grain, group_kind: str) -> list[str]:
    """The values of a group kind the rates hold at a grain."""
    r = rate.c
    query = (
        select(r.group_value)
        .where(r.grain == grain.value, r.group_kind == group_kind)
        .distinct()
        .order_by(r.group_value)
    )
    return [str(value) for value in connection.execute(query).scalars()]


def first_period(connection: Connection, grain: Grain) -> date | None:
    """The first period the rates hold at a grain; None before any is measured."""
    r = rate.c
    found = connection.execute(select(func.min(r.period_start)).where(r.grain == grain.value)).scalar()
    return None if found is None else day_of(found)


def rate_figures(
    connection: Connection,
    grain: Grain,
    metrics: Iterable[Metric],
    group: Group,
    periods: Iterable[date],
) -> dict[tuple[str, date], Count]:
    """The stored figures of the metrics for one group in the listed periods, by metric name and period."""
    chosen = sorted(set(periods))
    if not chosen:
        return {}
    r = rate.c
    query = select(r.metric, r.period_start, r.numerator, r.denominator, r.excluded, r.rule_versions).where(
        r.grain == grain.value,
        r.metric.in_([metric.value for metric in metrics]),
        r.group_kind == group.kind.value,
        r.group_value == group.value,
        r.period_start.in_(chosen),
    )
    return {(str(row.metric), day_of(row.period_start)): _count(row) for row in connection.execute(query)}


def figures_by_group(
    connection: Connection, grain: Grain, metrics: Iterable[Metric], periods: Iterable[date]
) -> dict[Group, dict[tuple[str, date], Count]]:
    """The stored figures of the metrics in the listed periods for every group that has some, by group, then
    by metric name and period (as rate_figures gives one group's)."""
    chosen = sorted(set(periods))
    if not chosen:
        return {}
    r = rate.c
    query = select(
        r.group_kind,
        r.group_value,
        r.metric,
        r.period_start,
        r.numerator,
        r.denominator,
        r.excluded,
        r.rule_versions,
    ).where(
        r.grain == grain.value,
        r.metric.in_([metric.value for metric in metrics]),
        r.group_kind.in_([kind.value for kind in GroupKind]),
        r.period_start.in_(chosen),
    )
    found: dict[Group, dict[tuple[str, date], Count]] = {}
    for row in connection.execute(query):
        group = Group(GroupKind(str(row.group_kind)), str(row.group_value))
        found.setdefault(group, {})[(str(row.metric), day_of(row.period_start))] = _count(row)
    return found


def _count(row: Any) -> Count:
    versions = rule_versions.read(row.rule_versions)
    return Count(int(row.numerator), int(row.denominator), int(row.excluded), versions)


def stored_total(connection: Connection, grain: Grain, metric: Metric) -> tuple[Count, date | None]:
    """A metric's stored rows of all runs at a grain, every period summed (the rate table is small), and
    the first period that holds one (None: none does)."""
    r = rate.c
    query = select(
        func.sum(r.numerator), func.sum(r.denominator), func.sum(r.excluded), func.min(r.period_start)
    ).where(r.grain == grain.value, r.metric == metric.value, r.group_kind == ALL_RUNS.kind.value)
    numerator, denominator, excluded, first = connection.execute(query).one()
    figures = Count(int(numerator or 0), int(denominator or 0), int(excluded or 0))
    return figures, None if first is None else day_of(first)


def _row(row: Any) -> RateRow:
    return RateRow(
        metric=str(row.metric),
        grain=str(row.grain),
        period_start=day_of(row.period_start),
        group_kind=str(row.group_kind),
        group_value=str(row.group_value),
        numerator=int(row.numerator),
        denominator=int(row.denominator),
        excluded=int(row.excluded),
        rule_versions=rule_versions.read(row.rule_versions),
    )


_COLUMNS = (
    rate.c.metric,
    rate.c.grain,
    rate.c.period_start,
    rate.c.group_kind,
    rate.c.group_value,
    rate.c.numerator,
    rate.c.denominator,
    rate.c.excluded,
    rate.c.rule_versions,
)


def rate_rows(connection: Connection, metrics: Iterable[str], grain: str, group_kind: str) -> list[RateRow]:
    """The stored rows of the metrics at one grain and group kind, by metric, period and group value."""
    r = rate.c
    query = (
        select(*_COLUMNS)
        .where(r.metric.in_(list(metrics)), r.grain == grain, r.group_kind == group_kind)
        .order_by(r.metric, r.period_start, r.group_value)
    )
    return [_row(row) for row in connection.execute(query)]


def counted_periods(connection: Connection, metric: Metric, grain: str) -> list[tuple[date, int]]:
    """A count's periods that hold some (all runs), oldest first: period start and numerator."""
    r = rate.c
    query = (
        select(r.period_start, r.numerator)
        .where(
            r.metric == metric.value,
            r.grain == grain,
            r.group_kind == GroupKind.ALL.value,
            r.group_value == ALL_RUNS.value,
            r.numerator > 0,
        )
        .order_by(r.period_start)
    )
    return [(day_of(row.period_start), int(row.numerator)) for row in connection.execute(query)]


def every_rate(connection: Connection) -> list[RateRow]:
    """Every stored row, by metric, grain, group kind, group value and period."""
    r = rate.c
    query = select(*_COLUMNS).order_by(r.metric, r.grain, r.group_kind, r.group_value, r.period_start)
    return [_row(row) for row in connection.execute(query)]
