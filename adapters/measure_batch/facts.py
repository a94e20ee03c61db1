"""The batch's facts (core.facts.conversation_facts, core.facts.orphan_fact) counted in SQL from the other
scratch tables, and written over the stored ones that changed (tx_runrecord_measure_fact).

One fact per run named (the conversation with the highest uid that names it), one per completed answer whose
run is gone, one per unreadable assistant message; a run a conversation of the batch no longer names, and a
run no conversation names, becomes a run of its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Connection,
    Select,
    and_,
    case,
    exists,
    func,
    insert,
    literal,
    null,
    or_,
    select,
)

from adapters import schema
from adapters.decision_table import first_holding
from adapters.dialect import days, plans
from adapters.dialect import documents as doc
from adapters.dialect.days import day_of
from adapters.measure_batch import scratch
from adapters.measure_batch.entries import own_entry
from adapters.measure_batch.runs import run_end
from adapters.measure_batch.scratch import flag
from adapters.measure_batch.waits import counted_run
from adapters.measure_facts import FACT_KEY, PURGED_RUN_READS
from core.answers import (
    CLAIM_BY_VERDICT,
    DENIAL_DECISION,
    VERDICT_BY_RECORD,
    AnswerState,
    ClaimState,
    DenialState,
    DenialTest,
    RecordTest,
)
from core.facts import Exclusion
from core.go_on import PATHS, GoOnPath
from core.periods import Grain
from core.transcript import Role
from core.waits import GO_ON_DECISION, GoOnState, GoOnTest

agentrun = schema.agentrun


def _problems(parts: Sequence[tuple[ColumnElement[bool], Exclusion]]) -> ColumnElement[Any]:
    """The exclusions whose condition holds, in this order, joined by commas (core.facts)."""
    joined: ColumnElement[Any] = literal("")
    for condition, reason in parts:
        joined = joined + case((condition, f",{reason.value}"), else_="")
    return func.substr(joined, 2)


def _path_counts() -> Any:
    """Per conversation and run that waited: its stored "go on" messages by path (core.go_on.PATHS) and the
    unreadable user messages in their place."""
    u = scratch.user.c
    waited = scratch.run.alias("waited")
    later = scratch.run.alias("later")
    later_named = scratch.named.alias("later_named")
    w, r, n = waited.c, later.c, later_named.c
    counted = counted_run(u)
    # core.go_on._second_run: a run started at or after it, before the next user message, the waiting run
    # not ended then.
    second = exists(
        select(literal(1))
        .select_from(later_named.join(later, r.uid == n.run_uid))
        .where(
            n.conversation == u.conversation,
            r.uid != w.uid,
            r.started_at >= u.crdate,
            or_(u.next_user_at.is_(None), r.started_at < u.next_user_at),
            ~and_(w.finished == 1, w.ended_at <= r.started_at),
        )
    )
    is_go_on = exists(select(literal(1)).where(scratch.go_on.c.message_uid == u.message_uid))
    path = case(
        *(
            (and_(u.line == int(line), second if found else ~second), taken.value)
            for (line, found), taken in PATHS.items()
        )
    )
    rows = (
        select(u.conversation, w.uid.label("run_uid"), u.unreadable, path.label("path"))
        .select_from(scratch.user.join(waited, w.uid == counted))
        .where(or_(u.unreadable == 1, is_go_on))
        .subquery("go_on_rows")
    )
    sums = {
        taken: func.sum(flag(and_(rows.c.unreadable == 0, rows.c.path == taken.value))).label(taken.value)
        for taken in GoOnPath
    }
    return (
        select(
            rows.c.conversation,
            rows.c.run_uid,
            *sums.values(),
            func.sum(rows.c.unreadable).label("unreadable"),
        )
        .group_by(rows.c.conversation, rows.c.run_uid)
        .subquery("paths")
    )


def _go_on_state(conversation_uid: ColumnElement[Any]) -> ColumnElement[Any]:
    """core.waits.go_on_state (GO_ON_DECISION) of a conversation, over its user messages sent inside a run's
    wait (scratch.user.inside_run)."""
    u = scratch.user.c
    inside = and_(u.conversation == conversation_uid, u.inside_run.is_not(None))

    def holds(test: GoOnTest) -> ColumnElement[bool] | None:
        """core.waits.go_on_test_holds, in SQL."""
        if test is GoOnTest.SAID:
            return exists(
                select(literal(1))
                .select_from(scratch.user.join(scratch.go_on, scratch.go_on.c.message_uid == u.message_uid))
                .where(inside)
            )
        if test is GoOnTest.UNREADABLE:
            return exists(select(literal(1)).where(inside, u.unreadable == 1))
        if test is GoOnTest.OTHERWISE:
            return None
        raise NotImplementedError(f"no SQL for the go-on test {test}")

    return first_holding(GO_ON_DECISION, holds, lambda state: state.value)


def _counted_at(conversation_uid: ColumnElement[Any]) -> ColumnElement[Any]:
    """The run a conversation's "go on" is counted at: the first to end of its runs that waited."""
    n, run = scratch.named.alias("counted_named"), scratch.run.alias("counted_run")
    return (
        select(run.c.uid)
        .select_from(n.join(run, and_(run.c.uid == n.c.run_uid, run.c.waited == 1)))
        .where(n.c.conversation == conversation_uid)
        .order_by(run.c.ended_at, run.c.uid)
        .limit(1)
        .scalar_subquery()
    )


