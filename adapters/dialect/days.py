"""The UTC day and the Monday of the ISO week of a unix time, as a date, in SQL (core.periods.period_start).

The arithmetic is the same on every dialect — the day number is the unix time divided by 86,400, and day 0
(1970-01-01) was a Thursday — only turning a day number into a date differs.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from sqlalchemy import ColumnElement, Date, Integer, String, func, literal_column, type_coerce

from adapters.dialect.names import POSTGRESQL, SQLITE, is_mariadb
from core.time import DAY_S

_THURSDAY = 3  # weekday() of 1970-01-01, Monday = 0
_TO_DAYS_EPOCH = 719_528  # MariaDB's TO_DAYS('1970-01-01')


def day_number(unix: ColumnElement[Any], *, week: bool) -> ColumnElement[Any]:
    """Days since 1970-01-01 of the unix time's day, or of its week's Monday (a unix time of at least 0)."""
    day = type_coerce(unix, Integer) // DAY_S
    if not week:
        return day
    return day - (day + _THURSDAY) % 7


def date_of(dialect: str, unix: ColumnElement[Any], *, week: bool) -> ColumnElement[Any]:
    """The date of the unix time's UTC day, or of the Monday of its ISO week."""
    number = day_number(unix, week=week)
    if dialect == SQLITE:
        return func.date(number * DAY_S, "unixepoch", type_=Date)
    if dialect == POSTGRESQL:
        return type_coerce(literal_column("DATE '1970-01-01'") + number, Date)
    if is_mariadb(dialect):
        return func.from_days(number + _TO_DAYS_EPOCH, type_=Date)
    raise NotImplementedError(f"no dates for the {dialect} dialect")


def stored_day(column: ColumnElement[Any]) -> ColumnElement[Any]:
    """A Date column read as the driver hands it over, for `day_of` to read: SQLAlchemy's own reading of a
    SQLite date raises while the row is fetched, before a reader could name the row ("2026-99-99")."""
    return type_coerce(column, String).label(column.key)


def day_of(value: object) -> date:
    """A Date column as the driver returns it (SQLite may hand back text)."""
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    return date.fromisoformat(str(value))
