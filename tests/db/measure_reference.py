"""The facts and rates of measure-rates by core's Python functions alone: the reference of the SQL path.

Every conversation's messages, run record, the runs it names with their event counts, steps and (where the
counts do not settle a claim's verdict) their events' kept keys are read with plain SELECTs and handed to
core.answers, core.waits, core.go_on and core.facts, as one batch; runs no conversation names get
core.facts.orphan_fact. `reference_rates` counts those facts with core.counting.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from datetime import date
from typing import Any

from sqlalchemy import Connection, Row, and_, select

from adapters import schema
from adapters.conversations import conversation_page
from adapters.events import event_counts, event_of, event_problems, events_of, steps_of
from adapters.measure_facts import fact_row
from adapters.runs import run_columns, runs_by_uuid
from core.answers import (
    Answer,
    AnswerState,
    ConversationInput,
    completed_answers,
    conversation_input,
    named_runs,
    stored_message,
    verdict_from_counts,
)
from core.counting import EditedWrite, FactTally, OpenTally, OutcomeTally, edited_tallies, rate_counts
from core.events import EventKind
from core.facts import Fact, conversation_facts, orphan_fact
from core.measured_runs import EventCounts, RunRow, run_end, run_start
from core.outcomes import CallOutcome, is_due
from core.periods import Grain
from core.saved import Verdict, nothing_saved
from core.waits import Wait, approval_waits, needs_waits

Key = tuple[int, int]
COMPARED = (
    "conversation_uid",
    "configuration_identifier",
    "skill_identifier",
    "ended_at",
    "week_start",
    "day_start",
    "runs",
    "answer",
    "notice",
    "claim",
    "denial",
    "go_on",
    "problems",
    "go_on_finished_outside",
    "go_on_second_run",
    "go_on_unknown",
    "go_on_unreadable",
)


def _run_row(row: Row[Any], counts: EventCounts) -> RunRow:
    return RunRow(
        uid=int(row.uid),
        uuid=str(row.uuid),
        status=str(row.status),
        configuration=str(row.configuration_identifier or ""),
        ended_at=run_end(int(row.finished_at), int(row.tstamp), int(row.started_at), int(row.crdate)),
        counts=counts,
        started_at=run_start(int(row.started_at), int(row.crdate)),
    )


def _messages_of(connection: Connection, conversation_uids: Sequence[int]) -> Sequence[Any]:
    """The conversations' messages, by conversation and sorting, their payloads whole: core reads them as the
    reference of the SQL path, which reads only the keys it needs (adapters.measure_batch.messages)."""
    m = schema.message.c
    query = (
        select(m.uid, m.conversation, m.sorting, m.role, m.crdate, m.payload)
        .where(m.conversation.in_(list(conversation_uids)))
        .order_by(m.conversation, m.sorting)
    )
    return connection.execute(query).all()


def _conversations(connection: Connection, rows: Sequence[Row[Any]]) -> list[ConversationInput]:
    uids = [int(row.uid) for row in rows]
    messages: dict[int, list[Any]] = defaultdict(list)
    for m in _messages_of(connection, uids):
        messages[int(m.conversation)].append(
            stored_message(int(m.uid), int(m.sorting), str(m.role), int(m.crdate), m.payload)
        )
    return [
        conversation_input(
            int(row.uid),
            str(row.skill_identifier or ""),
            str(row.approval_run_uuid or ""),
            row.run_record,
            messages.get(int(row.uid), []),
        )
        for row in rows
    ]


def _runs(connection: Connection, names: set[str]) -> dict[str, RunRow]:
    by_uuid: dict[str, Row[Any]] = {}
    for row in runs_by_uuid(connection, names):
        by_uuid.setdefault(str(row.uuid), row)
    counts = event_counts(connection, [int(row.uid) for row in by_uuid.values()])
    return {uuid: _run_row(row, counts.get(int(row.uid), EventCounts())) for uuid, row in by_uuid.items()}


def _verdicts(connection: Connection, answers: Sequence[Answer]) -> dict[int, Verdict]:
    claiming = {a.run.uid: a.run for a in answers if a.claims and a.run is not None}
    problems = event_problems(connection, list(claiming))
    verdicts: dict[int, Verdict] = {}
    to_read: list[int] = []
    for uid, run in claiming.items():
        verdict = verdict_from_counts(run.counts, problems.get(uid, 0))
        if verdict is None:
            to_read.append(uid)
        else:
            verdicts[uid] = verdict
    streams: dict[int, list[Any]] = defaultdict(list)
    for e in events_of(connection, to_read):
        streams[int(e.run)].append(event_of(e))
    for uid in to_read:
        verdicts[uid] = nothing_saved(streams.get(uid))
    return verdicts


def _waits(
    connection: Connection, conversations: Sequence[ConversationInput], runs_of: dict[int, list[RunRow]]
) -> dict[int, dict[int, tuple[Wait, ...]]]:
    chosen = [c for c in conversations if needs_waits(c)]
    waiting = {run.uid: run for c in chosen for run in runs_of[c.uid] if run.waited_for_approval}
    steps = steps_of(connection, list(waiting))
    return {
        c.uid: {
            run.uid: approval_waits(steps.get(run.uid, []), run.status)
            for run in runs_of[c.uid]
            if run.waited_for_approval
        }
        for c in chosen
    }


def reference_facts(connection: Connection) -> dict[Key, dict[str, Any]]:
    """Every fact by core's Python functions, as tx_runrecord_measure_fact rows (without measured_at)."""
    rows = conversation_page(connection, after=0, limit=10**9)
    conversations = _conversations(connection, rows)
    names = {conversation.uid: named_runs(conversation) for conversation in conversations}
    runs = _runs(connection, {name for found in names.values() for name in found})
    answers = {c.uid: completed_answers(c, runs) for c in conversations}
    verdicts = _verdicts(connection, [a for found in answers.values() for a in found])
    runs_of = {c.uid: [runs[name] for name in names[c.uid] if name in runs] for c in conversations}
    waits = _waits(connection, conversations, runs_of)
    counted: dict[Key, Fact] = {}
    for c in conversations:
        for fact in conversation_facts(c, runs_of[c.uid], answers[c.uid], verdicts, waits.get(c.uid)):
            counted[(fact.run_uid, fact.message_uid)] = fact
    named = {fact.run_uid for fact in counted.values() if fact.message_uid == 0 and fact.conversation_uid > 0}
    for row in connection.execute(select(*run_columns()).order_by(schema.agentrun.c.uid)):
        if int(row.uid) not in named:
            orphan = orphan_fact(_run_row(row, EventCounts()))
            counted[(orphan.run_uid, 0)] = orphan
    return {key: _compared(fact_row(fact, 0)) for key, fact in counted.items()}


