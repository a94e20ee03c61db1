"""Many rows in one statement, on every dialect.

* insert-or-ignore: SQLite `INSERT … ON CONFLICT DO NOTHING`, PostgreSQL `ON CONFLICT DO NOTHING`, MariaDB
  `INSERT IGNORE`; on all three a `RETURNING` clause returns only the rows that were really inserted.
* upsert: a row whose unique key is taken gets the new values.
* many rows in as few statements and round trips as the driver allows (`insert_rows`, `insert_many`).
* rows written with their uids: the uid sequences moved past them (`after_explicit_uids`).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from typing import Any

from sqlalchemy import Connection, Select, Table, bindparam, case, func, insert, text, true
from sqlalchemy.dialects import mysql, sqlite
from sqlalchemy.dialects import postgresql as pg
from sqlalchemy.sql.dml import Insert

from adapters.dialect.names import POSTGRESQL, SQLITE, is_mariadb


def insert_or_ignore(dialect: str, table: Table) -> Insert:
    """An INSERT that silently skips a row whose unique key is taken, on every supported dialect."""
    if dialect == SQLITE:
        return sqlite.insert(table).on_conflict_do_nothing()
    if dialect == POSTGRESQL:
        return pg.insert(table).on_conflict_do_nothing()
    if is_mariadb(dialect):
        return insert(table).prefix_with("IGNORE")
    raise NotImplementedError(f"no insert-or-ignore for the {dialect} dialect")


def insert_or_ignore_select(dialect: str, table: Table, columns: Sequence[str], query: Select[Any]) -> Insert:
    """`INSERT … SELECT` that skips a row whose unique key is taken (insert_or_ignore).

    SQLite reads `ON CONFLICT` right after a join as the join's ON: its documented way out is a WHERE clause
    on the SELECT, so one that is always true is added there."""
    if dialect == SQLITE:
        query = query.where(true())
    return insert_or_ignore(dialect, table).from_select(list(columns), query)


def upsert_adding(
    dialect: str,
    table: Table,
    keys: Sequence[str],
    query: Select[*tuple[Any, ...]],
    *,
    added: Sequence[str],
    highest: Sequence[str] = (),
) -> Insert:
    """`INSERT … SELECT` (columns: keys, added, highest) that, for a row whose key `keys` is taken, adds the
    `added` columns to the stored ones and keeps the larger of the `highest` ones: counts kept up to date by
    many transactions without reading them first. The query must give each key once."""
    columns = [*keys, *added, *highest]
    if dialect in (SQLITE, POSTGRESQL):
        statement = (sqlite.insert if dialect == SQLITE else pg.insert)(table).from_select(
            columns, query.where(true()) if dialect == SQLITE else query
        )
        new = statement.excluded
        values: dict[str, Any] = {name: table.c[name] + new[name] for name in added}
        larger = {name: case((new[name] > table.c[name], new[name]), else_=table.c[name]) for name in highest}
        values |= larger
        return statement.on_conflict_do_update(index_elements=list(keys), set_=values)
    if is_mariadb(dialect):
        upsert = mysql.insert(table).from_select(columns, query)
        inserted = upsert.inserted
        values = {name: table.c[name] + inserted[name] for name in added}
        values |= {name: func.greatest(table.c[name], inserted[name]) for name in highest}
        return upsert.on_duplicate_key_update(values)
    raise NotImplementedError(f"no upsert for the {dialect} dialect")


def insert_many(connection: Connection, statement: Insert, rows: list[dict[str, Any]]) -> None:
    """Execute an INSERT for many rows through the driver's executemany, with plain tuples.

    The same statement SQLAlchemy would run, compiled once per call; what is saved is SQLAlchemy's
    processing of every parameter of every row, which costs more than the insert itself on SQLite.
    """
    if not rows:
        return
    names = list(rows[0])
    compiled = statement.values({name: bindparam(name) for name in names}).compile(connection)
    order = compiled.positiontup
    if order is None:
        connection.execute(statement, rows)  # a driver with named parameters: no gain to be had
        return
    connection.exec_driver_sql(compiled.string, [tuple(row[name] for name in order) for row in rows])


def upsert(dialect: str, table: Table, keys: tuple[str, ...]) -> Insert:
    """An INSERT that replaces every other column of a row whose unique key `keys` is taken.

    SQLite and PostgreSQL `ON CONFLICT (keys) DO UPDATE`, MariaDB `ON DUPLICATE KEY UPDATE` (which takes any
    unique key of the table: the table must have no other than `keys` and its primary key).
    """
    columns = [column.name for column in table.columns if column.name not in keys and not column.primary_key]
    if dialect in (SQLITE, POSTGRESQL):
        statement = (sqlite.insert if dialect == SQLITE else pg.insert)(table)
        return statement.on_conflict_do_update(
            index_elements=list(keys), set_={name: statement.excluded[name] for name in columns}
        )
    if is_mariadb(dialect):
        from sqlalchemy.dialects import mysql

        statement_mysql = mysql.insert(table)
        return statement_mysql.on_duplicate_key_update(
            {name: statement_mysql.inserted[name] for name in columns}
        )
    raise NotImplementedError(f"no upsert for the {dialect} dialect")


def after_explicit_uids(connection: Connection, tables: Iterable[Table]) -> None:
    """Move each table's uid sequence past the uids that were inserted explicitly.

    PostgreSQL's serial column would otherwise hand out a uid already taken; SQLite and MariaDB go on after
    the highest uid by themselves.
    """
    if connection.dialect.name != POSTGRESQL:
        return
    for table in tables:
        # Identifiers from our own schema, never from data.
        connection.execute(
            text(
                f"SELECT setval(pg_get_serial_sequence('{table.name}', 'uid'), "
                f"GREATEST((SELECT MAX(uid) FROM {table.name}), 1))"
            )
        )


def placeholder(dialect: str) -> str:
    """The positional parameter marker the driver takes in a statement text."""
    return "?" if dialect == SQLITE else "%s"


def insert_rows(
    connection: Connection,
    table: Table,
    columns: Sequence[str],
    rows: Sequence[Sequence[Any]],
    *,
    or_ignore: bool = False,
    returning: str | None = None,
) -> list[Any]:
    """Insert rows (tuples in `columns` order) in as few statements and round trips as the driver allows.

    With `or_ignore` a row whose unique key is taken is skipped (`insert_or_ignore`). With `returning`,
    that column of the rows really inserted is returned (never of a skipped row); otherwise [].

    * PostgreSQL: the rows COPYed into a temporary table of those columns, then one `INSERT … SELECT` from
      it, where a taken key is skipped and the inserted rows returned: COPY only adds rows, the INSERT keeps
      insert-or-ignore. 2.5 s against 3.9 s for 191,525 write rows as one `INSERT … SELECT * FROM
      unnest(:column1, …)` of array parameters (measured); executemany and multi-row VALUES, which psycopg
      sends one message a row or parses one parameter at a time, are slower still.
    * SQLite and MariaDB without `returning`: the driver's executemany of plain tuples (one C loop in
      sqlite3; PyMySQL rewrites it into multi-row INSERTs).
    * SQLite and MariaDB with `returning`: multi-row `INSERT … VALUES (…), (…) RETURNING`, as many rows a
      statement as the driver's parameter limit allows.
    """
    if not rows:
        return []
    dialect = connection.dialect.name
    if dialect == POSTGRESQL:
        return _insert_copied(connection, table, columns, rows, or_ignore=or_ignore, returning=returning)
    if returning is None:
        text = _insert_text(dialect, connection, table, columns, 1, or_ignore=or_ignore, returning=None)
        connection.exec_driver_sql(text, [tuple(row) for row in rows])
        return []
    per_statement = max(1, min(_MULTIROW_ROWS, _parameter_limit(connection) // len(columns)))
    inserted: list[Any] = []
    for start in range(0, len(rows), per_statement):
        chunk = rows[start : start + per_statement]
        text = _insert_text(
            dialect, connection, table, columns, len(chunk), or_ignore=or_ignore, returning=returning
        )
        values = tuple(value for row in chunk for value in row)
        inserted.extend(connection.exec_driver_sql(text, values).scalars())
    return inserted


# Rows per multi-row INSERT … RETURNING: large enough that a batch takes a statement or two.
_MULTIROW_ROWS = 1_000
# SQLite before 3.32 takes at most 999 parameters a statement (sqlite3 can tell the real limit from 3.11 on).
_SQLITE_PARAMETERS = 999
_SERVER_PARAMETERS = 30_000  # MariaDB has no parameter limit (PyMySQL interpolates); this bounds the text


def _parameter_limit(connection: Connection) -> int:
    if connection.dialect.name != SQLITE:
        return _SERVER_PARAMETERS
    raw = connection.connection.driver_connection
    getlimit = getattr(raw, "getlimit", None)
    if getlimit is None:
        return _SQLITE_PARAMETERS
    return int(getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER))


def _insert_text(
    dialect: str,
    connection: Connection,
    table: Table,
    columns: Sequence[str],
    count: int,
    *,
    or_ignore: bool,
    returning: str | None,
) -> str:
    """A positional INSERT of `count` rows; the names only from our own Table, quoted by the dialect."""
    quote = connection.dialect.identifier_preparer.quote
    mark = placeholder(dialect)
    group = "(" + ", ".join([mark] * len(columns)) + ")"
    # As insert_or_ignore: SQLite skips only a row whose unique key is taken (not OR IGNORE, which would
    # also skip a row breaking NOT NULL), MariaDB's INSERT IGNORE.
    verb = "INSERT IGNORE" if or_ignore and is_mariadb(dialect) else "INSERT"
    conflict = " ON CONFLICT DO NOTHING" if or_ignore and dialect == SQLITE else ""
    if or_ignore and not (dialect == SQLITE or is_mariadb(dialect)):
        raise NotImplementedError(f"no insert-or-ignore for the {dialect} dialect")
    text = (
        f"{verb} INTO {quote(table.name)} ({', '.join(quote(name) for name in columns)}) "
        f"VALUES {', '.join([group] * count)}{conflict}"
    )
    return text if returning is None else f"{text} RETURNING {quote(returning)}"


def _insert_copied(
    connection: Connection,
    table: Table,
    columns: Sequence[str],
    rows: Sequence[Sequence[Any]],
    *,
    or_ignore: bool,
    returning: str | None,
) -> list[Any]:
    quote = connection.dialect.identifier_preparer.quote
    names = ", ".join(quote(name) for name in columns)
    # Names only from our own Table; the temporary table lives in this transaction only.
    target = quote(table.name)
    staged = f"pg_temp.{quote(table.name + '_new')}"
    connection.exec_driver_sql(
        f"CREATE TEMPORARY TABLE {staged} ON COMMIT DROP AS SELECT {names} FROM {target} WITH NO DATA"
    )
    driver = connection.connection.driver_connection
    assert driver is not None  # a connection in use has its driver's connection
    cursor = driver.cursor()
    with cursor.copy(f"COPY {staged} ({names}) FROM STDIN") as copy:
        for row in rows:
            copy.write_row(row)
    text = f"INSERT INTO {target} ({names}) SELECT {names} FROM {staged}"
    text += " ON CONFLICT DO NOTHING" if or_ignore else ""
    text += f" RETURNING {quote(returning)}" if returning is not None else ""
    result = connection.exec_driver_sql(text)
    inserted = list(result.scalars()) if returning is not None else []
    connection.exec_driver_sql(f"DROP TABLE {staged}")
    return inserted
