"""A chat message's createdAt read in SQL gives the time core reads (core.message_time), on every dialect:
the same shape, the same ranges, the same day count."""

from __future__ import annotations

import pytest
from sqlalchemy import Engine, String, literal, select

from adapters.dialect.instants import created_seconds
from core.message_time import created_seconds as core_seconds

TEXTS = [
    "2026-03-27T11:20:20+01:00",
    "2026-03-27T10:20:20Z",
    "2026-03-27T10:20:20.123Z",
    "2026-01-01T00:30:00-02:30",
    "1970-01-01T00:00:00Z",
    "2037-12-31T23:59:59-23:59",
    "2026-02-30T00:00:00z",
    "2026-03-27t10:20:20.5+00:00",
    "",
    "2026-03-27",
    "2026-03-27 10:20:20Z",
    "2026-03-27T10:20:20",
    "2026-13-01T00:00:00Z",
    "2026-03-27T24:00:00Z",
    "2026-03-27T10:60:00Z",
    "1969-12-31T23:59:59Z",
    "2038-01-01T00:00:00Z",
    "2026-03-27T10:20:20+01:00 ",
    "2026-03-27T10:20:20.Z",
    "2026-03-27T10:20:20.12a3Z",
    "2026-03-27T10:20:20+1:000",
    "2026-03-27T10:20:20+24:00",
    "abcd-ef-ghTij:kl:mnZ",
]


@pytest.mark.parametrize("text", TEXTS)
def test_a_created_at_read_in_sql_is_the_time_core_reads(installation_engine: Engine, text: str) -> None:
    dialect = installation_engine.dialect.name
    with installation_engine.connect() as connection:
        found = connection.execute(select(created_seconds(dialect, literal(text, String(40))))).scalar()

    assert found == core_seconds(text)