def _compared(row: dict[str, Any]) -> dict[str, Any]:
    return {name: row[name] for name in COMPARED}


def stored_facts(connection: Connection) -> dict[Key, dict[str, Any]]:
    """tx_runrecord_measure_fact as stored, by key (without measured_at)."""
    f = schema.measure_fact
    found: dict[Key, dict[str, Any]] = {}
    for row in connection.execute(select(f)).mappings():
        values = {name: row[name] for name in COMPARED}
        values["week_start"] = _day(values["week_start"])
        values["day_start"] = _day(values["day_start"])
        found[(int(row["run_uid"]), int(row["message_uid"]))] = values
    return found


def _day(value: object) -> date:
    return value if isinstance(value, date) else date.fromisoformat(str(value))


def reference_rates(
    connection: Connection, facts: dict[Key, dict[str, Any]], grain: Grain, *, now: int, window_s: int
) -> dict[tuple[str, date, str, str], tuple[int, int, int]]:
    """The rates of every period core.counting gives for these facts, with the derived runs, their EDITED
    writes and the runs inside their window read with plain SELECTs and counted in Python."""
    read = [fact for fact in facts.values() if fact["answer"] == AnswerState.READ.value and fact["notice"]]
    first_notice = min((fact["ended_at"] for fact in read), default=None)
    period = "week_start" if grain is Grain.WEEK else "day_start"
    fact_tallies = [
        FactTally(
            period=fact[period],
            configuration=fact["configuration_identifier"],
            skill=fact["skill_identifier"],
            answer=fact["answer"],
            notice=bool(fact["notice"]),
            claim=fact["claim"],
            denial=fact["denial"],
            go_on=fact["go_on"],
            problems=fact["problems"],
            runs=fact["runs"],
            facts=1,
            since_first_notice=first_notice is not None and fact["ended_at"] >= first_notice,
            go_on_paths=_paths(fact),
        )
        for fact in facts.values()
    ]
    counts = rate_counts(
        fact_tallies,
        _outcome_tallies(connection, facts, period),
        edited_tallies(edited_writes(connection, grain)),
        _window_open_tallies(connection, facts, period, now=now, window_s=window_s),
    )
    return {
        (metric.value, day, group.kind.value, group.value): (
            count.numerator,
            count.denominator,
            count.excluded,
        )
        for (metric, day, group), count in counts.rows()
    }


