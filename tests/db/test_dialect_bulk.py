"""adapters.dialect's bulk paths of the derivation, on SQLite, MariaDB and PostgreSQL: many rows in one
statement, many keys in one parameter, and the job's session settings set and put back afterwards."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import Connection, Engine, select

from adapters import schema
from adapters.dialect import bulk, plans
from adapters.dialect import session as sqlsession
from core.time import DAY_S
from jobs.derive import derive_outcomes

RUN_COLUMNS = ("run_uid", "correlation_id", "outcome", "writes", "configuration_identifier")
AWKWARD_TEXTS = ('a "quoted" one', "back\\slash", "{braces,and,commas}", "NULL", "", "Überschrift ✓", " ")


def run_rows(uids: range, label: str = "x") -> list[tuple[object, ...]]:
    return [(uid, f"{label}-{uid}", "edited", 1, "content-assistant") for uid in uids]


def test_insert_or_ignore_returns_exactly_the_rows_it_inserted(installation_engine: Engine) -> None:
    # More rows than one multi-row statement takes, a part of them already there.
    with installation_engine.begin() as connection:
        bulk.insert_rows(connection, schema.run_outcome, RUN_COLUMNS, run_rows(range(1, 1_201), "first"))
    with installation_engine.begin() as connection:
        inserted = bulk.insert_rows(
            connection,
            schema.run_outcome,
            RUN_COLUMNS,
            run_rows(range(1_001, 2_501), "second"),
            or_ignore=True,
            returning="run_uid",
        )
    with installation_engine.connect() as connection:
        query = select(schema.run_outcome.c.run_uid, schema.run_outcome.c.correlation_id)
        stored = dict(list(connection.execute(query)))

    assert sorted(inserted) == list(range(1_201, 2_501))
    assert len(stored) == 2_500
    assert stored[1_100] == "first-1100" and stored[1_300] == "second-1300"


def test_insert_rows_keeps_every_value_as_it_is(installation_engine: Engine) -> None:
    columns = ("run_uid", "event_uid", "correlation_id", "reason", "tablename", "first_change_after_s")
    rows = [(1, uid, text, text, text, uid * 60) for uid, text in enumerate(AWKWARD_TEXTS, start=1)]
    rows.append((1, 99, "none", "", "pages", None))
    with installation_engine.begin() as connection:
        bulk.insert_rows(connection, schema.write_outcome, columns, rows)
        bulk.insert_rows(connection, schema.write_outcome, columns, [])  # nothing to do, no statement
    with installation_engine.connect() as connection:
        selected = [schema.write_outcome.c[name] for name in columns]
        stored = [tuple(row) for row in connection.execute(select(*selected).order_by(selected[1]))]

    assert stored == rows


def test_insert_or_ignore_skips_a_taken_unique_key_without_returning_anything(
    installation_engine: Engine,
) -> None:
    with installation_engine.begin() as connection:
        first = bulk.insert_rows(
            connection,
            schema.run_outcome,
            RUN_COLUMNS,
            run_rows(range(1, 4)),
            or_ignore=True,
            returning="run_uid",
        )
        again = bulk.insert_rows(
            connection,
            schema.run_outcome,
            RUN_COLUMNS,
            run_rows(range(1, 4)),
            or_ignore=True,
            returning="run_uid",
        )
        bulk.insert_rows(connection, schema.run_outcome, RUN_COLUMNS, run_rows(range(1, 4)), or_ignore=True)

    assert sorted(first) == [1, 2, 3]
    assert again == []


@pytest.mark.parametrize("values", [[3, 1, 2, 2], AWKWARD_TEXTS])
def test_in_values_binds_many_keys_as_one_list(installation_engine: Engine, values: list[object]) -> None:
    texts = all(isinstance(value, str) for value in values)
    rows = [
        (uid, str(value) if texts else f"id-{value}", "edited", 1, "c")
        for uid, value in enumerate(values, 10)
    ]
    with installation_engine.begin() as connection:
        bulk.insert_rows(connection, schema.run_outcome, RUN_COLUMNS, rows[:2] if not texts else rows)
        table = schema.run_outcome
        column = table.c.correlation_id if texts else table.c.run_uid
        wanted = values if texts else [10, 11, 12]
        found = connection.execute(
            select(column).where(plans.in_values(connection.dialect.name, column, wanted))
        )
        found_values = sorted(found.scalars())

    assert found_values == (sorted(values) if texts else [10, 11])


def test_array_literal_round_trips_through_postgresql(installation_engine: Engine, dialect: str) -> None:
    if dialect != "postgresql":
        pytest.skip("PostgreSQL's array literal")
    values = [*AWKWARD_TEXTS, None]
    with installation_engine.connect() as connection:
        texts = connection.exec_driver_sql("SELECT %s::varchar[]", (plans.array_literal(values),)).scalar()
        numbers = connection.exec_driver_sql(
            "SELECT %s::integer[]", (plans.array_literal([1, None, -3]),)
        ).scalar()

    assert texts == values
    assert numbers == [1, None, -3]
    with pytest.raises(TypeError):
        plans.array_literal([1.5])


# What the job sets for its own session on each dialect (adapters.dialect.session.job_session).
_SESSION_SETTINGS = {
    "postgresql": ("SHOW jit", "SHOW work_mem"),
    "mariadb": ("SELECT @@SESSION.max_heap_table_size", "SELECT @@SESSION.tmp_table_size"),
    "sqlite": ("PRAGMA temp.cache_size",),
}


def _session_settings(connection: Connection, dialect: str) -> list[Any]:
    return [connection.exec_driver_sql(query).scalar() for query in _SESSION_SETTINGS[dialect]]


def test_the_job_puts_its_session_settings_back(installation_engine: Engine, dialect: str) -> None:
    with installation_engine.connect() as connection:
        before = _session_settings(connection, dialect)
        sqlsession.begin_job_session(connection)
        during = _session_settings(connection, dialect)
        sqlsession.end_job_session(connection)

    derive_outcomes(installation_engine, now=1_790_000_000, window_s=7 * DAY_S)

    with installation_engine.connect() as connection:  # the pool hands the job's connection out again
        after = _session_settings(connection, dialect)
        if dialect == "postgresql":
            temporary = connection.exec_driver_sql(
                "SELECT count(*) FROM pg_tables WHERE tablename LIKE %s", ("tx_runrecord_batch_%",)
            ).scalar()
            assert temporary == 0
    assert during != before
    if dialect == "mariadb":
        # The batch tables and the server's own temporary tables both stay in memory up to the same size.
        assert [int(value) for value in during] == [sqlsession.MEMORY_TABLE_BYTES] * 2
    assert after == before
