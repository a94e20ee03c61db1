"""An account without a right a job needs: one line naming the right."""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url
from sqlalchemy.pool import NullPool

from adapters.database import make_engine
from jobs.schema_setup import init_installation

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


@on_mariadb_alone
@pytest.mark.parametrize("job", ["derive-outcomes", "measure-rates"])
def test_without_create_temporary_tables_a_job_stops_in_one_line_naming_that_right(
    job: str, empty_db_url: str, run_cli: Callable[..., Any]
) -> None:
    engine = make_engine(make_url(empty_db_url))
    init_installation(engine)
    engine.dispose()
    everything_but = ["GRANT SELECT, INSERT, UPDATE, DELETE ON `{db}`.*"]

    with _account(empty_db_url, everything_but) as limited:
        result = run_cli(job, "--db", limited)

    assert result.exit_code == 1
    assert result.stderr.count("\n") == 1
    assert "may not create the temporary tables the job works in" in result.stderr
    assert "grant it CREATE TEMPORARY TABLES on the database" in result.stderr
