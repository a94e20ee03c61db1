"""The scheduler's lease: one holder at a time, renewed by it, taken over once expired or released."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from typing import Any

import psycopg
import pymysql
import pytest
from sqlalchemy import Engine, select
from sqlalchemy.exc import DBAPIError

from adapters.database import make_engine
from adapters.lease import TAKE_ATTEMPTS, Lease, LeaseState
from adapters.schema import lease as lease_table

T0 = 1_800_000_000.0


class Clock:
    """A clock the test moves by hand."""

    def __init__(self, now: float = T0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def lease_of(engine: Engine, holder: str, clock: Clock, seconds: float = 60) -> Lease:
    return Lease(engine, "scheduler", seconds=seconds, holder=holder, clock=clock)


def acquired_at(engine: Engine) -> int:
    with engine.connect() as connection:
        return int(connection.execute(select(lease_table.c.acquired_at)).scalar_one())


def test_the_first_process_takes_a_free_lease_and_a_second_waits_while_it_lasts(
    installation_engine: Engine,
) -> None:
    clock = Clock()
    first, second = lease_of(installation_engine, "a", clock), lease_of(installation_engine, "b", clock)

    taken = first.take()
    clock.now += 59.9
    refused = second.take()

    assert (taken, refused) == (True, False)
    assert second.state() == LeaseState("a", int((T0 + 60) * 1000))


def test_an_expired_lease_is_taken_over_and_its_former_holder_can_no_longer_renew_it(
    installation_engine: Engine,
) -> None:
    clock = Clock()
    first, second = lease_of(installation_engine, "a", clock), lease_of(installation_engine, "b", clock)
    first.take()

    clock.now += 60.001
    taken_over = second.take()
    renewed = first.renew()

    assert (taken_over, renewed) == (True, False)
    assert first.state() == LeaseState("b", int((T0 + 120.001) * 1000))
    assert acquired_at(installation_engine) == int(T0 + 60)


def test_the_holder_renews_its_lease_and_keeps_the_time_it_took_it(installation_engine: Engine) -> None:
    # MariaDB assigns SET clauses left to right: acquired_at must be decided before holder changes.
    clock = Clock()
    holder, other = lease_of(installation_engine, "a", clock), lease_of(installation_engine, "b", clock)
    holder.take()

    clock.now += 50
    renewed = holder.renew()
    clock.now += 50
    still_refused = other.take()

    assert (renewed, still_refused) == (True, False)
    assert holder.state() == LeaseState("a", int((T0 + 110) * 1000))
    assert acquired_at(installation_engine) == int(T0)


def test_a_released_lease_is_taken_at_once_by_the_next_process(installation_engine: Engine) -> None:
    clock = Clock()
    first, second = lease_of(installation_engine, "a", clock), lease_of(installation_engine, "b", clock)
    first.take()

    first.release()
    taken = second.take()

    assert taken is True
    assert second.state() == LeaseState("b", int((T0 + 60) * 1000))


def test_releasing_a_lease_another_process_holds_changes_nothing(installation_engine: Engine) -> None:
    clock = Clock()
    holder, stranger = lease_of(installation_engine, "a", clock), lease_of(installation_engine, "b", clock)
    holder.take()

    stranger.release()

    assert stranger.take() is False
    assert holder.state() == LeaseState("a", int((T0 + 60) * 1000))


def race(url: str, contenders: int = 6) -> list[bool]:
    """Each contender takes the lease at the same moment with an engine of its own, as a process would."""
    barrier = threading.Barrier(contenders)
    results: dict[str, bool] = {}

    def contend(name: str) -> None:
        engine = make_engine(url)
        try:
            lease = Lease(engine, "scheduler", seconds=60, holder=name)
            barrier.wait()
            results[name] = lease.take()
        finally:
            engine.dispose()

    threads = [threading.Thread(target=contend, args=(f"p{i}",)) for i in range(contenders)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    return sorted(results.values())


def test_of_processes_racing_for_a_free_lease_exactly_one_wins(installation_url: str) -> None:
    results = race(installation_url)

    assert results == [False] * 5 + [True]


def test_of_processes_racing_for_an_expired_lease_exactly_one_wins(installation_url: str) -> None:
    engine = make_engine(installation_url)
    Lease(engine, "scheduler", seconds=0.001, holder="gone").take()
    engine.dispose()

    results = race(installation_url)

    assert results == [False] * 5 + [True]


def deadlock_victim(dialect: str) -> Exception:
    """What the database's driver raises for a transaction it chose as a deadlock's victim."""
    if dialect == "mysql":
        return pymysql.err.OperationalError(1213, "Deadlock found when trying to get lock")
    if dialect == "postgresql":
        return psycopg.errors.DeadlockDetected("deadlock detected")
    pytest.skip("SQLite has one writer at a time: a taking waits for it, and is never a deadlock's victim")


def lock_wait_timed_out(dialect: str) -> Exception:
    """What the database's driver raises when a statement waited for a lock until its time ran out."""
    if dialect == "mysql":
        return pymysql.err.OperationalError(1205, "Lock wait timeout exceeded; try restarting transaction")
    if dialect == "postgresql":
        return psycopg.errors.LockNotAvailable("canceling statement due to lock timeout")
    return sqlite3.OperationalError("database is locked")


