"""Aggregates whose spelling differs by dialect: a group's uids as one sorted JSON array text."""

from __future__ import annotations

from typing import Any

from sqlalchemy import ColumnElement, Text, aggregate_order_by, cast, func, literal

from adapters.dialect.names import POSTGRESQL, SQLITE, is_mariadb


def uid_array(dialect: str, uid: ColumnElement[Any]) -> ColumnElement[Any]:
    """The group's uids as a JSON array text, "[101,107]", in ascending order; "[]" is the caller's for none.

    SQLite before 3.44 takes no ORDER BY inside an aggregate: there the rows must come from a subquery ordered
    by the uid, whose order group_concat keeps (the caller's; `orders_inside` says which dialects need it).
    """
    joined: ColumnElement[Any]
    if dialect == POSTGRESQL:
        joined = aggregate_order_by(func.string_agg(cast(uid, Text), literal(",")), uid)
    elif dialect == SQLITE:
        joined = func.group_concat(uid, ",")
    elif is_mariadb(dialect):
        joined = aggregate_order_by(func.group_concat(uid), uid)  # MariaDB's default separator is ","
    else:
        raise NotImplementedError(f"no ordered aggregate for the {dialect} dialect")
    return literal("[") + joined + literal("]")


def orders_inside(dialect: str) -> bool:
    """Whether `uid_array` orders the uids itself (else its rows must arrive ordered)."""
    return dialect != SQLITE
