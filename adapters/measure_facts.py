"""tx_runrecord_measure_fact: the facts measure-rates keeps per run and per answer, and what changed since.

Every select names its columns, and none names an editor: be_user, userid, decidedBy and submittedBy are never
selected (DESIGN.md, "Privacy"); tests capture every statement and check it. Reads go by keyset (uid > after,
never OFFSET) or by IN lists of one batch, so that memory stays flat however large the installation is. The
upstream side (conversations, messages, runs, events) is read per batch of conversations; the facts are
counted per period and group by adapters.tallies.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import date
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Connection,
    Row,
    and_,
    delete,
    exists,
    insert,
    literal,
    or_,
    select,
)

from adapters import measure_scratch as scratch
from adapters import schema
from adapters.dialect import bulk, days, plans
from adapters.dialect.days import day_of
from adapters.measure_marks import Marks
from adapters.runs import run_columns
from core.facts import Fact
from core.periods import Grain

conversation = schema.conversation
message = schema.message
agentrun = schema.agentrun
event = schema.agentrun_event
fact = schema.measure_fact

FACT_KEY = ("run_uid", "message_uid")


# --- what changed since the last measurement ----------------------------------------------------------


def touched_conversations(connection: Connection, marks: Marks, margin_s: int, limit: int) -> set[int] | None:
    """Conversations changed since `marks`: their row, a new message, or a run or event of a run they name.

    Rows stamped up to margin_s before a mark are read again, for a transaction that committed late. None
    when more than `limit` changed: then reading every conversation costs about the same.
    """
    c, m, r, e, f = conversation.c, message.c, agentrun.c, event.c, fact.c
    queries = [
        select(c.uid).where(
            or_(c.tstamp >= marks.conversation_tstamp - margin_s, c.uid > marks.conversation_uid)
        ),
        select(m.conversation).where(m.uid > marks.message_uid).distinct(),
        select(f.conversation_uid)
        .join(agentrun, r.uid == f.run_uid)
        .where(f.message_uid == 0, f.conversation_uid > 0, r.tstamp >= marks.run_tstamp - margin_s)
        .distinct(),
        # Driven from the new events (a range of their primary key), each run's fact found by its key: a
        # join would read every fact and probe its run's events.
        select(f.conversation_uid)
        .where(
            f.run_uid.in_(select(e.run).where(e.uid > marks.event_uid)),
            f.message_uid == 0,
            f.conversation_uid > 0,
        )
        .distinct(),
    ]
    found: set[int] = set()
    for query in queries:
        for (uid,) in connection.execute(query.limit(limit + 1)):
            found.add(int(uid))
            if len(found) > limit:
                return None
    return found


# --- runs without a conversation's fact -------------------------------------------------------------


def unnamed_runs(
    connection: Connection, *, after: int, limit: int, since: Marks | None, margin_s: int
) -> Sequence[Any]:
    """Runs without a conversation's fact (none at all, or one that no conversation names), after `after`.

    With `since`, only runs new or updated since those marks.
    """
    r, f = agentrun.c, fact.c
    named = select(f.run_uid).where(f.run_uid == r.uid, f.message_uid == 0, f.conversation_uid > 0).exists()
    condition: ColumnElement[bool] = and_(r.uid > after, ~named)
    if since is not None:
        condition = and_(condition, or_(r.uid > since.run_uid, r.tstamp >= since.run_tstamp - margin_s))
    query = select(*run_columns()).where(condition).order_by(r.uid).limit(limit)
    return connection.execute(query).all()


# --- facts ----------------------------------------------------------------------------------------------


_FACT_COLUMNS = tuple(c for c in fact.c if c.name != "measured_at")


def facts_of_conversations(connection: Connection, conversation_uids: Collection[int]) -> Sequence[Any]:
    """The stored facts of the conversations (every column but measured_at)."""
    query = select(*_FACT_COLUMNS).where(fact.c.conversation_uid.in_(list(conversation_uids)))
    return connection.execute(query).all()


def facts_of_runs(connection: Connection, run_uids: Collection[int]) -> Sequence[Any]:
    """The stored facts of the runs (every column but measured_at)."""
    if not run_uids:
        return []
    f = fact.c
    query = select(*_FACT_COLUMNS).where(f.run_uid.in_(list(run_uids)), f.message_uid == 0)
    return connection.execute(query).all()


def delete_every_fact(connection: Connection) -> None:
    """Empty the fact table: every fact is counted afresh."""
    connection.execute(delete(fact))


def delete_facts(connection: Connection, uids: Collection[int]) -> None:
    """Delete the facts of these uids."""
    if uids:
        connection.execute(delete(fact).where(fact.c.uid.in_(list(uids))))


def fact_row(fact_value: Fact, now: int) -> dict[str, Any]:
    """The tx_runrecord_measure_fact row of a fact."""
    paths = fact_value.go_on_paths
    return {
        "run_uid": fact_value.run_uid,
        "message_uid": fact_value.message_uid,
        "conversation_uid": fact_value.conversation_uid,
        "configuration_identifier": fact_value.configuration,
        "skill_identifier": fact_value.skill,
        "ended_at": fact_value.ended_at,
        "week_start": fact_value.period(Grain.WEEK),
        "day_start": fact_value.period(Grain.DAY),
        "runs": fact_value.runs,
        "answer": fact_value.answer.value,
        "notice": int(fact_value.notice),
        "claim": fact_value.claim.value,
        "denial": fact_value.denial.value,
        "go_on": fact_value.go_on.value,
        "problems": ",".join(problem.value for problem in fact_value.problems),
        "measured_at": now,
        "go_on_finished_outside": paths.finished_outside,
        "go_on_second_run": paths.second_run,
        "go_on_unknown": paths.unknown,
        "go_on_unreadable": paths.unreadable,
    }


def save_facts(
    connection: Connection, facts: Sequence[Fact], now: int, stored: Sequence[Row[Any]]
) -> list[int]:
    """Upsert the facts that differ from their stored row (`stored`: facts_of_conversations or facts_of_runs);
    returns the ends (old and new) of those."""
    before = {(int(row.run_uid), int(row.message_uid)): row for row in stored}
    rows: list[dict[str, Any]] = []
    ends: list[int] = []
    for found in facts:
        row = fact_row(found, now)
        old = before.get((found.run_uid, found.message_uid))
        if old is not None and _same(old, row):
            continue
        rows.append(row)
        ends.append(found.ended_at)
        if old is not None:
            ends.append(int(old.ended_at))
    if rows:
        connection.execute(bulk.upsert(connection.dialect.name, fact, FACT_KEY), rows)
    return ends


def _same(stored: Row[Any], row: dict[str, Any]) -> bool:
    values = stored._mapping
    for name, value in row.items():
        if name == "measured_at":
            continue
        held = values[name]
        if name in ("week_start", "day_start"):
            held = day_of(held)
        if held != value:
            return False
    return True


# --- the facts a batch counted in the database (adapters.measure_inputs) ----------------------------------


def _compared() -> tuple[str, ...]:
    return tuple(column.name for column in scratch.fact.c if column.name not in FACT_KEY)


def mark_changed(connection: Connection) -> None:
    """Note the batch's facts that differ from the stored ones, and the stored facts of the batch's
    conversations that the batch no longer gives (adapters.measure_scratch.changed)."""
    f, sf, s = fact.c, scratch.fact.c, scratch.conversation.c
    key = and_(f.run_uid == sf.run_uid, f.message_uid == sf.message_uid)
    same = and_(key, *(f[name].is_not_distinct_from(sf[name]) for name in _compared()))
    stored = select(f.uid).where(key).scalar_subquery()
    fresh = select(sf.run_uid, sf.message_uid, stored, literal(1)).where(
        ~exists(select(literal(1)).where(same))
    )
    columns = ["run_uid", "message_uid", "stored_uid", "fresh"]
    connection.execute(insert(scratch.changed).from_select(columns, fresh))
    given = exists(select(literal(1)).where(key))
    gone = select(f.run_uid, f.message_uid, f.uid, literal(0)).where(
        f.conversation_uid.in_(select(s.uid)), ~given
    )
    connection.execute(insert(scratch.changed).from_select(columns, gone))
    scratch.analyze(connection, scratch.changed)


def write_changed(connection: Connection, now: int) -> set[tuple[Grain, date]]:
    """Replace the changed facts (mark_changed) with the batch's; returns the periods of both grains that
    a changed fact left or entered."""
    dialect = connection.dialect.name
    f, sf, c = fact.c, scratch.fact.c, scratch.changed.c
    periods: set[tuple[Grain, date]] = set()
    old = select(f.week_start, f.day_start).where(f.uid.in_(select(c.stored_uid))).distinct()
    week = days.date_of(dialect, sf.ended_at, week=True)
    day = days.date_of(dialect, sf.ended_at, week=False)
    new_rows = scratch.fact.join(
        scratch.changed, and_(c.run_uid == sf.run_uid, c.message_uid == sf.message_uid, c.fresh == 1)
    )
    new = select(week, day).select_from(new_rows).distinct()
    for query in (old, new):
        for week_value, day_value in connection.execute(query):
            periods.add((Grain.WEEK, day_of(week_value)))
            periods.add((Grain.DAY, day_of(day_value)))
    connection.execute(plans.delete_matching(dialect, fact, f.uid, c.stored_uid))
    names = [column.name for column in scratch.fact.c]
    rows = select(*sf, week, day, literal(now)).select_from(new_rows)
    connection.execute(insert(fact).from_select([*names, "week_start", "day_start", "measured_at"], rows))
    return periods
