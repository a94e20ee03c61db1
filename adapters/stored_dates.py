"""Our date columns as SQLite keeps them: text, in any form a hand may have written. SQLAlchemy reads a date
as the row is fetched, and a value that is no date ("2026-99-99") fails the whole statement with a message
that names neither the table nor the row; `unreadable` names them. The other engines refuse such a value when
it is written."""

from __future__ import annotations

from typing import Any

from sqlalchemy import (
    Column,
    Connection,
    Date,
    Engine,
    String,
    Table,
    func,
    inspect,
    or_,
    select,
    type_coerce,
)

from adapters.dialect.names import is_sqlite
from adapters.schema import ours

SHOWN = 3  # the rows named; a fault made by hand is seldom more than a few


def no_date(table: str, key: object, column: str) -> str:
    """How a row whose date is none is named: "tx_runrecord_release row #3 holds no date (YYYY-MM-DD) in
    released_on"."""
    return f"{table} row #{key} holds no date (YYYY-MM-DD) in {column}"


def failed_reading_a_value(error: BaseException) -> bool:
    """Whether the error was raised where SQLAlchemy turns a stored value into a Python one (its result
    processors), not by the code that asked for the rows."""
    trace = error.__traceback__
    while trace is not None:
        module = str(trace.tb_frame.f_globals.get("__name__", ""))
        if module.startswith("sqlalchemy.") and "processors" in module:
            return True
        trace = trace.tb_next
    return False


def unreadable(engine: Engine) -> list[str]:
    """The rows of our tables holding a date SQLAlchemy cannot read, each named by its key, its column and
    what it holds (at most SHOWN, then how many more); none on an engine that checks its dates itself."""
    if not is_sqlite(engine.dialect.name):
        return []
    read = Date().dialect_impl(engine.dialect).result_processor(engine.dialect, None)
    assert read is not None
    found: list[str] = []
    with engine.connect() as connection:
        present = set(inspect(connection).get_table_names())
        for table in ours.sorted_tables:
            if table.name in present:
                for column in table.c:
                    if isinstance(column.type, Date):
                        found += _no_dates(connection, table, column, read)
    more = len(found) - SHOWN
    return found[:SHOWN] + ([f"and {more:,} more"] if more > 0 else [])


def _no_dates(connection: Connection, table: Table, column: Column[Any], read: Any) -> list[str]:
    stored = type_coerce(column, String)
    # SQLite's date() with a modifier gives a real date in its canonical form back unchanged (without one, it
    # keeps "2026-02-30"), years before 1 aside: anything else is a candidate, kept where SQLAlchemy's own
    # reading fails on it.
    canonical = func.date(stored, "+0 days")
    odd = or_(canonical.is_(None), canonical != stored, stored < "0001-01-01")
    rows = connection.execute(select(*table.primary_key.columns, stored).where(odd))
    return [
        f"{no_date(table.name, ', '.join(map(str, row[:-1])), column.name)}: {row[-1]!r}"
        for row in rows
        if not _reads(read, row[-1])
    ]


def _reads(read: Any, value: object) -> bool:
    try:
        read(value)
    except (ValueError, TypeError):
        return False
    return True
