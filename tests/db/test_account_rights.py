"""An account without a right a job needs: one line naming the right, never a table taken for missing.

MariaDB lists to an account only the tables it may read: taken for missing, tt_content would make every write
to it DISCARDED for good, and be_users every `_cli_` row a person's."""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from sqlalchemy import create_engine, event, func, select, text
from sqlalchemy.engine import make_url
from sqlalchemy.pool import NullPool

from adapters import schema
from adapters.database import make_engine
from adapters.history import TableCatalog, TableNotReadableError
from dashboard.queries import health
from data.generate import generate
from jobs.schema_setup import init_installation
from tests.conftest import NOW

on_mariadb_alone = pytest.mark.parametrize("dialect", ["mariadb"], indirect=True)


@contextmanager
def _account(url: str, grants: list[str]) -> Iterator[str]:
    """A MariaDB account with `grants` (each "… ON {db}…", the database filled in) for the block: its URL."""
    database = make_url(url).database
    name = f"runrecord_t_{secrets.token_hex(4)}"
    password = secrets.token_hex(8)
    admin = create_engine(url, poolclass=NullPool, isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f"CREATE USER '{name}'@'%' IDENTIFIED BY '{password}'"))
        for grant in grants:
            connection.execute(text(f"{grant.format(db=database)} TO '{name}'@'%'"))
    try:
        yield make_url(url).set(username=name, password=password).render_as_string(hide_password=False)
    finally:
        with admin.connect() as connection:
            connection.execute(text(f"DROP USER '{name}'@'%'"))
        admin.dispose()


def _installed(url: str) -> None:
    """Every table of the installation and runrecord's, empty, made with the test server's own account."""
    engine = make_engine(make_url(url))
    init_installation(engine)
    engine.dispose()


@on_mariadb_alone
@pytest.mark.parametrize("job", ["derive-outcomes", "measure-rates"])
def test_without_create_temporary_tables_a_job_stops_in_one_line_naming_that_right(
    job: str, empty_db_url: str, run_cli: Callable[..., Any]
) -> None:
    _installed(empty_db_url)
    everything_but = ["GRANT SELECT, INSERT, UPDATE, DELETE ON `{db}`.*"]

    with _account(empty_db_url, everything_but) as limited:
        result = run_cli(job, "--db", limited)

    assert result.exit_code == 1
    assert result.stderr.count("\n") == 1
    assert "may not create the temporary tables the job works in" in result.stderr
    assert "grant it CREATE TEMPORARY TABLES on the database" in result.stderr


def _grants_but(engine_url: str, left_out: set[str]) -> list[str]:
    """Every right derive-outcomes needs, table by table, but SELECT on the tables `left_out`."""
    admin = create_engine(engine_url, poolclass=NullPool)
    with admin.connect() as connection:
        tables = connection.execute(text("SHOW TABLES")).scalars().all()
    admin.dispose()
    grants = ["GRANT CREATE TEMPORARY TABLES ON `{db}`.*", "GRANT INSERT ON `{db}`.tx_nrllm_call_outcome"]
    for table in tables:
        if table.startswith("tx_runrecord_"):
            grants.append(f"GRANT SELECT, INSERT, UPDATE, DELETE ON `{{db}}`.`{table}`")
        elif table not in left_out:
            grants.append(f"GRANT SELECT ON `{{db}}`.`{table}`")
    return grants


@on_mariadb_alone
@pytest.mark.parametrize("left_out", ["tt_content", "be_users"])
def test_an_installations_table_the_account_may_not_read_stops_derive_outcomes_in_one_line(
    left_out: str, empty_db_url: str, run_cli: Callable[..., Any]
) -> None:
    generate(empty_db_url, create_tables=init_installation, conversations=60, seed=7, now=NOW)

    with _account(empty_db_url, _grants_but(empty_db_url, {left_out})) as limited:
        result = run_cli("derive-outcomes", "--now", NOW.isoformat(), "--db", limited)

    assert result.exit_code == 1
    assert result.stderr.count("\n") == 1
    assert f"does not list the installation's table {left_out} to this account" in result.stderr
    assert "grant the account SELECT on the database" in result.stderr
    engine = make_engine(make_url(empty_db_url))
    with engine.connect() as connection:
        stored = connection.execute(select(func.count()).select_from(schema.write_outcome)).scalar_one()
    engine.dispose()
    assert stored == 0


@on_mariadb_alone
def test_a_table_the_installation_lacks_is_missing_where_the_account_may_read_the_database(
    empty_db_url: str,
) -> None:
    engine = make_engine(make_url(empty_db_url))
    init_installation(engine)
    with engine.begin() as connection:
        connection.execute(text("DROP TABLE tt_content"))
    engine.dispose()

    with _account(empty_db_url, ["GRANT SELECT ON `{db}`.*"]) as reading:
        limited = create_engine(reading, poolclass=NullPool)
        with limited.connect() as connection:
            catalog = TableCatalog(connection)
            assert catalog.get("tt_content") is None
            assert catalog.get("tx_news_domain_model_news") is None
            assert catalog.get("pages") is not None
        limited.dispose()


@on_mariadb_alone
def test_health_reads_a_be_users_the_account_may_not_read_as_no_cli_user_and_does_not_fail(
    empty_db_url: str,
) -> None:
    _installed(empty_db_url)

    with _account(empty_db_url, _grants_but(empty_db_url, {"be_users"})) as limited:
        reading = create_engine(limited, poolclass=NullPool)
        assert health.reads_automation_user(reading) is False
        reading.dispose()


@on_mariadb_alone
def test_the_installations_tables_are_asked_for_when_the_catalog_is_made_never_for_a_name_a_write_gives(
    empty_db_url: str,
) -> None:
    # DESIGN.md rule 6: a name from a payload reaches SQL only once the database lists it.
    _installed(empty_db_url)

    with _account(empty_db_url, _grants_but(empty_db_url, {"tt_content"})) as limited:
        reading = create_engine(limited, poolclass=NullPool)
        with reading.connect() as connection:
            catalog = TableCatalog(connection)
            statements: list[str] = []
            event.listen(reading, "before_cursor_execute", lambda *args: statements.append(args[2]))
            with pytest.raises(TableNotReadableError):
                catalog.get("tt_content")
            assert catalog.get("tx_news_domain_model_news") is None
        reading.dispose()

    assert statements == []
