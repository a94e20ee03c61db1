"""A date of ours that SQLite holds and SQLAlchemy cannot read fails a read in one line that names its row
(adapters.stored_dates); any other error goes through as it was. MariaDB and PostgreSQL keep no such value in
a DATE column, so these run on SQLite."""

from __future__ import annotations

from datetime import date

import pytest
from sqlalchemy import Engine, insert, select

from adapters import schema
from adapters.database import RunrecordError, reported
from adapters.stored_dates import SHOWN, unreadable
from tests.db.conftest import on_sqlite_alone


def _releases(engine: Engine, stored: list[str]) -> list[int]:
    with engine.begin() as connection:
        for index, _ in enumerate(stored):
            row = {"released_on": date(2026, 11, 2), "label": f"r{index}"}
            connection.execute(insert(schema.release).values(row))
        uids = list(connection.execute(select(schema.release.c.uid).order_by(schema.release.c.uid)).scalars())
        for uid, value in zip(uids, stored, strict=True):
            connection.exec_driver_sql(
                f"UPDATE {schema.release.name} SET released_on = ? WHERE uid = ?", (value, uid)
            )
    return uids


@on_sqlite_alone
def test_only_the_dates_sqlalchemy_cannot_read_are_named_at_most_three_then_how_many_more(
    installation_engine: Engine,
) -> None:
    # "20261102" is stored as the integer 20261102: the column's affinity is NUMERIC.
    stored = ["2026-11-02", "soon", "2026-02-30", "0000-01-01", "20261102", "", "2028-02-29"]
    uids = _releases(installation_engine, stored)

    found = unreadable(installation_engine)

    assert found == [
        f"tx_runrecord_release row #{uids[1]} holds no date (YYYY-MM-DD) in released_on: 'soon'",
        f"tx_runrecord_release row #{uids[2]} holds no date (YYYY-MM-DD) in released_on: '2026-02-30'",
        f"tx_runrecord_release row #{uids[3]} holds no date (YYYY-MM-DD) in released_on: '0000-01-01'",
        "and 2 more",
    ]
    assert SHOWN == 3


@on_sqlite_alone
def test_a_value_error_no_stored_date_explains_goes_through_as_it_was(installation_engine: Engine) -> None:
    _releases(installation_engine, ["2026-11-02"])

    with pytest.raises(ValueError, match="^something else$"), reported(installation_engine, "reading"):
        raise ValueError("something else")


@on_sqlite_alone
def test_a_value_error_raised_by_the_code_beside_a_date_that_is_none_goes_through_as_it_was(
    installation_engine: Engine,
) -> None:
    _releases(installation_engine, ["2026-99-99"])

    with pytest.raises(ValueError, match="^a rule of ours$"), reported(installation_engine, "reading"):
        raise ValueError("a rule of ours")


@on_sqlite_alone
@pytest.mark.parametrize("stored", ["2026-99-99", "20261102"], ids=["text", "a number"])
def test_a_date_that_is_none_fails_its_read_in_one_line_naming_its_row(
    installation_engine: Engine, stored: str
) -> None:
    (uid,) = _releases(installation_engine, [stored])
    held = repr(stored) if not stored.isdigit() else stored

    with (
        pytest.raises(RunrecordError) as raised,
        reported(installation_engine, "reading the releases"),
        installation_engine.connect() as connection,
    ):
        connection.execute(select(schema.release)).all()

    assert str(raised.value).endswith(
        f"failed: tx_runrecord_release row #{uid} holds no date (YYYY-MM-DD) in released_on: {held}: "
        "mend or delete it"
    )
