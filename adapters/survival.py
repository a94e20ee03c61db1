"""The survival of AI text, counted in the database from tx_runrecord_write_outcome and _run_outcome.

Per group, each distinct time (seconds after the write) with the writes changed then and the writes censored
then, so that no list of per-write times leaves the database; beside it the runs of the curve and the
writes left out. Which writes count and at what time is core.survival_report's rule: a write with a known
outcome; EDITED or DISCARDED at `first_change_after_s` when a human row dates it, ACCEPTED_UNCHANGED
censored at its run's window (`window_s`, the setting's when the row has none).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from sqlalchemy import ColumnElement, Connection, Integer, and_, case, func, literal, or_, select

from adapters import schema
from core.groups import ALL_RUNS, Group, GroupKind
from core.outcomes import CallOutcome
from core.survival import Tally
from core.survival_report import GroupTallies

write_outcome = schema.write_outcome
run_outcome = schema.run_outcome

CHANGED = (CallOutcome.EDITED.value, CallOutcome.DISCARDED.value)
KNOWN = (CallOutcome.ACCEPTED_UNCHANGED.value, *CHANGED)


@dataclass(frozen=True)
class _Expressions:
    dated: ColumnElement[bool]  # changed, and a human row dates it
    in_curve: ColumnElement[bool]
    undated: ColumnElement[bool]
    window: ColumnElement[int]


def _expressions(window_s: int) -> _Expressions:
    w, o = write_outcome.c, run_outcome.c
    changed = w.outcome.in_(CHANGED)
    dated = and_(changed, w.first_change_after_s.is_not(None))
    # A literal, not a bound parameter: PostgreSQL compares GROUP BY expressions with their parameters.
    window = func.coalesce(func.nullif(o.window_s, 0), literal(window_s, Integer, literal_execute=True))
    return _Expressions(
        dated=dated,
        in_curve=or_(w.outcome == CallOutcome.ACCEPTED_UNCHANGED.value, dated),
        undated=and_(changed, w.first_change_after_s.is_(None)),
        window=window,
    )


def configurations(connection: Connection) -> list[str]:
    """The configuration identifiers of the derived runs, sorted."""
    o = run_outcome.c
    query = select(o.configuration_identifier).distinct().order_by(o.configuration_identifier)
    return [str(value) for value in connection.execute(query).scalars()]


def derived_writes(connection: Connection) -> int:
    """How many write outcomes derive-outcomes has stored."""
    return int(connection.execute(select(func.count()).select_from(write_outcome)).scalar_one())


def group_tallies(connection: Connection, group: Group, *, window_s: int) -> GroupTallies:
    """The tallies of one group's curve (all runs, or one configuration) and what was left out."""
    if group.kind not in (GroupKind.ALL, GroupKind.CONFIGURATION):
        raise ValueError(f"survival is counted for all runs or a configuration, not {group.label}")
    found = _tallies(connection, window_s, None if group == ALL_RUNS else [group.value])
    return found.get(group.value, GroupTallies(group, (), 0, 0, 0, 0))


def _tallies(
    connection: Connection, window_s: int, values: Collection[str] | None
) -> dict[str, GroupTallies]:
    """By configuration (values given) or for all runs (None, under the key "")."""
    w, o = write_outcome.c, run_outcome.c
    e = _expressions(window_s)
    key = o.configuration_identifier if values is not None else literal("", literal_execute=True)
    joined = write_outcome.join(run_outcome, o.run_uid == w.run_uid)
    chosen = [] if values is None else [o.configuration_identifier.in_(sorted(values))]

    per_write = (
        select(
            key.label("value"),
            case((e.dated, w.first_change_after_s), else_=e.window).label("t"),
            case((e.dated, 1), else_=0).label("event"),
        )
        .select_from(joined)
        .where(e.in_curve, *chosen)
        .subquery()
    )
    tallied = select(per_write.c.value, per_write.c.t, func.sum(per_write.c.event), func.count()).group_by(
        per_write.c.value, per_write.c.t
    )
    tallies: dict[str, list[Tally]] = {}
    for value, t, events, writes in connection.execute(tallied):
        tallies.setdefault(str(value), []).append(Tally(int(t), int(events), int(writes) - int(events)))

    beside = (
        select(
            key.label("value"),
            func.count(func.distinct(case((e.in_curve, w.run_uid)))),
            func.sum(case((w.outcome.not_in(KNOWN), 1), else_=0)),
            func.sum(case((e.undated, 1), else_=0)),
            func.max(e.window),
        )
        .select_from(joined)
        .where(*chosen)
    )
    if values is not None:  # all runs are one row; PostgreSQL refuses a constant in GROUP BY
        beside = beside.group_by(key)
    kind = GroupKind.ALL if values is None else GroupKind.CONFIGURATION
    return {
        str(value): GroupTallies(
            group=Group(kind, str(value)),
            tallies=tuple(tallies.get(str(value), ())),
            runs=int(runs or 0),
            unknown=int(unknown or 0),
            undated=int(undated or 0),
            window_s=int(window or 0),
        )
        for value, runs, unknown, undated, window in connection.execute(beside)
    }
