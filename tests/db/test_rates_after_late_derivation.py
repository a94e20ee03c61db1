"""measure-rates run before derive-outcomes (by hand, on a schedule of its own, or beside it): a closed period
holding a run derived after it is written again with that outcome, so the rates come out as when
derive-outcomes runs first. On SQLite, MariaDB and PostgreSQL."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy import Engine, select

from adapters import schema
from adapters.database import make_engine
from core.metrics import RATES_VERSION
from core.periods import Grain
from core.time import DAY_S
from data.generate import generate
from jobs.derive import derive_outcomes
from jobs.measure import measure_rates
from jobs.schema_setup import init_installation
from tests.older_marks import left_by_an_older_runrecord

NOW = datetime(2026, 12, 1, tzinfo=UTC)
EARLIER = int(NOW.timestamp()) - 9 * DAY_S
LATER = int(NOW.timestamp())
WINDOW = 7 * DAY_S
GRAINS = (Grain.WEEK, Grain.DAY)


@pytest.fixture
def two_alike(dialect: str, make_empty_db: Callable[[str], str]) -> Iterator[tuple[Engine, Engine]]:
    """Two installations generated alike."""
    engines = []
    for _ in range(2):
        url = make_empty_db(dialect)
        generate(url, create_tables=init_installation, conversations=50, seed=8, now=NOW)
        engines.append(make_engine(url))
    yield engines[0], engines[1]
    for engine in engines:
        engine.dispose()


def _derive(engine: Engine, now: int) -> None:
    derive_outcomes(engine, now=now, window_s=WINDOW)


def _measure(engine: Engine, now: int) -> None:
    measure_rates(engine, now=now, window_s=WINDOW, grains=GRAINS)


def _late_and_in_order(late: Engine, in_order: Engine, now: int) -> None:
    """`late` measured before and after its derivation, `in_order` derived and then measured."""
    _measure(late, now)
    _derive(late, now)
    _measure(late, now)
    _derive(in_order, now)
    _measure(in_order, now)


def _rates(engine: Engine) -> list[tuple[Any, ...]]:
    columns = [c for c in schema.rate.c if c.name not in {"uid", "computed_at"}]
    with engine.connect() as connection:
        return sorted(tuple(row) for row in connection.execute(select(*columns)))


def test_a_first_measurement_before_any_derivation_is_mended_by_the_next_after_it(
    two_alike: tuple[Engine, Engine],
) -> None:
    late, first = two_alike
    _late_and_in_order(late, first, LATER)

    assert _rates(late) == _rates(first)
    edited = [row for row in _rates(late) if row[0] == "edited_rate" and row[3] == "all"]
    assert len(edited) > 2


def test_a_nightly_measurement_before_that_nights_derivation_is_mended_by_the_next(
    two_alike: tuple[Engine, Engine],
) -> None:
    late, first = two_alike
    for engine in two_alike:
        _derive(engine, EARLIER)
        _measure(engine, EARLIER)
    _late_and_in_order(late, first, LATER)

    assert _rates(late) == _rates(first)


def _a_grain_at_a_time(late: Engine, in_order: Engine, *, older_marks: bool = False) -> None:
    """`late` measured, derived, then measured days alone and weeks alone; `in_order` derived and measured.
    `older_marks`: the first measurement's marks as a runrecord from before each grain's marks left them."""
    _measure(late, LATER)
    if older_marks:
        with late.begin() as connection:
            left_by_an_older_runrecord(connection, rates_version=RATES_VERSION)
    _derive(late, LATER)
    for grain in (Grain.DAY, Grain.WEEK):
        measure_rates(late, now=LATER, window_s=WINDOW, grains=(grain,))
    _derive(in_order, LATER)
    _measure(in_order, LATER)


def test_a_closed_period_derived_since_is_written_again_though_a_measurement_of_the_other_grain_came_between(
    two_alike: tuple[Engine, Engine],
) -> None:
    # Each grain remembers the outcomes its rates were written with: a measurement of days alone (--grain)
    # does not take the derived runs from the weeks.
    late, first = two_alike
    _a_grain_at_a_time(late, first)

    assert _rates(late) == _rates(first)


def test_marks_stored_for_both_grains_by_an_older_runrecord_are_kept_for_the_grain_not_measured(
    two_alike: tuple[Engine, Engine],
) -> None:
    late, first = two_alike
    _a_grain_at_a_time(late, first, older_marks=True)

    assert _rates(late) == _rates(first)
