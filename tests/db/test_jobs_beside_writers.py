"""The nightly jobs beside TYPO3, the chat and nr-llm, which go on writing while the jobs read their rows."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from sqlalchemy import Engine, create_engine, event, text
from sqlalchemy.exc import DBAPIError

from adapters import schema
from core.time import DAY_S
from jobs.derive import derive_outcomes
from jobs.measure import measure_rates
from tests.db.test_measure_rates import NOW, OLD, WINDOW, edit, installation, talk

DAY = DAY_S
# A statement that writes what it reads into a table of runrecord's (MariaDB's INSERT IGNORE too).
READS_INTO_OURS = re.compile(r"INSERT (?:IGNORE )?INTO tx_runrecord_")
# How long a writer waits for a lock here before it gives up (MariaDB counts whole seconds).
LOCK_WAIT = {"mariadb": "SET SESSION innodb_lock_wait_timeout = 1", "postgresql": "SET lock_timeout = '1s'"}
# The installation's tables the jobs read into their own, each with a column a writer may set to itself.
UPSTREAM = {
    schema.agentrun.name: "crdate",
    schema.agentrun_event.name: "crdate",
    schema.conversation.name: "crdate",
    schema.message.name: "crdate",
    schema.sys_history.name: "tstamp",
}


@contextmanager
def _writer_beside(engine: Engine, dialect: str) -> Iterator[list[str]]:
    """While inside, after each statement of `engine` that reads a table of the installation into one of the
    job's own, another process's writer updates every row of those tables; what it could not do."""
    if dialect == "sqlite":
        pytest.skip("SQLite has one writer at a time: each transaction of a job holds the database's lock")
    writer = create_engine(engine.url)
    refused: list[str] = []

    def write_beside(_: Any, __: Any, statement: str, *args: Any) -> None:
        if not READS_INTO_OURS.match(statement) or not any(table in statement for table in UPSTREAM):
            return
        try:
            with writer.begin() as connection:
                connection.exec_driver_sql(LOCK_WAIT[dialect])
                for table, column in UPSTREAM.items():
                    connection.execute(text(f"UPDATE {table} SET {column} = {column}"))
        except DBAPIError as error:
            refused.append(f"{statement.split(' SELECT')[0]}: {error.orig}")

    event.listen(engine, "after_cursor_execute", write_beside)
    try:
        yield refused
    finally:
        event.remove(engine, "after_cursor_execute", write_beside)
        writer.dispose()


def _twice(engine: Engine, job: Callable[[], object]) -> None:
    """The job on the installation, then again after one more turn: once from nothing, once what changed."""
    job()
    with installation(engine, seed=2) as site:
        edit(site, NOW - 10 * DAY)
    job()


def test_measuring_makes_no_writer_of_runs_events_conversations_or_history_wait(
    installation_engine: Engine, dialect: str
) -> None:
    with installation(installation_engine) as site:
        talk(site, OLD, "Erledigt.")
        edit(site, OLD + DAY)

    with _writer_beside(installation_engine, dialect) as refused:
        _twice(installation_engine, lambda: measure_rates(installation_engine, now=NOW, window_s=WINDOW))

    assert refused == []


def test_deriving_makes_no_writer_of_runs_events_conversations_or_history_wait(
    installation_engine: Engine, dialect: str
) -> None:
    with installation(installation_engine) as site:
        edit(site, OLD)
        edit(site, OLD + DAY)

    with _writer_beside(installation_engine, dialect) as refused:
        _twice(installation_engine, lambda: derive_outcomes(installation_engine, now=NOW, window_s=WINDOW))

    assert refused == []
