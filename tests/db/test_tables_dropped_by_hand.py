"""A table of ours dropped by hand while our tables stay at the newest revision: init-db creates it again, and
the job that kept its counts there counts everything again, as on its first run, to the same figures. On
SQLite, MariaDB and PostgreSQL."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest
from click.testing import Result
from sqlalchemy import Engine, MetaData, Table, func, select
from sqlalchemy.schema import DropTable

from adapters import schema
from adapters.database import make_engine
from core.periods import Grain
from core.time import DAY_S
from data.generate import generate
from jobs.derive import derive_outcomes
from jobs.measure import measure_rates
from jobs.schema_setup import init_installation

NOW = int(datetime(2026, 12, 1, tzinfo=UTC).timestamp())
WINDOW = 7 * DAY_S
GRAINS = (Grain.WEEK, Grain.DAY)


@pytest.fixture
def counted(empty_db_url: str) -> Engine:
    """A generated installation, derived and measured."""
    generate(
        empty_db_url,
        create_tables=init_installation,
        conversations=60,
        seed=4,
        now=datetime.fromtimestamp(NOW, UTC),
    )
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
    }


def _drop(engine: Engine, name: str) -> None:
    with engine.begin() as connection:
        connection.execute(DropTable(Table(name, MetaData())))


def _count(engine: Engine, table: Table) -> int:
    with engine.connect() as connection:
        return int(connection.execute(select(func.count()).select_from(table)).scalar_one())


def test_a_dropped_table_of_measure_rates_is_created_again_and_its_next_run_counts_the_same_rates(
    counted: Engine, empty_db_url: str, run_cli: Callable[..., Result]
) -> None:
    before = _figures(counted)
    _drop(counted, schema.rate.name)

    result = run_cli("init-db", "--db", empty_db_url)
    measure_rates(counted, now=NOW, window_s=WINDOW, grains=GRAINS)

    assert result.exit_code == 0, result.stderr
    assert "created again, empty (they were missing): tx_runrecord_rate" in result.stdout
    assert "measure-rates counts every conversation and period again" in result.stdout
    assert "derive-outcomes" not in result.stdout
    assert _figures(counted) == before
    counted.dispose()


def test_a_dropped_table_of_derive_outcomes_empties_the_rest_of_its_counts_and_both_jobs_count_the_same_again(
    counted: Engine, empty_db_url: str, run_cli: Callable[..., Result]
) -> None:
    before = _figures(counted)
    assert before["runs"] and before["writes"]
    _drop(counted, schema.write_target.name)

    result = run_cli("init-db", "--db", empty_db_url)
    emptied = _count(counted, schema.run_outcome), _count(counted, schema.measure_mark)
    derive_outcomes(counted, now=NOW, window_s=WINDOW)
    measure_rates(counted, now=NOW, window_s=WINDOW, grains=GRAINS)

    assert result.exit_code == 0, result.stderr
    assert "created again, empty (they were missing): tx_runrecord_write_target" in result.stdout
    assert "derive-outcomes derives every finished run again" in result.stdout
    assert "measure-rates counts every conversation and period again" in result.stdout
    assert emptied == (0, 0)
    assert _figures(counted) == before
    counted.dispose()


def test_a_dropped_table_that_holds_no_count_is_created_again_and_nothing_is_counted_again(
    counted: Engine, empty_db_url: str, run_cli: Callable[..., Result]
) -> None:
    kept = _count(counted, schema.run_outcome), _count(counted, schema.measure_mark)
    _drop(counted, schema.lease.name)

    result = run_cli("init-db", "--db", empty_db_url)
    again = run_cli("init-db", "--db", empty_db_url)

    assert result.exit_code == 0, result.stderr
    assert "created again, empty (they were missing): tx_runrecord_lease" in result.stdout
    assert "again on its next run" not in result.stdout
    assert (_count(counted, schema.run_outcome), _count(counted, schema.measure_mark)) == kept
    assert "created again" not in again.stdout
    counted.dispose()