FACT_COLUMNS = [column.name for column in scratch.fact.c]


def _fill_counted(connection: Connection) -> None:
    """Once per conversation, not once per run it names: the run its "go on" is counted at and its state."""
    s = scratch.conversation.c
    # The run looked up once per conversation, then asked whether there is one: named in the WHERE too, it
    # was looked up twice (157 ms against 106 ms for 33,282 conversations on PostgreSQL, measured).
    found = plans.evaluated_once(select(s.uid, _counted_at(s.uid).label("run_uid"))).subquery("counted_at")
    query = select(found.c.uid, found.c.run_uid, _go_on_state(found.c.uid)).where(
        found.c.run_uid.is_not(None)
    )
    connection.execute(insert(scratch.counted).from_select(["conversation", "run_uid", "go_on"], query))
    scratch.analyze(connection, scratch.counted)


def fill_facts(connection: Connection) -> None:
    """core.facts.conversation_facts for the batch: one per run named (the conversation with the highest
    uid that names it), one per answer whose run is gone, one per unreadable assistant message."""
    _fill_counted(connection)
    n, run, s = scratch.named.c, scratch.run.c, scratch.conversation.c
    a, j, v, k = scratch.answer.c, scratch.judged.c, scratch.verdict.c, scratch.count.c
    later = scratch.named.alias("later")
    paths = _path_counts()
    has_answer = a.message_uid.is_not(None)
    claims = func.coalesce(j.claims, 0) == 1
    from_record = _claim_from_record()
    claim = case(
        (~has_answer, ClaimState.NONE.value),
        (~claims, ClaimState.NO_CLAIM.value),
        (func.coalesce(k.events, 0) == 0, from_record),
        *((v.verdict == verdict.value, state.value) for verdict, state in CLAIM_BY_VERDICT.items()),
        else_=ClaimState.CANNOT_TELL.value,
    )
    denial = denial_of(has_answer, a.earlier, j.denies)
    g = scratch.counted.c
    go_on = case((run.uid == g.run_uid, g.go_on), else_=GoOnState.NONE.value)
    cannot_tell = claim == ClaimState.CANNOT_TELL.value
    events = func.coalesce(k.events, 0)
    problems = _problems(
        [
            (and_(cannot_tell, events == 0), Exclusion.NO_EVENTS),
            (and_(cannot_tell, events > 0), Exclusion.EVENTS_UNREADABLE),
            (denial == DenialState.CANNOT_TELL.value, Exclusion.RUN_RECORD_UNREADABLE),
            (go_on == GoOnState.CANNOT_TELL.value, Exclusion.USER_MESSAGE_UNREADABLE),
        ]
    )
    p = paths.c
    runs = (
        select(
            run.uid,
            literal(0),
            n.conversation,
            run.configuration,
            s.skill,
            run.ended_at,
            literal(1),
            case((has_answer, AnswerState.READ.value), else_=AnswerState.NONE.value),
            func.coalesce(a.notice, 0),
            claim,
            denial,
            go_on,
            problems,
            *(func.coalesce(p[path.value], 0) for path in GoOnPath),
            func.coalesce(p.unreadable, 0),
        )
        .select_from(
            scratch.named.join(scratch.run, run.uid == n.run_uid)
            .join(scratch.conversation, s.uid == n.conversation)
            .outerjoin(scratch.count, k.run == run.uid)
            .outerjoin(scratch.answer, and_(a.conversation == n.conversation, a.run_uid == run.uid))
            .outerjoin(scratch.judged, j.message_uid == a.message_uid)
            .outerjoin(scratch.verdict, v.run_uid == run.uid)
            .outerjoin(paths, and_(p.conversation == n.conversation, p.run_uid == run.uid))
            .outerjoin(scratch.counted, g.conversation == n.conversation)
        )
        .where(
            ~exists(
                select(literal(1)).where(later.c.run_uid == n.run_uid, later.c.conversation > n.conversation)
            )
        )
    )
    connection.execute(insert(scratch.fact).from_select(FACT_COLUMNS, runs))
    gone_claim = case((claims, from_record), else_=ClaimState.NO_CLAIM.value)
    gone_denial = denial_of(literal(True), a.earlier, j.denies)
    gone = (
        select(
            literal(0),
            a.message_uid,
            a.conversation,
            null(),
            s.skill,
            a.crdate,
            literal(0),
            literal(AnswerState.READ.value),
            a.notice,
            gone_claim,
            gone_denial,
            literal(GoOnState.NONE.value),
            _problems(
                [
                    (literal(True), Exclusion.RUN_MISSING),
                    (gone_claim == ClaimState.CANNOT_TELL.value, Exclusion.NO_EVENTS),
                    (gone_denial == DenialState.CANNOT_TELL.value, Exclusion.RUN_RECORD_UNREADABLE),
                ]
            ),
            *(literal(0) for _ in range(4)),
        )
        .select_from(
            scratch.answer.join(scratch.conversation, s.uid == a.conversation).outerjoin(
                scratch.judged, j.message_uid == a.message_uid
            )
        )
        .where(a.run_uid.is_(None))
    )
    connection.execute(insert(scratch.fact).from_select(FACT_COLUMNS, gone))
    m = scratch.message.c
    d = connection.dialect.name
    unreadable = (
        select(
            literal(0),
            m.uid,
            m.conversation,
            null(),
            s.skill,
            m.crdate,
            literal(0),
            literal(AnswerState.UNREADABLE.value),
            literal(0),
            literal(ClaimState.NONE.value),
            literal(DenialState.NONE.value),
            literal(GoOnState.NONE.value),
            literal(Exclusion.MESSAGE_UNREADABLE.value),
            *(literal(0) for _ in range(4)),
        )
        .select_from(scratch.message.join(scratch.conversation, s.uid == m.conversation))
        .where(m.readable == 0, doc.exact(d, m.role_column) == Role.ASSISTANT.value)
    )
    connection.execute(insert(scratch.fact).from_select(FACT_COLUMNS, unreadable))
    scratch.analyze(connection, scratch.fact)