def refuse_statements(
    engine: Engine,
    monkeypatch: pytest.MonkeyPatch,
    refused: Callable[[str], bool],
    error: Exception,
    times: int,
) -> list[str]:
    """The driver raises `error` for the next `times` statements `refused` picks; the statements sent."""
    sent: list[str] = []
    do_execute = engine.dialect.do_execute

    def refusing(cursor: Any, statement: str, parameters: Any, context: Any = None) -> None:
        sent.append(statement)
        nonlocal times
        if times and refused(statement):
            times -= 1
            raise error
        do_execute(cursor, statement, parameters, context)

    monkeypatch.setattr(engine.dialect, "do_execute", refusing)
    return sent


def is_insert(statement: str) -> bool:
    return statement.startswith("INSERT INTO tx_runrecord_lease")


def is_update(statement: str) -> bool:
    return statement.startswith("UPDATE tx_runrecord_lease")


def test_a_taking_chosen_as_a_deadlocks_victim_is_tried_again_and_wins_a_free_lease(
    installation_engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    refusal = deadlock_victim(installation_engine.dialect.name)
    sent = refuse_statements(installation_engine, monkeypatch, is_insert, refusal, times=TAKE_ATTEMPTS - 1)

    taken = lease_of(installation_engine, "a", Clock()).take()

    assert taken is True
    assert sum(map(is_insert, sent)) == TAKE_ATTEMPTS
    assert lease_of(installation_engine, "b", Clock()).state() == LeaseState("a", int((T0 + 60) * 1000))


def test_a_taking_tried_again_after_a_deadlock_is_refused_while_another_holds_the_lease(
    installation_engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = Clock()
    lease_of(installation_engine, "a", clock).take()
    refusal = deadlock_victim(installation_engine.dialect.name)
    refuse_statements(installation_engine, monkeypatch, is_update, refusal, times=1)

    refused = lease_of(installation_engine, "b", clock).take()

    assert refused is False
    assert lease_of(installation_engine, "b", clock).state() == LeaseState("a", int((T0 + 60) * 1000))


def test_a_taking_chosen_as_a_deadlocks_victim_every_time_gives_up_with_the_error(
    installation_engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    refusal = deadlock_victim(installation_engine.dialect.name)
    sent = refuse_statements(installation_engine, monkeypatch, is_update, refusal, times=TAKE_ATTEMPTS)

    with pytest.raises(DBAPIError):
        lease_of(installation_engine, "a", Clock()).take()

    assert sum(map(is_update, sent)) == TAKE_ATTEMPTS


def test_a_taking_whose_lock_wait_timed_out_is_not_tried_again(
    installation_engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    # It has waited its time already: five more waits would hold the scheduler past its lease.
    refusal = lock_wait_timed_out(installation_engine.dialect.name)
    sent = refuse_statements(installation_engine, monkeypatch, is_update, refusal, times=1)

    with pytest.raises(DBAPIError):
        lease_of(installation_engine, "a", Clock()).take()

    assert sum(map(is_update, sent)) == 1


def test_a_taking_refused_for_another_reason_is_not_tried_again(
    installation_engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    refusal = installation_engine.dialect.loaded_dbapi.ProgrammingError("no")
    sent = refuse_statements(installation_engine, monkeypatch, is_update, refusal, times=1)

    with pytest.raises(DBAPIError):
        lease_of(installation_engine, "a", Clock()).take()

    assert sum(map(is_update, sent)) == 1
