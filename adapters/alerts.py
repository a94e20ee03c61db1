"""tx_runrecord_alert: the significant moves of a rate (core.alerts), written once per move, and their reads.

An alert is inserted with insert-or-ignore on its move (metric, grain, group, kind, date), so that a rerun or
two measurements at the same time write it once; the rows really inserted are returned, so that only those
are sent on. Closing one (acknowledging it) sets its status; nothing deletes an alert. No row names a run or
an editor.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, Date, select, update

from adapters import schema
from adapters.dialect import bulk
from adapters.dialect.days import day_of, stored_day
from adapters.errors import RunrecordError
from core.alerts import Alert, AlertKind, AlertStatus, StoredAlert
from core.groups import Group, GroupKind
from core.rates import Interval, Proportion

alert = schema.alert

MAX_LABEL = 255  # tx_runrecord_alert.label: the labels of a day's markers, joined

COLUMNS = (
    "metric",
    "grain",
    "group_kind",
    "group_value",
    "kind",
    "at_date",
    "label",
    "before_from",
    "before_to",
    "after_from",
    "after_to",
    "before_numerator",
    "before_denominator",
    "after_numerator",
    "after_denominator",
    "difference",
    "difference_low",
    "difference_high",
    "p_value",
    "adjusted_p_value",
    "created_at",
    "status",
    "closed_at",
)


def _values(found: Alert, now: int) -> tuple[Any, ...]:
    return (
        found.metric,
        found.grain,
        found.group.kind.value,
        found.group.value,
        found.kind.value,
        found.at,
        found.label[:MAX_LABEL],
        found.before_from,
        found.before_to,
        found.after_from,
        found.after_to,
        found.before.numerator,
        found.before.denominator,
        found.after.numerator,
        found.after.denominator,
        found.difference,
        found.interval.low,
        found.interval.high,
        found.p_value,
        found.adjusted_p_value,
        now,
        AlertStatus.OPEN.value,
        0,
    )


def save_alerts(connection: Connection, found: Sequence[Alert], *, now: int) -> list[StoredAlert]:
    """Insert the alerts whose move has none yet; returns the ones really inserted, as stored.

    In key order, so that two measurements at the same time take the unique key's locks in the same order.
    """
    rows = [_values(one, now) for one in sorted(found, key=lambda one: one.key)]
    uids = bulk.insert_rows(connection, alert, COLUMNS, rows, or_ignore=True, returning="uid")
    return alerts_by_uid(connection, [int(uid) for uid in uids])


class UnreadableAlertError(RunrecordError):
    """An alert row that runrecord did not write as it stands (a kind or status it does not know, a value
    missing): it is left as it is, never read as something else."""


@dataclass(frozen=True)
class ListedAlerts:
    """The alerts read, newest first, and the uids of the rows that cannot be read (left out)."""

    alerts: list[StoredAlert]
    unreadable: list[int]


def unreadable_line(uids: Sequence[int]) -> str:
    """One line naming the alert rows left out."""
    named = ", ".join(f"#{uid}" for uid in uids)
    return (
        f"tx_runrecord_alert {'row' if len(uids) == 1 else 'rows'} {named} cannot be read (a kind, status, "
        "date or figure runrecord does not write) and left out"
    )


def _read(row: Any) -> StoredAlert | None:
    """The row as an alert; None when it is not one runrecord wrote as it stands."""
    try:
        return _stored(row)
    except (TypeError, ValueError, ArithmeticError):
        return None


def _stored(row: Any) -> StoredAlert:
    return StoredAlert(
        uid=int(row.uid),
        alert=Alert(
            metric=str(row.metric),
            grain=str(row.grain),
            group=Group(GroupKind(str(row.group_kind)), str(row.group_value)),
            kind=AlertKind(str(row.kind)),
            at=day_of(row.at_date),
            label=str(row.label),
            before_from=day_of(row.before_from),
            before_to=day_of(row.before_to),
            after_from=day_of(row.after_from),
            after_to=day_of(row.after_to),
            before=Proportion(int(row.before_numerator), int(row.before_denominator)),
            after=Proportion(int(row.after_numerator), int(row.after_denominator)),
            difference=float(row.difference),
            interval=Interval(float(row.difference_low), float(row.difference_high)),
            p_value=float(row.p_value),
            adjusted_p_value=None if row.adjusted_p_value is None else float(row.adjusted_p_value),
        ),
        created_at=int(row.created_at),
        status=AlertStatus(str(row.status)),
        closed_at=int(row.closed_at),
    )


def _columns() -> list[Any]:
    """Every column of the table, its dates as stored (stored_day): a row `_read` cannot read is left out."""
    return [stored_day(column) if isinstance(column.type, Date) else column for column in alert.c]


def _newest_first() -> tuple[Any, ...]:
    return (alert.c.created_at.desc(), alert.c.uid.desc())


def _listed(connection: Connection, query: Any) -> ListedAlerts:
    read: list[StoredAlert] = []
    unreadable: list[int] = []
    for row in connection.execute(query):
        stored = _read(row)
        if stored is None:
            unreadable.append(int(row.uid))
        else:
            read.append(stored)
    return ListedAlerts(read, unreadable)


def alerts_by_uid(connection: Connection, uids: Sequence[int]) -> list[StoredAlert]:
    """The alerts of these uids, newest first; one of them that cannot be read is an UnreadableAlertError."""
    if not uids:
        return []
    query = select(*_columns()).where(alert.c.uid.in_(sorted(set(uids)))).order_by(*_newest_first())
    listed = _listed(connection, query)
    if listed.unreadable:
        raise UnreadableAlertError(unreadable_line(listed.unreadable))
    return listed.alerts


def listed_alerts(connection: Connection, *, closed_too: bool = False) -> ListedAlerts:
    """The open alerts (with `closed_too`, every alert), newest first, and the rows that cannot be read."""
    query = select(*_columns()).order_by(*_newest_first())
    if not closed_too:
        query = query.where(alert.c.status == AlertStatus.OPEN.value)
    return _listed(connection, query)


def close_alert(connection: Connection, uid: int, *, now: int) -> tuple[StoredAlert | None, bool]:
    """Close an open alert: the alert as stored afterwards (None: no alert of that uid), and whether this
    closed it (False: it was closed already)."""
    closed = connection.execute(
        update(alert)
        .where(alert.c.uid == uid, alert.c.status == AlertStatus.OPEN.value)
        .values(status=AlertStatus.CLOSED.value, closed_at=now)
    ).rowcount
    found = alerts_by_uid(connection, [uid])
    return (found[0] if found else None), closed > 0
