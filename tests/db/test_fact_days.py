"""The days of the stored facts before a date, which measure-rates reads to find the closed periods with
facts (adapters.tallies.closed_periods): a fact's day is the UTC day its run ended, however they are read."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest
from sqlalchemy import Engine, insert

from adapters import schema, tallies
from core.periods import Grain, period_of, period_start, unix_of
from core.time import DAY_S

MIDNIGHT = unix_of(date(2026, 10, 5))
ENDS = (
    -DAY_S - 1,  # a hand-made end before 1970, whose integer division rounds towards zero
    -1,
    0,
    MIDNIGHT - 1,  # the last second of a day
    MIDNIGHT,  # the first second of the next, twice
    MIDNIGHT,
    MIDNIGHT + DAY_S - 1,
    MIDNIGHT + 3 * DAY_S + 7,  # two days without a fact before it
    MIDNIGHT + 40 * DAY_S,
)


def _store(engine: Engine, ends: tuple[int, ...]) -> None:
    rows = []
    for uid, ended_at in enumerate(ends, start=1):
        day = datetime.fromtimestamp(ended_at, UTC).date()
        rows.append(
            {
                "run_uid": uid,
                "message_uid": 0,
                "conversation_uid": uid,
                "ended_at": ended_at,
                "week_start": period_of(day, Grain.WEEK),
                "day_start": day,
            }
        )
    with engine.begin() as connection:
        connection.execute(insert(schema.measure_fact), rows)


@pytest.mark.parametrize("with_negative", [True, False], ids=["an end before 1970", "every end after it"])
@pytest.mark.parametrize(
    "before", [MIDNIGHT - 1, MIDNIGHT, MIDNIGHT + 1, MIDNIGHT + DAY_S, MIDNIGHT + 41 * DAY_S, 0, -DAY_S]
)
def test_the_days_of_the_facts_before_a_time_are_the_utc_days_their_runs_ended_on(
    installation_engine: Engine, with_negative: bool, before: int
) -> None:
    ends = ENDS if with_negative else tuple(end for end in ENDS if end >= 0)
    _store(installation_engine, ends)

    with installation_engine.connect() as connection:
        found = tallies.fact_days_before(connection, before)

    assert found == {period_start(end, Grain.DAY) for end in ends if end < before}


def test_without_a_fact_before_the_time_there_is_no_day(installation_engine: Engine) -> None:
    _store(installation_engine, (MIDNIGHT, MIDNIGHT + DAY_S))

    with installation_engine.connect() as connection:
        assert tallies.fact_days_before(connection, MIDNIGHT) == set()
