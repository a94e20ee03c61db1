"""tx_runrecord_measure_fact: the facts measure-rates keeps per run and per answer, and what changed since.

Every select names its columns, and none names an editor: be_user, userid, decidedBy and submittedBy are never
selected (DESIGN.md, "Privacy"); tests capture every statement and check it. A batch of conversations counts
its facts and writes those that changed (adapters.measure_batch); the stored facts are counted per period and
group by adapters.tallies.
"""

from __future__ import annotations

from datetime import date
from typing import Any

from sqlalchemy import (
    Connection,
    Select,
    and_,
    delete,
    or_,
    select,
)

from adapters import schema
from adapters.dialect import plans
from adapters.dialect.days import day_of
from adapters.measure_marks import Marks
from core.facts import Fact
from core.periods import Grain

conversation = schema.conversation
message = schema.message
agentrun = schema.agentrun
event = schema.agentrun_event
fact = schema.measure_fact

FACT_KEY = ("run_uid", "message_uid")


# --- what changed since the last measurement ----------------------------------------------------------


def periods_derived(connection: Connection, after: int, upto: int) -> set[tuple[Grain, date]]:
    """The periods of both grains that hold a run derived since the last measurement (its outcome's uid in
    (after, upto]): the rates of an outcome count in them, closed or not."""
    o, f = schema.run_outcome.c, fact.c
    query = (
        select(f.week_start, f.day_start)
        .select_from(schema.run_outcome.join(fact, f.run_uid == o.run_uid))
        .where(o.uid > after, o.uid <= upto)
        .distinct()
    )
    periods: set[tuple[Grain, date]] = set()
    for week, day in connection.execute(query):
        periods.update(((Grain.WEEK, day_of(week)), (Grain.DAY, day_of(day))))
    return periods


def touched_conversations(connection: Connection, marks: Marks, margin_s: int, limit: int) -> set[int] | None:
    """Conversations changed since `marks`: their row, a new message, or a run or event of a run they name.

    Rows stamped up to margin_s before a mark are read again, for a transaction that committed late. None
    when more than `limit` changed: then reading every conversation costs about the same.
    """
    d = connection.dialect.name
    c, m, r, e = conversation.c, message.c, agentrun.c, event.c
    # The new messages and events as a range of their primary key, on MariaDB whatever its statistics say:
    # counting a table as nearly empty (right after a bulk load), it read the whole (conversation, sorting)
    # index of the messages instead.
    new_messages = plans.by_index(
        d, select(m.conversation).where(m.uid > marks.message_uid), message, "PRIMARY"
    )
    new_events = plans.by_index(d, select(e.run).where(e.uid > marks.event_uid), event, "PRIMARY")
    queries = [
        select(c.uid).where(
            or_(c.tstamp >= marks.conversation_tstamp - margin_s, c.uid > marks.conversation_uid)
        ),
        _conversations_with(new_messages),
        _conversations_of(d, select(r.uid).where(r.tstamp >= marks.run_tstamp - margin_s)),
        _conversations_of(d, new_events),
    ]
    found: set[int] = set()
    for query in queries:
        for (uid,) in connection.execute(query.limit(limit + 1)):
            found.add(int(uid))
            if len(found) > limit:
                return None
    return found


def _conversations_with(messages: Select[Any]) -> Select[Any]:
    """The conversations of the new `messages`, read as a range of their primary key: asked as one DISTINCT,
    SQLite read the whole (conversation, sorting) index for it, every message of the installation (23 ms for
    133,000 messages with none new, measured)."""
    new = plans.evaluated_once(messages).subquery("new_message")
    return select(new.c.conversation).distinct()


def _conversations_of(dialect: str, runs: Select[Any]) -> Select[Any]:
    """The conversations whose facts name the `runs`: the runs stamped since a mark (the run table has no
    index on tstamp: one pass over it) or those of the new events (a range of their primary key), each run's
    fact then found by its key. A join from the facts read every fact and looked up its run: 30 ms against
    4 ms for 33,000 facts on PostgreSQL, whose statistics of a fact table filled since they were taken
    promised five (measured). The new events' runs are not made distinct first: SQLite would read the whole
    (run, sequence) index for it instead of the key's range (25 ms against 1 ms, measured); the
    conversations are."""
    f = fact.c
    changed = plans.evaluated_once(runs).subquery("changed")
    run_uid = changed.c[0]
    on = and_(f.run_uid == run_uid, f.message_uid == 0, f.conversation_uid > 0)
    joined, found = plans.inner_probe(dialect, changed, fact, on, (f.conversation_uid,), "changed_fact")
    return plans.in_order(dialect, select(found.c.conversation_uid).select_from(joined).distinct())


# --- facts ----------------------------------------------------------------------------------------------


def delete_every_fact(connection: Connection) -> None:
    """Empty the fact table: every fact is counted afresh."""
    connection.execute(delete(fact))


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
