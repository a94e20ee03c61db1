"""A table of ours dropped by hand while our tables stay at the newest revision: init-db creates it again and
makes the rest agree with it without losing an outcome that is still there (adapters.table_repair). On SQLite,
MariaDB and PostgreSQL."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest
from click.testing import Result
from sqlalchemy import Engine, MetaData, Table, delete, func, inspect, select, text
from sqlalchemy.schema import DropTable

from adapters import schema
from adapters.database import make_engine
from adapters.schema import VERSION_TABLE
from adapters.table_repair import EVENT_READING, MEASURED, SURVIVAL
from core.periods import Grain
from core.time import DAY_S
from data.generate import generate
from jobs.derive import derive_outcomes
from jobs.measure import measure_rates
from jobs.migrations import HEAD
from jobs.schema_setup import init_installation
from tests.db.conftest import on_sqlite_alone

NOW = int(datetime(2026, 12, 1, tzinfo=UTC).timestamp())
WINDOW = 7 * DAY_S
GRAINS = (Grain.WEEK, Grain.DAY)


@pytest.fixture
def counted(empty_db_url: str) -> Engine:
    """A generated installation, derived and measured."""
    now = datetime.fromtimestamp(NOW, UTC)
    generate(empty_db_url, create_tables=init_installation, conversations=20, seed=4, now=now)
    engine = make_engine(empty_db_url)
    derive_outcomes(engine, now=NOW, window_s=WINDOW)
    measure_rates(engine, now=NOW, window_s=WINDOW, grains=GRAINS)
    return engine


def _rows(engine: Engine, table: Table, *skipped: str) -> list[tuple[Any, ...]]:
    """The table's rows without its uid and the columns that say when they were written."""
    columns = [c for c in table.c if c.name not in {"uid", *skipped}]
    with engine.connect() as connection:
        return sorted(tuple(row) for row in connection.execute(select(*columns)))


def _figures(engine: Engine) -> dict[str, list[tuple[Any, ...]]]:
    return {
        "rates": _rows(engine, schema.rate, "computed_at"),
        "runs": _rows(engine, schema.run_outcome, "derived_at"),
        "writes": _rows(engine, schema.write_outcome, "derived_at"),
        "survival": _rows(engine, schema.survival_tally),
        "survival groups": _rows(engine, schema.survival_group),
        "the installation's outcomes": _rows(engine, schema.call_outcome, "crdate", "tstamp"),
    }


def _drop(engine: Engine, table: Table) -> None:
    with engine.begin() as connection:
        connection.execute(DropTable(Table(table.name, MetaData())))


def _dropped_and_created_again(
    engine: Engine, url: str, run_cli: Callable[..., Result], table: Table, *options: str
) -> str:
    """`table` dropped, then init-db: what it printed, once it said it created the table again."""
    _drop(engine, table)
    result = run_cli("init-db", "--db", url, *options)
    assert result.exit_code == 0, result.stderr
    assert f"created again, empty (they were missing): {table.name}" in result.stdout
    return str(result.stdout)


def _trim_history(engine: Engine) -> None:
    """The older half of sys_history gone, as the installation's retention trims it."""
    h = schema.sys_history.c
    with engine.begin() as connection:
        middle = connection.execute(select(func.max(h.uid) / 2)).scalar_one()
        connection.execute(delete(schema.sys_history).where(h.uid < middle))


def _derive_and_measure(engine: Engine) -> int:
    """Both jobs as the next night runs them: the runs derived."""
    derived = derive_outcomes(engine, now=NOW, window_s=WINDOW).runs_derived
    measure_rates(engine, now=NOW, window_s=WINDOW, grains=GRAINS)
    return derived


def test_a_dropped_table_of_measure_rates_is_created_again_and_its_next_run_counts_the_same_rates(
    counted: Engine, empty_db_url: str, run_cli: Callable[..., Result]
) -> None:
    before = _figures(counted)
    for table in MEASURED:  # each in turn, on one installation
        printed = _dropped_and_created_again(counted, empty_db_url, run_cli, table)
        derived = _derive_and_measure(counted)

        assert "measure-rates counts every conversation and period again" in printed
        assert "derive-outcomes" not in printed
        assert derived == 0 and _figures(counted) == before, table.name
    counted.dispose()


def test_a_dropped_table_of_the_events_read_has_them_read_again_and_no_outcome_derived_again(
    counted: Engine, empty_db_url: str, run_cli: Callable[..., Result]
) -> None:
    """With the history trimmed since: an outcome derived again would come out otherwise."""
    before = _figures(counted)
    _trim_history(counted)
    for table in EVENT_READING:  # each in turn, on one installation
        printed = _dropped_and_created_again(counted, empty_db_url, run_cli, table)
        derived = _derive_and_measure(counted)

        assert (
            "derive-outcomes reads every tool_write event again on its next run; the outcomes stay" in printed
        )
        assert derived == 0 and _figures(counted) == before, table.name
    counted.dispose()


def test_a_dropped_survival_table_is_counted_again_and_a_repair_stopped_before_its_count_is_finished_next(
    counted: Engine, empty_db_url: str, run_cli: Callable[..., Result]
) -> None:
    before = _figures(counted)
    assert before["survival"] and before["survival groups"]
    for table in SURVIVAL:  # each in turn, on one installation
        printed = _dropped_and_created_again(counted, empty_db_url, run_cli, table)

        assert "the survival counts were counted again from the write outcomes" in printed
        assert "again on its next run" not in printed
        assert _figures(counted) == before, table.name
    # A repair stopped after its CREATE (which commits on MariaDB) leaves both survival tables emptied.
    with counted.begin() as connection:
        for table in SURVIVAL:
            connection.execute(delete(table))

    mended = run_cli("init-db", "--db", empty_db_url)
    again = run_cli("init-db", "--db", empty_db_url)

    assert "the survival counts were counted again from the write outcomes" in mended.stdout
    assert _figures(counted) == before
    assert "counted again" not in again.stdout
    counted.dispose()