def _outcome_tallies(
    connection: Connection, facts: dict[Key, dict[str, Any]], period: str
) -> list[OutcomeTally]:
    """The derived runs per period of the run's end, configuration, skill, outcome and rule version."""
    o = schema.run_outcome.c
    derived = {
        int(run): (str(outcome), str(version or ""))
        for run, outcome, version in connection.execute(select(o.run_uid, o.outcome, o.rule_version))
    }
    counted: Counter[tuple[date, Any, Any, str, str]] = Counter()
    for (run_uid, message_uid), fact in facts.items():
        if message_uid == 0 and run_uid in derived:
            outcome, version = derived[run_uid]
            counted[
                (fact[period], fact["configuration_identifier"], fact["skill_identifier"], outcome, version)
            ] += 1
    return [
        OutcomeTally(day, c, s, outcome, runs, version)
        for (day, c, s, outcome, version), runs in counted.items()
    ]


def _window_open_tallies(
    connection: Connection, facts: dict[Key, dict[str, Any]], period: str, *, now: int, window_s: int
) -> list[OpenTally]:
    """The runs not derived whose last tool_write's window has not closed at `now` (core.outcomes.is_due),
    per period of the run's end, configuration and skill."""
    e, o = schema.agentrun_event.c, schema.run_outcome.c
    last_write: dict[int, int] = {}
    for run, crdate in connection.execute(
        select(e.run, e.crdate).where(e.kind == EventKind.TOOL_WRITE.value)
    ):
        last_write[int(run)] = max(last_write.get(int(run), int(crdate)), int(crdate))
    derived = {int(run) for run in connection.execute(select(o.run_uid)).scalars()}
    counted: Counter[tuple[date, Any, Any]] = Counter()
    for (run_uid, message_uid), fact in facts.items():
        written = last_write.get(run_uid)
        open_run = written is not None and not is_due(written, now, window_s)
        if message_uid == 0 and run_uid not in derived and open_run:
            counted[(fact[period], fact["configuration_identifier"], fact["skill_identifier"])] += 1
    return [OpenTally(day, c, s, runs) for (day, c, s), runs in counted.items()]


def edited_writes(connection: Connection, grain: Grain) -> list[EditedWrite]:
    """Every EDITED run's EDITED writes (a NULL scope for a run without one), in run order: what
    core.counting.edited_tallies counts in Python, read plainly."""
    f, o, w = schema.measure_fact.c, schema.run_outcome.c, schema.write_outcome.c
    edited = CallOutcome.EDITED.value
    run_fact = schema.run_outcome.join(schema.measure_fact, and_(f.run_uid == o.run_uid, f.message_uid == 0))
    joined = run_fact.outerjoin(schema.write_outcome, and_(w.run_uid == o.run_uid, w.outcome == edited))
    period = f.week_start if grain is Grain.WEEK else f.day_start
    groups = (period, f.configuration_identifier, f.skill_identifier)
    columns = (*groups, o.run_uid, w.edit_scope, o.rule_version)
    query = select(*columns).select_from(joined).where(o.outcome == edited).order_by(o.run_uid)
    return [
        EditedWrite(_day(row[0]), row[1], row[2], int(row[3]), row[4], str(row[5] or ""))
        for row in connection.execute(query).all()
    ]


def _paths(fact: dict[str, Any]) -> Any:
    from core.go_on import GoOnPaths

    return GoOnPaths(
        fact["go_on_finished_outside"],
        fact["go_on_second_run"],
        fact["go_on_unknown"],
        fact["go_on_unreadable"],
    )