def _claim_from_record() -> ColumnElement[Any]:
    """core.answers.verdict_from_record (VERDICT_BY_RECORD) as a claim state, for the answer of a run without
    a stream."""
    a, s, e = scratch.answer.c, scratch.conversation.c, scratch.entry.c
    of_run = and_(e.conversation == a.conversation, e.run_uuid == a.run_uuid)
    own = own_entry(e, a.segment, a.position)

    def listed(*where: ColumnElement[bool]) -> ColumnElement[bool]:
        return exists(select(literal(1)).where(of_run, *where))

    def holds(test: RecordTest) -> ColumnElement[bool] | None:
        """core.answers.record_test_holds, in SQL, over the answer's conversation and run record entries."""
        if test is RecordTest.NOT_STORED:
            return s.record_stored == 0
        if test is RecordTest.RUN_WROTE:
            return listed(e.writes == 1)
        if test is RecordTest.RECORD_UNREADABLE:
            return s.record_problem == 1
        if test is RecordTest.RUN_CONTINUED:
            return listed(e.segment > 0)
        if test is RecordTest.OWN_ENTRY:
            return listed(own)
        if test is RecordTest.OTHERWISE:
            return None
        raise NotImplementedError(f"no SQL for the record test {test}")

    return first_holding(VERDICT_BY_RECORD, holds, lambda verdict: CLAIM_BY_VERDICT[verdict].value)


