"""An event whose number column holds text, which only SQLite's loose typing lets a table keep: the event is
unreadable, named by its column, and everything else is read; a tool_write whose run holds text is no run's
write to derive-outcomes; measure-rates counts its run as core does, and refuses a newest stamp that is text
in one line naming the row; record and notes name a run's time or a message's number that is text, and read
the rest.
MariaDB and PostgreSQL refuse such a value on insert."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from decimal import Decimal

import pytest
from click.testing import Result
from sqlalchemy import Engine, func, select, text, update

from adapters import schema
from adapters.database import make_engine
from adapters.events import read_events
from adapters.measure_marks import NotANumberError
from core.events import Problem
from core.facts import Exclusion
from core.periods import Grain
from core.time import DAY_S
from data.generate import generate
from jobs.derive import derive_outcomes
from jobs.measure import measure_rates
from jobs.schema_setup import init_installation
from tests.db.test_measure_differential import agree_with_core

NOW = datetime(2026, 12, 1, tzinfo=UTC)
WINDOW = 7 * DAY_S
COLUMNS = ("sequence", "round", "crdate", "duration_ms")


@pytest.fixture
def sqlite_installation(make_empty_db: Callable[[str], str]) -> Engine:
    url = make_empty_db("sqlite")
    generate(url, create_tables=init_installation, conversations=120, seed=11, now=NOW)
    return make_engine(url)


# What SQLite keeps as it is in a column declared a number: texts that read as no number to SQLite (though
# Python's float reads some of them), and a blob.
KEPT = ["'z'", "'inf'", "'nan'", "'1_000'", "X'3132'"]


def _spoil(engine: Engine, uids_by_column: dict[str, int], value: str = "'z'") -> None:
    with engine.begin() as connection:
        for column, uid in uids_by_column.items():
            # Past SQLAlchemy's types, which would refuse the value before SQLite sees it.
            spoil = text(f"UPDATE tx_nrllm_agentrun_event SET {column} = {value} WHERE uid = :uid")
            connection.execute(spoil, {"uid": uid})


def _events_of_runs(engine: Engine, count: int) -> list[tuple[int, int]]:
    """(run, event uid) of the first event of `count` runs with events, a tool_write run among them."""
    e = schema.agentrun_event.c
    with engine.connect() as connection:
        writing = connection.execute(
            select(e.run).where(e.kind == "tool_write").order_by(e.run).limit(1)
        ).scalar_one()
        others = select(e.run).where(e.run != writing).distinct().order_by(e.run).limit(count - 1)
        runs = [writing, *connection.execute(others).scalars()]
        return [
            (
                run,
                connection.execute(
                    select(e.uid).where(e.run == run).order_by(e.sequence).limit(1)
                ).scalar_one(),
            )
            for run in runs
        ]


@pytest.mark.parametrize("value", KEPT)
def test_an_event_whose_number_column_holds_text_is_unreadable_by_its_column_and_the_others_are_read(
    sqlite_installation: Engine, value: str
) -> None:
    engine = sqlite_installation
    spoiled = _events_of_runs(engine, len(COLUMNS))
    with engine.connect() as connection:
        before = read_events(connection, [run for run, _ in spoiled])
    _spoil(engine, {column: uid for column, (_, uid) in zip(COLUMNS, spoiled, strict=True)}, value)

    with engine.connect() as connection:
        after = read_events(connection, [run for run, _ in spoiled])

    found = {(run, problem.uid, problem.problem, problem.detail) for run, problem in after.problems}
    expected = {
        (run, uid, Problem.NOT_A_NUMBER, column) for column, (run, uid) in zip(COLUMNS, spoiled, strict=True)
    }
    assert expected <= found
    for run, uid in spoiled:
        assert [event for event in before.by_run[run] if event.uid != uid] == list(after.by_run.get(run, ()))
    engine.dispose()


def test_measure_rates_counts_a_run_with_an_event_whose_number_column_holds_text_as_core_reads_it(
    sqlite_installation: Engine,
) -> None:
    engine = sqlite_installation
    e, r = schema.agentrun_event.c, schema.agentrun.c
    waited = (
        select(e.run)
        .where(e.kind == "approval")
        .union(select(r.uid).where(r.status == "waiting_for_approval"))
    )
    with engine.connect() as connection:
        never_waited = select(func.max(e.uid)).where(e.run.not_in(waited)).group_by(e.run).order_by(e.run)
        last_events = connection.execute(never_waited).scalars().all()
    # One event of every run that never waited, each column in turn: claiming runs among them, whose
    # verdicts read events (the steps of a wait are read apart: not this test's).
    for index, uid in enumerate(last_events):
        _spoil(engine, {COLUMNS[index % len(COLUMNS)]: uid})
    now = int(NOW.timestamp())

    derive_outcomes(engine, now=now, window_s=WINDOW)
    measure_rates(engine, now=now, window_s=WINDOW, grains=(Grain.WEEK, Grain.DAY))

    agree_with_core(engine, now)
    f = schema.measure_fact.c
    with engine.connect() as connection:
        spoiled_runs = select(e.run).where(e.uid.in_(last_events))
        unreadable = select(func.count()).where(
            f.run_uid.in_(spoiled_runs), f.problems.contains(Exclusion.EVENTS_UNREADABLE.value)
        )
        assert connection.execute(unreadable).scalar_one() > 0
    engine.dispose()


def _outcomes(engine: Engine) -> tuple[list[tuple[object, ...]], list[tuple[object, ...]]]:
    w, r = schema.write_outcome.c, schema.run_outcome.c
    with engine.connect() as connection:
        writes = connection.execute(
            select(w.run_uid, w.event_uid, w.outcome, w.reason, w.edit_scope).order_by(w.event_uid)
        ).all()
        runs = connection.execute(select(r.run_uid, r.outcome, r.writes).order_by(r.run_uid)).all()
    return [tuple(row) for row in writes], [tuple(row) for row in runs]


@pytest.mark.parametrize("value", ["'z'", "X'3132'"])
def test_a_tool_write_whose_run_column_holds_text_is_no_runs_write_and_every_run_is_derived(
    make_empty_db: Callable[[str], str], value: str
) -> None:
    spoiled, removed = make_empty_db("sqlite"), make_empty_db("sqlite")
    engines = []
    for url in (spoiled, removed):
        generate(url, create_tables=init_installation, conversations=120, seed=11, now=NOW)
        engines.append(make_engine(url))
    e = schema.agentrun_event.c
    with engines[0].connect() as connection:
        uid = connection.execute(select(func.min(e.uid)).where(e.kind == "tool_write")).scalar_one()
    with engines[0].begin() as connection:
        connection.execute(
            text(f"UPDATE tx_nrllm_agentrun_event SET run = {value} WHERE uid = :uid"), {"uid": uid}
        )
    with engines[1].begin() as connection:
        connection.execute(schema.agentrun_event.delete().where(e.uid == uid))

    for engine in engines:
        derive_outcomes(engine, now=int(NOW.timestamp()), window_s=WINDOW)

    assert _outcomes(engines[0]) == _outcomes(engines[1])
    assert _outcomes(engines[0])[1], "some run is derived"
    with engines[0].connect() as connection:
        t = schema.write_target.c
        assert connection.execute(select(t.event_uid).where(t.event_uid == uid)).first() is None
    for engine in engines:
        engine.dispose()


@pytest.mark.parametrize(("value", "held"), [("'z'", "text"), ("X'3132'", "bytes")])
@pytest.mark.parametrize("table", ["tx_nrllm_agentrun", "tx_nrmcpagent_conversation"])
def test_measure_rates_refuses_a_stamp_holding_text_naming_its_row_and_writes_nothing(
    sqlite_installation: Engine, table: str, value: str, held: str
) -> None:
    engine = sqlite_installation
    with engine.begin() as connection:
        connection.execute(text(f"UPDATE {table} SET tstamp = {value} WHERE uid = 3"))

    with pytest.raises(NotANumberError, match=rf"^{table}\.tstamp of uid 3 holds {held}, not a number"):
        measure_rates(engine, now=int(NOW.timestamp()), window_s=WINDOW)

    with engine.connect() as connection:
        assert connection.execute(select(func.count()).select_from(schema.measure_fact)).scalar_one() == 0
        assert connection.execute(select(func.count()).select_from(schema.measure_mark)).scalar_one() == 0
    engine.dispose()


def test_a_duration_sqlite_stores_as_a_number_reads_as_the_decimal_sqlalchemys_numeric_makes_of_it(
    sqlite_installation: Engine,
) -> None:
    """SQLite's durations are read as stored and made decimals by adapters.events, not by SQLAlchemy (whose
    conversion stops a whole read at a text): the same decimals."""
    e = schema.agentrun_event.c
    stored = [0.004, 0.005, 1e-3, 2.675, 123.456, 850, -0.0, 99999999.995, 7]
    with sqlite_installation.begin() as connection:
        uids = connection.execute(select(e.uid).where(e.kind == "context").limit(len(stored))).scalars().all()
        for uid, duration in zip(uids, stored, strict=True):
            # The payload without durationMs: the column is the step's duration then.
            connection.execute(
                update(schema.agentrun_event)
                .where(e.uid == uid)
                .values(duration_ms=duration, payload='{"kind": "context", "round": 0}')
            )
    with sqlite_installation.connect() as connection:
        runs = connection.execute(select(e.run).where(e.uid.in_(uids))).scalars().all()
        read = {event.uid: event for run in read_events(connection, runs).by_run.values() for event in run}
        as_sqlalchemy = dict(connection.execute(select(e.uid, e.duration_ms).where(e.uid.in_(uids))).all())

    assert {uid: read[uid].duration_ms for uid in uids} == as_sqlalchemy
    assert all(isinstance(value, Decimal) for value in as_sqlalchemy.values())
    sqlite_installation.dispose()


@pytest.mark.parametrize(
    ("table", "column", "where"),
    [
        ("tx_nrllm_agentrun", "started_at", "1 = 1"),
        ("tx_nrmcpagent_message", "sorting", "conversation = 1 AND sorting = 0"),
        ("tx_nrmcpagent_message", "crdate", "conversation = 1"),
    ],
)
@pytest.mark.parametrize("command", ["record", "notes"])
def test_record_and_notes_read_a_conversation_whose_run_or_message_holds_text_for_a_number_naming_it(
    sqlite_installation: Engine,
    run_cli: Callable[..., Result],
    command: str,
    table: str,
    column: str,
    where: str,
) -> None:
    engine = sqlite_installation
    with engine.begin() as connection:
        connection.execute(text(f"UPDATE {table} SET {column} = 'z' WHERE {where}"))
    url = engine.url.render_as_string(hide_password=False)
    engine.dispose()

    result = run_cli(command, "1", "--db", url)

    assert result.exit_code == 0, result.stderr
    assert "Traceback" not in result.output + result.stderr
    assert f"{column} is not a number" in result.stderr
