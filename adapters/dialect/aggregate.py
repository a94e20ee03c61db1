"""Aggregates whose spelling differs by dialect: a group's uids as one sorted list, and a JSON array."""

from __future__ import annotations

from typing import Any

from sqlalchemy import ColumnElement, Text, aggregate_order_by, and_, case, cast, func, literal

from adapters.dialect.names import POSTGRESQL, SQLITE, is_mariadb


def uid_list(dialect: str, uid: ColumnElement[Any]) -> ColumnElement[Any]:
    """The group's uids joined by commas, "101,107", in ascending order; NULL where the group has none.

    SQLite before 3.44 takes no ORDER BY inside an aggregate: there group_concat keeps the order in which the
    rows arrive, which the caller gives."""
    if dialect == POSTGRESQL:
        return aggregate_order_by(func.string_agg(cast(uid, Text), literal(",")), uid)
    if dialect == SQLITE:
        return func.group_concat(uid, ",")
    if is_mariadb(dialect):
        return aggregate_order_by(func.group_concat(uid), uid)  # MariaDB's default separator is ","
    raise NotImplementedError(f"no ordered aggregate for the {dialect} dialect")


def uid_array(first: ColumnElement[Any], rest: ColumnElement[Any]) -> ColumnElement[Any]:
    """A JSON array text of the uid `first` (none where NULL) and then the list `rest` (`uid_list`, none
    where NULL): "[97,101,107]", "[97]", "[101,107]" or "[]"."""
    head = func.coalesce(cast(first, Text), literal(""))
    comma = case((and_(first.is_not(None), rest.is_not(None)), literal(",")), else_=literal(""))
    return literal("[") + head + comma + func.coalesce(rest, literal("")) + literal("]")