def denial_of(
    has_answer: ColumnElement[Any], earlier: ColumnElement[Any], denies: ColumnElement[Any]
) -> ColumnElement[Any]:
    """core.answers.denial_state (DENIAL_DECISION) of the answer, if there is one."""

    def holds(test: DenialTest) -> ColumnElement[bool] | None:
        """core.answers.denial_test_holds, in SQL, over the answer's earlier write and its judged text."""
        if test is DenialTest.EARLIER_UNKNOWN:
            return earlier.is_(None)
        if test is DenialTest.NO_EARLIER_WRITE:
            return earlier == 0
        if test is DenialTest.DENIES:
            return func.coalesce(denies, 0) == 1
        if test is DenialTest.OTHERWISE:
            return None
        raise NotImplementedError(f"no SQL for the denial test {test}")

    no_answer = (~has_answer, literal(DenialState.NONE.value))
    return first_holding(DENIAL_DECISION, holds, lambda state: state.value, first=[no_answer])


def batch_counts(connection: Connection) -> dict[str, int]:
    """What the batch read: run facts, completed answers, those without their run, unreadable assistant
    messages."""
    f, a = scratch.fact.c, scratch.answer.c
    runs = connection.execute(select(func.coalesce(func.sum(f.runs), 0))).scalar_one()
    answers = connection.execute(
        select(func.count(), func.coalesce(func.sum(flag(a.run_uid.is_(None))), 0))
    ).one()
    unreadable = connection.execute(
        select(func.count()).where(f.answer == AnswerState.UNREADABLE.value)
    ).scalar_one()
    return {
        "runs": int(runs),
        "answers": int(answers[0]),
        "answers_without_run": int(answers[1]),
        "unreadable_messages": int(unreadable),
    }


def _unnamed_fact(condition: ColumnElement[bool], source: Any) -> Select[Any]:
    """core.facts.orphan_fact of the runs that match: counted in all and its configuration, in no skill."""
    r = agentrun.c
    return (
        select(
            r.uid,
            literal(0),
            literal(0),
            func.coalesce(r.configuration_identifier, ""),
            null(),
            run_end(),
            literal(1),
            literal(AnswerState.NONE.value),
            literal(0),
            literal(ClaimState.NONE.value),
            literal(DenialState.NONE.value),
            literal(GoOnState.NONE.value),
            literal(""),
            *(literal(0) for _ in range(4)),
        )
        .select_from(source)
        .where(condition)
    )


def fill_retired_runs(connection: Connection) -> None:
    """The runs whose stored fact is of a conversation of the batch that no longer names them: each becomes a
    run of its own (core.facts.orphan_fact) while tx_nrllm_agentrun still holds it."""
    f, sf, s = schema.measure_fact.c, scratch.fact.c, scratch.conversation.c
    # Each conversation of the batch looks its stored run facts up by its key. Read from the stored facts,
    # PostgreSQL took every stored run fact and asked whether its conversation was in the batch: a pass
    # over all the facts written so far for every batch (48, 98, 147 ms for the 2nd to 4th batch of 20,000
    # conversations, measured), quadratic in a measurement from nothing.
    stored_runs = and_(f.conversation_uid == s.uid, f.message_uid == 0)
    joined, stored = plans.inner_probe(
        connection.dialect.name, scratch.conversation, schema.measure_fact, stored_runs, (f.run_uid,), "run"
    )
    given = exists(select(literal(1)).where(sf.run_uid == stored.c.run_uid, sf.message_uid == 0))
    source = joined.join(agentrun, agentrun.c.uid == stored.c.run_uid)
    connection.execute(insert(scratch.fact).from_select(FACT_COLUMNS, _unnamed_fact(~given, source)))


def fill_purged_runs(connection: Connection) -> None:
    """The runs nr-llm purged (DOMAIN.md, "Retention") whose stored fact is of a conversation of the batch:
    each keeps its fact as a run, its end, configuration and skill, counted among the runs and by its
    derived outcome, so that a period written afresh still counts it; what its answer and its "go on" say
    is read again without the run, as every answer whose run is gone is (fill_facts), and left out here."""
    f, s = schema.measure_fact.c, scratch.conversation.c
    stored_runs = and_(f.conversation_uid == s.uid, f.message_uid == 0)
    kept = (f.run_uid, f.configuration_identifier, f.skill_identifier, f.ended_at, f.runs)
    dialect = connection.dialect.name
    joined, stored = plans.inner_probe(
        dialect, scratch.conversation, schema.measure_fact, stored_runs, kept, "stored"
    )
    # Each run looked up by its key (PostgreSQL: as NOT EXISTS it hashed every run of the installation).
    joined, run = plans.outer_probe(
        dialect, joined, agentrun, agentrun.c.uid == stored.c.run_uid, (agentrun.c.uid,), "present"
    )
    values: dict[str, Any] = {
        "run_uid": stored.c.run_uid,
        "message_uid": literal(0),
        "conversation_uid": s.uid,
        **{
            name: stored.c[name]
            for name in ("configuration_identifier", "skill_identifier", "ended_at", "runs")
        },
        **{name: literal(value) for name, value in PURGED_RUN_READS.items()},
    }
    rows = select(*(values[name] for name in FACT_COLUMNS)).select_from(joined).where(run.c.uid.is_(None))
    connection.execute(insert(scratch.fact).from_select(FACT_COLUMNS, rows))


