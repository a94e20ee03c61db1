"""A database error is one line naming the database and what failed, without a value the server quotes; on
PostgreSQL the server's primary message alone, never the DETAIL, CONTEXT or LINE parts that quote the values a
statement read."""

from __future__ import annotations

import pytest
from sqlalchemy import Engine, text

from adapters.database import DatabaseUnavailableError, reported

SECRET = "Passwort-4711"


def test_a_postgresql_error_is_its_primary_message_without_the_values_its_detail_quotes(
    installation_engine: Engine, dialect: str
) -> None:
    if dialect != "postgresql":
        pytest.skip("only PostgreSQL's messages carry a DETAIL, a CONTEXT and the statement's LINE")
    with (
        pytest.raises(DatabaseUnavailableError) as raised,
        reported(installation_engine, "reading"),
        installation_engine.connect() as connection,
    ):
        connection.execute(text("SELECT CAST(:document AS json)"), {"document": "{" + SECRET})

    line = str(raised.value)
    assert "\n" not in line
    assert line.startswith("reading on ") and line.endswith("failed: invalid input syntax for type json")
    assert SECRET not in line


def test_a_mariadb_error_quotes_no_value_of_the_row_it_refused(
    installation_engine: Engine, dialect: str
) -> None:
    if dialect != "mariadb":
        pytest.skip("MariaDB's own messages quote a duplicate key's value")
    with installation_engine.connect() as connection:
        connection.execute(text("CREATE TEMPORARY TABLE refused (name varchar(40) PRIMARY KEY, n int)"))
        connection.execute(text("INSERT INTO refused VALUES (:name, 1)"), {"name": SECRET + "'s"})
        with pytest.raises(DatabaseUnavailableError) as duplicate, reported(installation_engine, "writing"):
            connection.execute(text("INSERT INTO refused VALUES (:name, 2)"), {"name": SECRET + "'s"})
        with pytest.raises(DatabaseUnavailableError) as refused, reported(installation_engine, "writing"):
            connection.execute(text("INSERT INTO refused VALUES ('x', :n)"), {"n": SECRET})

    assert str(duplicate.value).endswith("Duplicate entry '…' for key 'PRIMARY'\")")
    assert "Incorrect integer value: '…' for column" in str(refused.value)
    assert SECRET not in str(duplicate.value) + str(refused.value)


def test_a_postgresql_error_quotes_no_value_a_type_refused(installation_engine: Engine, dialect: str) -> None:
    if dialect != "postgresql":
        pytest.skip("PostgreSQL's primary message quotes the value a type refused")
    with (
        pytest.raises(DatabaseUnavailableError) as raised,
        reported(installation_engine, "reading"),
        installation_engine.connect() as connection,
    ):
        connection.execute(text("SELECT CAST(:n AS integer)"), {"n": SECRET})

    assert str(raised.value).endswith('failed: invalid input syntax for type integer: "…"')