def test_a_dropped_table_of_outcomes_is_refused_in_one_line_and_nothing_changes(
    counted: Engine, empty_db_url: str, run_cli: Callable[..., Result]
) -> None:
    before = {name: _rows(counted, table) for name, table in schema.ours.tables.items()}
    _drop(counted, schema.write_outcome)
    del before[schema.write_outcome.name]

    result = run_cli("init-db", "--db", empty_db_url)

    assert result.exit_code != 0 and "Traceback" not in result.output + result.stderr
    assert len(result.stderr.splitlines()) == 1, result.stderr
    assert "our table tx_runrecord_write_outcome is missing" in result.stderr
    assert "runrecord init-db --derive-again" in result.stderr
    assert schema.write_outcome.name not in inspect(counted).get_table_names()
    assert {name: _rows(counted, schema.ours.tables[name]) for name in before} == before
    counted.dispose()


def test_with_derive_again_a_dropped_table_of_outcomes_is_created_and_every_run_derived_again_alike(
    counted: Engine, empty_db_url: str, run_cli: Callable[..., Result]
) -> None:
    """With sys_history as it was: derived again, every outcome and figure comes out the same."""
    before = _figures(counted)
    printed = _dropped_and_created_again(counted, empty_db_url, run_cli, schema.run_outcome, "--derive-again")
    derived = _derive_and_measure(counted)

    assert "derive-outcomes derives every finished run again on its next run" in printed
    assert "measure-rates counts every conversation and period again" in printed
    assert derived == len(before["runs"]) and _figures(counted) == before
    counted.dispose()


def test_a_dropped_table_that_holds_no_count_is_created_again_and_nothing_is_counted_again(
    counted: Engine, empty_db_url: str, run_cli: Callable[..., Result]
) -> None:
    before = _figures(counted)
    printed = _dropped_and_created_again(counted, empty_db_url, run_cli, schema.lease)
    again = run_cli("init-db", "--db", empty_db_url)

    assert "again" not in printed.replace("created again", "")
    assert _derive_and_measure(counted) == 0 and _figures(counted) == before
    assert "created again" not in again.stdout
    counted.dispose()


NOW_OPTION = ("--now", "2026-12-01T00:00:00")


def _refused_naming_the_dropped_table(
    counted: Engine, url: str, run_cli: Callable[..., Result], command: tuple[str, ...]
) -> None:
    _drop(counted, schema.rate)
    # The job log's row of the failed run aside, nothing of ours may change.
    kept = [table for table in schema.ours.sorted_tables if table not in (schema.rate, schema.job_run)]
    before = {table.name: _rows(counted, table) for table in kept}

    result = run_cli(*command, "--db", url)

    assert result.exit_code == 1 and "Traceback" not in result.output + result.stderr
    assert len(result.stderr.splitlines()) == 1, result.stderr
    assert "our table tx_runrecord_rate is missing" in result.stderr
    assert "run `runrecord init-db`" in result.stderr
    assert {table.name: _rows(counted, table) for table in kept} == before
    counted.dispose()


def test_measure_rates_with_one_of_our_tables_dropped_refuses_in_one_line_naming_it_and_writes_nothing(
    counted: Engine, empty_db_url: str, run_cli: Callable[..., Result]
) -> None:
    # It committed its facts, or its rates, before it reached the missing table.
    _refused_naming_the_dropped_table(counted, empty_db_url, run_cli, ("measure-rates", *NOW_OPTION))


# The check before them is measure-rates' (jobs.schema_setup.require_head), whatever the dialect.
OTHERS_ON_OUR_TABLES = [
    ("derive-outcomes", *NOW_OPTION),
    ("alerts",),
    ("compare", "edited_rate", "--at", "2026-11-02"),
]


@on_sqlite_alone
@pytest.mark.parametrize("command", OTHERS_ON_OUR_TABLES, ids=lambda command: command[0])
def test_a_command_on_our_tables_with_one_dropped_refuses_in_one_line_naming_it_and_writes_nothing(
    counted: Engine, empty_db_url: str, run_cli: Callable[..., Result], command: tuple[str, ...]
) -> None:
    _refused_naming_the_dropped_table(counted, empty_db_url, run_cli, command)


@on_sqlite_alone
@pytest.mark.parametrize(
    "command", [("measure-rates", *NOW_OPTION), *OTHERS_ON_OUR_TABLES], ids=lambda command: command[0]
)
def test_a_command_on_our_tables_at_an_older_revision_says_in_one_line_to_run_init_db_first(
    counted: Engine, empty_db_url: str, run_cli: Callable[..., Result], command: tuple[str, ...]
) -> None:
    with counted.begin() as connection:
        connection.execute(text(f"UPDATE {VERSION_TABLE} SET version_num = '0009'"))

    result = run_cli(*command, "--db", empty_db_url)

    assert result.exit_code == 1 and "Traceback" not in result.output + result.stderr
    assert result.stderr.endswith(
        f"our tables are at revision 0009, {command[0]} needs {HEAD}: run `runrecord init-db` first\n"
    )
    assert len(result.stderr.splitlines()) == 1, result.stderr
    counted.dispose()