def fill_unnamed_runs(connection: Connection, *, since: bool) -> int:
    """The runs no conversation's fact names (core.facts.orphan_fact); with `since`, only the runs stamped
    since the last measurement (scratch.since_run), each looked up by its key. Returns how many."""
    r, f = agentrun.c, schema.measure_fact.c
    named = exists(select(literal(1)).where(f.run_uid == r.uid, f.message_uid == 0, f.conversation_uid > 0))
    query = _unnamed_fact(~named, agentrun)
    if since:
        source = scratch.since_run.join(agentrun, r.uid == scratch.since_run.c.uid)
        query = plans.in_order(connection.dialect.name, _unnamed_fact(~named, source))
    connection.execute(insert(scratch.fact).from_select(FACT_COLUMNS, query))
    scratch.analyze(connection, scratch.fact)
    return int(connection.execute(select(func.count()).select_from(scratch.fact)).scalar_one())


# --- what the batch writes --------------------------------------------------------------------------------


def _compared() -> tuple[str, ...]:
    return tuple(column.name for column in scratch.fact.c if column.name not in FACT_KEY)


def mark_changed(connection: Connection) -> None:
    """Note the batch's facts that differ from the stored ones, and the stored facts of the batch's
    conversations that the batch no longer gives (scratch.changed)."""
    d = connection.dialect.name
    fact, f, sf, s = schema.measure_fact, schema.measure_fact.c, scratch.fact.c, scratch.conversation.c
    compared = _compared()
    # Each of the batch's facts looks its stored fact up by key, once (PostgreSQL: a fenced probe; as
    # NOT EXISTS its planner merged the batch's facts with every stored one, in key order).
    key = and_(f.run_uid == sf.run_uid, f.message_uid == sf.message_uid)
    looked_up = (f.uid, *(f[name] for name in compared))
    joined, stored = plans.outer_probe(d, scratch.fact, fact, key, looked_up, "stored")
    differs = or_(stored.c.uid.is_(None), *(stored.c[name].is_distinct_from(sf[name]) for name in compared))
    fresh = select(sf.run_uid, sf.message_uid, stored.c.uid, literal(1)).select_from(joined).where(differs)
    columns = ["run_uid", "message_uid", "stored_uid", "fresh"]
    connection.execute(insert(scratch.changed).from_select(columns, fresh))
    # The stored facts of the batch's conversations, each conversation's looked up by its key.
    joined, kept = plans.inner_probe(
        d, scratch.conversation, fact, f.conversation_uid == s.uid, (f.run_uid, f.message_uid, f.uid), "kept"
    )
    given = exists(
        select(literal(1)).where(sf.run_uid == kept.c.run_uid, sf.message_uid == kept.c.message_uid)
    )
    gone = (
        select(kept.c.run_uid, kept.c.message_uid, kept.c.uid, literal(0)).select_from(joined).where(~given)
    )
    connection.execute(insert(scratch.changed).from_select(columns, gone))
    scratch.analyze(connection, scratch.changed)


def write_changed(connection: Connection, now: int) -> set[tuple[Grain, date]]:
    """Replace the changed facts (mark_changed) with the batch's; returns the periods of both grains that
    a changed fact left or entered."""
    dialect = connection.dialect.name
    f, sf, c = schema.measure_fact.c, scratch.fact.c, scratch.changed.c
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
    connection.execute(plans.delete_matching(dialect, schema.measure_fact, f.uid, c.stored_uid))
    names = [column.name for column in scratch.fact.c]
    rows = select(*sf, week, day, literal(now)).select_from(new_rows)
    connection.execute(
        insert(schema.measure_fact).from_select([*names, "week_start", "day_start", "measured_at"], rows)
    )
    return periods
