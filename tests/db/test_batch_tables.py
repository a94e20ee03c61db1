"""A job's batch tables (adapters.dialect.session) on SQLite, MariaDB and PostgreSQL: every batch starts from
empty tables, and the first after they were made sends nothing to empty them."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection, Engine, event, func, insert, select

from adapters.derive_scratch import batch_run, batch_write
from adapters.dialect import session as sqlsession

TABLES = (batch_run, batch_write)
RUN = {
    "run_uid": 7,
    "correlation_id": "c",
    "configuration_identifier": "x",
    "last_write_at": 1,
    "writes": 1,
    "derivable": 1,
    "gone": 0,
}


def _rows(connection: Connection) -> int:
    return sum(connection.execute(select(func.count()).select_from(table)).scalar_one() for table in TABLES)


def _emptying(connection: Connection) -> list[str]:
    """Empty the tables for a batch; the statements that sent."""
    sent: list[str] = []

    def record(*args: Any) -> None:
        sent.append(args[2])

    event.listen(connection, "before_cursor_execute", record)
    try:
        sqlsession.empty_temporary_tables(connection, TABLES)
    finally:
        event.remove(connection, "before_cursor_execute", record)
    return sent


def test_the_first_batch_after_the_tables_are_made_sends_nothing_to_empty_them(
    installation_engine: Engine,
) -> None:
    with installation_engine.connect() as connection:
        with connection.begin():
            sqlsession.create_temporary_tables(connection, TABLES)
        with connection.begin():
            first = _emptying(connection)
            connection.execute(insert(batch_run).values(RUN))
        with connection.begin():
            second = _emptying(connection)
            left = _rows(connection)
        with connection.begin():
            sqlsession.drop_temporary_tables(connection, TABLES)

    assert first == []
    assert second != []
    assert left == 0


def test_a_batch_tried_again_starts_from_empty_tables(installation_engine: Engine) -> None:
    # The first try of the first batch fails after it wrote: the tables are emptied for the second, also
    # where the transaction's end keeps what it wrote (a MariaDB table in memory).
    with installation_engine.connect() as connection:
        with connection.begin():
            sqlsession.create_temporary_tables(connection, TABLES)
        transaction = connection.begin()
        sqlsession.empty_temporary_tables(connection, TABLES)
        connection.execute(insert(batch_run).values(RUN))
        transaction.rollback()
        with connection.begin():
            if _rows(connection) == 0:  # the row as a table in memory keeps it
                connection.execute(insert(batch_run).values(RUN))
        with connection.begin():
            sqlsession.empty_temporary_tables(connection, TABLES)
            left = _rows(connection)
        with connection.begin():
            sqlsession.drop_temporary_tables(connection, TABLES)

    assert left == 0


def _analyzed(connection: Connection, statistics: sqlsession.BatchStatistics, rows: int) -> list[str]:
    """A batch that fills batch_run with `rows` runs and gives the planner its statistics, committed; the
    statements that took them."""
    sent: list[str] = []

    def record(*args: Any) -> None:
        if "ANALYZE" in args[2].upper():
            sent.append(args[2])

    with connection.begin():
        sqlsession.empty_temporary_tables(connection, TABLES)
        if rows:
            connection.execute(insert(batch_run), [{**RUN, "run_uid": uid} for uid in range(1, rows + 1)])
        event.listen(connection, "before_cursor_execute", record)
        try:
            statistics.take(connection, batch_run)
        finally:
            event.remove(connection, "before_cursor_execute", record)
    statistics.committed()
    return sent


def test_a_batch_table_sqlite_planned_with_few_rows_gets_statistics_again_once_a_later_batch_outgrows_them(
    installation_engine: Engine,
) -> None:
    statistics = sqlsession.BatchStatistics()
    with installation_engine.connect() as connection:
        with connection.begin():
            sqlsession.create_temporary_tables(connection, TABLES)
        # The first batch holds one run; the second too; the third many more, and a fourth fewer than twice
        # the third's.
        taken = [bool(_analyzed(connection, statistics, rows)) for rows in (1, 1, 150, 250)]
        with connection.begin():
            sqlsession.drop_temporary_tables(connection, TABLES)
        dialect = connection.dialect.name

    # PostgreSQL scales the count it stored by the table's pages; MariaDB takes no statistics of a batch
    # table (its join order is fixed where it matters).
    expected = {
        "sqlite": [True, False, True, False],
        "postgresql": [True, False, False, False],
    }.get(dialect, [False] * 4)
    assert taken == expected
