"""A database error is one line naming the database and what failed; on PostgreSQL the server's primary
message alone, never the DETAIL, CONTEXT or LINE parts that quote the values a statement read."""

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
