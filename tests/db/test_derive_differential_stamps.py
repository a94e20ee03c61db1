"""derive-outcomes in SQL and core's reference agree on sys_history as TYPO3 writes it (DESIGN.md, "The data
path"; rules 3, 4 and 7), on all three dialects: hypothesis builds each record's story in the order TYPO3
inserted its rows — AI writes stamped 0 s to days before their event, one worker stamp shared by several runs
and records, a worker restarted inside a window, the chatting editor's own hand edits, drafts and publishes,
`_cli_` rows, reverts, correlation ids naming the run — and both paths judge every write."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import Connection, Engine, Table, delete, func, inspect, select, table

from adapters import own_rows
from adapters.dialect import plans
from adapters.own_rows_scratch import batch_floor_carry, batch_pos_carry, batch_writer
from adapters.schema import VERSION_TABLE
from data.builder import Installation
from tests.db.test_derive_differential import _agree
from tests.db.test_derive_typo3_stamps import (
    CLI,
    DAY,
    EDITOR,
    NOW,
    OTHER_EDITOR,
    WINDOW,
    Row,
    a_page,
    one_write,
    plant,
)

T = NOW - 30 * DAY
WORKER_STARTED = T - 3 * DAY
WORKER_RESTARTED = T + 2 * DAY

# Seconds from the step before: writes within a second, a turn, an hour, a day, past a window.
steps = st.sampled_from((1, 2, 3, 60, 3_600, DAY, WINDOW + 1))
# How long before its event an AI row is stamped: exec (0 s, an approval's few seconds, a long turn) or the
# worker's start (None).
lags = st.sampled_from((0, 3, 75, None, None))
fields = st.sets(st.sampled_from(("title", "description", "hidden")), min_size=1, max_size=2)

ai_write = st.fixed_dictionaries(
    {
        "kind": st.just("ai"),
        "editor": st.sampled_from((EDITOR, EDITOR, OTHER_EDITOR, CLI)),
        "lag": lags,
        "row": st.sampled_from(("row", "row", "row", "none", "named")),
        "fields": fields,
    }
)
other_row = st.fixed_dictionaries(
    {
        "kind": st.just("row"),
        "by": st.sampled_from((EDITOR, OTHER_EDITOR, CLI)),
        "action": st.sampled_from((2, 2, 2, 3, 4, 5, 7)),
        "workspace": st.sampled_from((0, 0, 1)),
        "fields": fields,
        "revert": st.booleans(),
        "lag": st.sampled_from((0, 0, 30, 2 * DAY)),
    }
)
story = st.lists(st.tuples(steps, st.one_of(ai_write, other_row)), min_size=1, max_size=7)


def _plant(engine: Engine, stories: list[list[tuple[int, dict[str, Any]]]]) -> None:
    planned: list[tuple[Any, list[Row]]] = []
    with engine.begin() as connection:
        site = Installation(connection)
        for index, steps_of_record in enumerate(stories):
            page = a_page(site)
            at = T + index * 7
            values = {"title": "Produkte", "description": "", "hidden": 0}
            before: dict[str, Any] = dict(values)
            rows: list[Row] = []
            for step, (seconds, item) in enumerate(steps_of_record):
                at += seconds
                if item["kind"] == "ai":
                    run, _ = one_write(site, page, at=at, editor=item["editor"])
                    if item["row"] == "none":
                        continue
                    stamp = WORKER_RESTARTED if at > WORKER_RESTARTED else WORKER_STARTED
                    stamp = stamp if item["lag"] is None else at - item["lag"]
                    before = dict(values)
                    new = dict.fromkeys(sorted(item["fields"]), f"KI {index}.{step}")
                    old = {name: values[name] for name in new}
                    values.update(new)
                    named = f"0400${run.uuid}:{'0' * 32}" if item["row"] == "named" else ""
                    rows.append(Row(stamp, item["editor"], new=new, old=old, correlation_id=named))
                else:
                    names = sorted(item["fields"])
                    new = {name: before[name] if item["revert"] else f"Hand {index}.{step}" for name in names}
                    old = {name: values[name] for name in names}
                    if item["workspace"] == 0 and item["action"] == 2:
                        values.update(new)
                    rows.append(
                        Row(
                            at - item["lag"],
                            item["by"],
                            action=item["action"],
                            new=new,
                            old=old,
                            workspace=item["workspace"],
                        )
                    )
            planned.append((page, rows))
        site.finish()
    for page, rows in planned:
        if rows:
            plant(engine, page, *rows)


def _clear(engine: Engine) -> None:
    """Every table emptied: each example starts from an installation of its own (the builder's seeded uuids
    repeat from one example to the next)."""
    with engine.begin() as connection:
        for name in inspect(connection).get_table_names():
            if name != VERSION_TABLE:
                connection.execute(delete(table(name)))


# The matching is the same SQL on every dialect, spelled differently only where adapters/dialect says so, and
# every example reaches those spellings: SQLite, the quickest, draws the most examples.
EXAMPLES = {"sqlite": 25, "mariadb": 8, "postgresql": 8}


def _ai(row: str, lag: int | None) -> dict[str, Any]:
    return {"kind": "ai", "editor": EDITOR, "lag": lag, "row": row, "fields": {"title"}}


CROSSING = [
    (60, _ai("row", 0)),
    (60, _ai("row", 0)),
    (60, _ai("none", 0)),
    (60, _ai("none", 0)),
    (60, _ai("row", None)),
    (60, _ai("row", None)),
]
# Two editors' AI writes to one record, and a hand edit of the second between them.
TWO_WRITERS = [
    (60, _ai("row", 0)),
    (60, {**_ai("row", 3), "editor": OTHER_EDITOR}),
    (
        60,
        {
            "kind": "row",
            "by": OTHER_EDITOR,
            "action": 2,
            "workspace": 0,
            "fields": {"title"},
            "revert": False,
            "lag": 0,
        },
    ),
    (60, _ai("row", None)),
]


def _agrees_on_stories(engine: Engine, dialect: str) -> None:
    @settings(max_examples=EXAMPLES[dialect], deadline=None)
    @given(stories=st.lists(story, min_size=1, max_size=6))
    def agrees(stories: list[list[tuple[int, dict[str, Any]]]]) -> None:
        _clear(engine)
        _plant(engine, stories)
        _agree(engine, now=NOW, window_s=WINDOW)

    agrees()


def test_the_sql_path_and_core_agree_on_history_as_typo3_stamps_it(
    installation_engine: Engine, dialect: str
) -> None:
    _agrees_on_stories(installation_engine, dialect)


def test_floors_and_positions_taken_in_blocks_and_counted_agree_with_core(
    installation_engine: Engine, dialect: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Where an engine recomputes a running MAX or MIN for every row and cannot seek below a bound (MariaDB),
    # a record's insertion floor and the positions of a lane's writes (rule 3) are taken in blocks and
    # carried over from the other blocks, and p_i is counted in one pass over the lane's rows and writes;
    # blocks of two make every story of three rows or writes cross blocks, on every dialect.
    monkeypatch.setattr(plans, "recomputes_window_max", lambda dialect: True)
    monkeypatch.setattr(plans, "seeks_below_outer_bound", lambda dialect: False)
    monkeypatch.setattr(own_rows, "BLOCK_ROWS", 2)
    carried: dict[str, int] = {"floors": 0, "positions": 0}

    def counting(name: str, carry: Callable[..., None], table: Table) -> Callable[..., None]:
        def counted(connection: Connection, *args: Any) -> None:
            carry(connection, *args)
            carried[name] += connection.execute(select(func.count()).select_from(table)).scalar_one()

        return counted

    monkeypatch.setattr(
        own_rows, "_carry_floors", counting("floors", own_rows._carry_floors, batch_floor_carry)
    )
    monkeypatch.setattr(
        own_rows, "_carry_positions", counting("positions", own_rows._carry_positions, batch_pos_carry)
    )

    _agrees_on_stories(installation_engine, dialect)
    # And one story that crosses blocks both ways whatever hypothesis drew: two writes with their rows, two
    # without (p stays while i grows, so the second block lowers the first's positions), and two rows of a
    # worker stamped days before (below the first block's floors).
    _clear(installation_engine)
    _plant(installation_engine, [CROSSING])
    _agree(installation_engine, now=NOW, window_s=WINDOW)
    assert carried["floors"] > 0, "no story raised a block's floors"
    assert carried["positions"] > 0, "no story lowered a block's positions"


@pytest.mark.parametrize("grouped", [True, False], ids=["grouped once", "asked one by one"])
def test_a_row_finds_its_writers_channel_alike_from_the_records_channels_grouped_or_asked_one_by_one(
    installation_engine: Engine, dialect: str, monkeypatch: pytest.MonkeyPatch, grouped: bool
) -> None:
    # A record written by several backend users: each history row's lane is the channel of the writes of the
    # row's writer (rule 3). MariaDB chooses per batch between the record's channels grouped once and asked
    # one by one (own_rows._channels_grouped); both ways are taken here, on every dialect.
    monkeypatch.setattr(plans, "probes_grouped_subquery", lambda dialect: False)
    monkeypatch.setattr(own_rows, "MANY_CHANNELS", 0 if grouped else 10**9)
    shared = {"batches": 0}
    fill_history = own_rows._fill_history

    def counted(connection: Connection, **options: Any) -> None:
        fill_history(connection, **options)
        several = _written_by_several(connection)
        assert options["grouped"] is (grouped and several > 0)
        shared["batches"] += several > 0

    monkeypatch.setattr(own_rows, "_fill_history", counted)

    _agrees_on_stories(installation_engine, dialect)
    _clear(installation_engine)
    _plant(installation_engine, [TWO_WRITERS])
    _agree(installation_engine, now=NOW, window_s=WINDOW)
    assert shared["batches"] > 0, "no batch held a record written by two users"


def _written_by_several(connection: Connection) -> int:
    w = batch_writer.c
    return int(connection.execute(select(func.count()).where(w.channels > 1)).scalar_one())
