"""One run in full: its segments with their run-record entries and step readings, its writes with outcomes.

The readings are core's (core.refused, core.run_record); each write shows its stored outcome, reason and
edit_scope and the retained sys_history rows of its record around its window, marked by the part
core.outcomes.classify_write gives them today. Only the keys of history_data are read (in SQL, by
adapters.derivation), never its values or sys_history's `userid`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Connection, Engine, or_, select

from adapters import derivation as outcome_queries
from adapters import schema
from adapters.database import reported
from core.cards import CardOutcome
from core.events import Event, Segment, split_segments, write_completeness, write_target
from core.events import WriteTarget as Target
from core.outcomes import SAME_SAVE_S, Action, HistoryRow, Presence, Write, classify_write
from core.refused import Opening, SegmentContext, StepReading, opening_of, read_segment
from core.run_record import DISPLAY_TOOLS, CardReading, RunRecordEntry, build_entries, read_cards
from dashboard.queries.common import when
from dashboard.queries.runs import ended, events_of, observed_later
from jobs.conversation_record import card_readings, load_conversation, rebuild_record

ACTIONS = {
    Action.ADD: "add",
    Action.MODIFY: "modify",
    Action.MOVE: "move",
    Action.DELETE: "delete",
    Action.UNDELETE: "undelete",
    Action.STAGE: "stage change",
    Action.PUBLISH: "publish",
}

OPENED_BY = {
    Opening.TURN: "the turn",
    Opening.APPROVED: "an approval",
    Opening.DECLINED: "a declined card",
    Opening.INPUT: "an answer to a question",
}


class RunNotFoundError(LookupError):
    """No run with that uuid."""


@dataclass(frozen=True)
class SegmentView:
    """One segment: what opened it, its run-record entry, its tool steps as the activity list reads them."""

    index: int
    opened_by: str
    entry: RunRecordEntry
    steps: list[dict[str, Any]]


@dataclass(frozen=True)
class WriteView:
    """One tool_write of the run: its target, its stored outcome, and the history rows around its window."""

    event_uid: int
    record: str
    written_at: int
    completeness: str
    outcome: str
    reason: str
    edit_scope: str
    first_change_after_s: int | None
    rule_version: str
    history: list[dict[str, Any]]
    note: str


@dataclass(frozen=True)
class RunDetail:
    uid: int
    uuid: str
    configuration: str
    status: str
    ended: str
    started_at: int
    finished_at: int
    outcome: str  # the observed outcome, or what stands in its place
    window_s: int
    conversation: int | None  # shown to administrators only
    segments: list[SegmentView]
    writes: list[WriteView]
    problems: list[str] = field(default_factory=list)


def run_detail(engine: Engine, uuid: str, tables: frozenset[str], *, now: int, window_s: int) -> RunDetail:
    """One run: segments with record entries and step readings, writes with outcomes and history rows.

    The entries are those `runrecord record` rebuilds for the run's conversation (its card outcomes and its
    transcript positions decide them); a run no conversation names gets them from its events alone.
    """
    r = schema.agentrun.c
    with reported(engine, "reading the run"), engine.connect() as connection:
        run = connection.execute(
            select(
                r.uid,
                r.uuid,
                r.status,
                r.termination_reason,
                r.configuration_identifier,
                r.started_at,
                r.finished_at,
            ).where(r.uuid == uuid)
        ).first()
        if run is None:
            raise RunNotFoundError(uuid)
        by_run, unreadable = events_of(connection, [run.uid])
        conversation_uid = _conversation_of(connection, uuid, tables)
        run_row, stored = _stored(connection, run.uid, tables)
    segments = split_segments(by_run.get(run.uid, ()))
    entries, cards, outcomes, problems = _entries(engine, conversation_uid, uuid, segments, run)
    used_window = int(run_row["window_s"]) if run_row and run_row["window_s"] else window_s
    views = [_segment_view(s, entries[s.index], cards.get(s.index)) for s in segments]
    with reported(engine, "reading the run's writes"), engine.connect() as connection:
        writes = _write_views(connection, segments, stored, tables, outcomes, used_window, now)
    if unreadable:
        problems.append(f"{unreadable} events of this run cannot be read and are left out")
    last_write = max((w.written_at for w in writes), default=None)
    return RunDetail(
        uid=run.uid,
        uuid=run.uuid,
        configuration=run.configuration_identifier,
        status=run.status,
        ended=ended(run.status, run.termination_reason),
        started_at=run.started_at,
        finished_at=run.finished_at,
        outcome=run_row["outcome"] if run_row else observed_later(last_write, now, used_window),
        window_s=used_window,
        conversation=conversation_uid,
        segments=views,
        writes=writes,
        problems=problems,
    )


def _conversation_of(connection: Connection, uuid: str, tables: frozenset[str]) -> int | None:
    """The conversation that names the run: as its waiting run, in a card outcome or a run-record entry."""
    if schema.conversation.name not in tables:
        return None
    c = schema.conversation.c
    pattern = f'%"{uuid}"%'  # the page passes only a uuid that matched the uuid pattern
    found = connection.execute(
        select(c.uid)
        .where(or_(c.approval_run_uuid == uuid, c.card_outcomes.like(pattern), c.run_record.like(pattern)))
        .order_by(c.uid)
        .limit(1)
    ).scalar()
    return None if found is None else int(found)


def _entries(
    engine: Engine, conversation_uid: int | None, uuid: str, segments: Sequence[Segment], run: Any
) -> tuple[dict[int, RunRecordEntry], dict[int, CardReading], tuple[CardOutcome, ...], list[str]]:
    """The run's entry and card reading per segment, its card outcomes, and what could not be read.

    The activity list takes a card's answer from the reading its entry was built with (core.run_record
    read_cards: by the card's position and tool), so the two cannot disagree.
    """
    entries: dict[int, RunRecordEntry] = {}
    cards: dict[int, CardReading] = {}
    outcomes: tuple[CardOutcome, ...] = ()
    problems: list[str] = []
    if conversation_uid is not None:
        conversation = load_conversation(engine, conversation_uid)
        outcomes = tuple(o for o in conversation.card_outcomes if o.run_uuid == uuid)
        entries = {e.segment: e for e in rebuild_record(conversation).rebuilt if e.run_uuid == uuid}
        named = next((named for named in conversation.runs if named.uuid == uuid), None)
        if named is not None:
            cards = {i: card for i, card in card_readings(conversation, named).items() if i in entries}
        problems = [p for p in conversation.problems if p.startswith("card_outcomes") or uuid in p]
        problems = [f"its conversation {conversation_uid}: {p}" for p in problems]
    missing = {segment.index for segment in segments if segment.index not in entries}
    if missing:
        built = build_entries(
            uuid, segments, status=run.status, position=0, card_outcomes=outcomes, at=run.started_at
        )
        entries |= {entry.segment: entry for entry in built if entry.segment in missing}
        alone = read_cards(uuid, segments, outcomes, position=0)
        cards |= {index: card for index, card in alone.items() if index in missing}
    return entries, cards, outcomes, problems


def _stored(
    connection: Connection, run_uid: int, tables: frozenset[str]
) -> tuple[dict[str, Any] | None, dict[int, dict[str, Any]]]:
    run_row: dict[str, Any] | None = None
    writes: dict[int, dict[str, Any]] = {}
    if schema.run_outcome.name in tables:
        o = schema.run_outcome.c
        row = connection.execute(select(o.outcome, o.window_s).where(o.run_uid == run_uid)).first()
        run_row = None if row is None else {"outcome": row.outcome, "window_s": row.window_s}
    if schema.write_outcome.name in tables:
        w = schema.write_outcome.c
        query = select(
            w.event_uid, w.outcome, w.reason, w.edit_scope, w.first_change_after_s, w.rule_version
        ).where(w.run_uid == run_uid)
        writes = {int(row.event_uid): dict(row._mapping) for row in connection.execute(query)}
    return run_row, writes


def _segment_view(segment: Segment, entry: RunRecordEntry, card: CardReading | None) -> SegmentView:
    opening = opening_of(segment)
    readings = read_segment(segment, previous=SegmentContext(card.answer if card is not None else ""))
    return SegmentView(segment.index, OPENED_BY[opening], entry, [_step(reading) for reading in readings])


def _step(reading: StepReading) -> dict[str, Any]:
    shown = reading.label or "(no label: the call ran)"
    if reading.ask_administrator:
        shown += "; asks to have an administrator allow it again"
    if reading.tool in DISPLAY_TOOLS:
        counted = "no (drives the chat's display)"
    elif not reading.in_record:
        counted = "no"
    else:
        counted = "yes, as failed" if reading.failed else "yes"
    return {
        "round": reading.step.round,
        "tool": reading.tool,
        "ms": float(reading.step.duration_ms),
        "reading": reading.reading.value,
        "activity list shows": shown,
        "in the run record": counted,
    }


def _write_views(
    connection: Connection,
    segments: Sequence[Segment],
    stored: dict[int, dict[str, Any]],
    tables: frozenset[str],
    outcomes: Sequence[CardOutcome],
    window_s: int,
    now: int,
) -> list[WriteView]:
    writes = [event for segment in segments for event in segment.writes]
    if not writes:
        return []
    has_history = schema.sys_history.name in tables
    oldest = outcome_queries.oldest_retained_tstamp(connection) if has_history else None
    catalog = outcome_queries.TableCatalog(connection)
    targets = [(write_target(event), event.crdate) for event in writes]
    own = [(target, at) for target, at in targets if isinstance(target, Target)]
    views = []
    for event, (target, _) in zip(writes, targets, strict=True):
        saved = stored.get(event.uid, {})
        outcome = str(saved.get("outcome") or "")
        history: list[dict[str, Any]] = []
        note = "" if saved else observed_later(event.crdate, now, window_s)
        if isinstance(target, Target):
            record = target.record
            if has_history:
                history, today = _history(
                    connection, event, target, catalog, oldest, outcomes, own, tables, window_s
                )
                if saved and today != outcome:
                    note = (
                        f"the history retained today reads {today}: rows were trimmed or changed after the "
                        "outcome was derived, and the stored outcome is final"
                    )
        else:
            record = f"unreadable target ({target.reason})"
        views.append(
            WriteView(
                event_uid=event.uid,
                record=record,
                written_at=event.crdate,
                completeness=write_completeness(event).value,
                outcome=outcome or "—",
                reason=str(saved.get("reason") or ""),
                edit_scope=str(saved.get("edit_scope") or ""),
                first_change_after_s=saved.get("first_change_after_s"),
                rule_version=str(saved.get("rule_version") or ""),
                history=history,
                note=note,
            )
        )
    return views


def _history(
    connection: Connection,
    event: Event,
    target: Target,
    catalog: outcome_queries.TableCatalog,
    oldest: int | None,
    outcomes: Sequence[CardOutcome],
    own: Sequence[tuple[Target, int]],
    tables: frozenset[str],
    window_s: int,
) -> tuple[list[dict[str, Any]], str]:
    """The record's retained history rows around the write, each marked by the part core gives it today."""
    t = event.crdate
    closes = t + window_s
    rows = outcome_queries.history_rows(
        connection, {target.table: [target.uid]}, keys_from=t - SAME_SAVE_S, keys_to=closes
    ).get((target.table, target.uid), [])
    table = catalog.get(target.table)
    if table is None:
        presence = Presence.TABLE_MISSING
    else:
        presence = outcome_queries.presence(connection, table, [target.uid])[target.uid]
    ai_times = _ai_write_times(connection, target, t, closes, own, tables)
    fields = next((frozenset(o.fields) for o in outcomes if o.record == target.record and o.fields), None)
    write = Write(event.uid, target.table, target.uid, t, fields)
    decided = classify_write(write, rows, ai_times, presence, oldest, window_s)
    evidence = decided.decided_by[0] if decided.decided_by else None
    deciding = set(decided.decided_by[1:])
    ordered = sorted(rows, key=lambda row: (row.tstamp, row.uid))
    shown = [row for row in ordered if _around(row, t, closes, evidence)]
    marked = [_history_row(row, t, closes, deciding, evidence, ai_times) for row in shown]
    return marked, decided.outcome.value


def _ai_write_times(
    connection: Connection,
    target: Target,
    t: int,
    closes: int,
    own: Sequence[tuple[Target, int]],
    tables: frozenset[str],
) -> list[int]:
    """When runs wrote the record in the window: this run's and every derived run's (DESIGN.md rule 4)."""
    times = {at for written, at in own if written == target}
    if schema.write_outcome.name in tables:
        w = schema.write_outcome.c
        query = select(w.written_at).where(
            w.tablename == target.table,
            w.recuid == target.uid,
            w.written_at.between(t - SAME_SAVE_S, closes),
        )
        times |= {int(at) for at in connection.execute(query).scalars()}
    return sorted(times)


def _around(row: HistoryRow, t: int, closes: int, evidence: int | None) -> bool:
    in_window = t - SAME_SAVE_S <= row.tstamp <= closes
    later_delete = row.tstamp > closes and row.action is Action.DELETE
    return row.uid == evidence or in_window or later_delete


def _history_row(
    row: HistoryRow, t: int, closes: int, deciding: set[int], evidence: int | None, ai_times: Sequence[int]
) -> dict[str, Any]:
    if row.uid == evidence:
        part = "evidence: the write's own row is retained"
    elif row.uid in deciding:
        part = "decided the outcome"
    elif any(abs(row.tstamp - at) <= SAME_SAVE_S for at in ai_times):
        part = "an AI write, not a human change"
    elif row.tstamp > closes:
        part = "after the window"
    elif row.tstamp > t:
        part = "in the window, not a modification"
    else:
        part = "the write's own save"
    action = row.action
    return {
        "history uid": row.uid,
        "when (UTC)": when(row.tstamp, seconds=True),
        "after the write": duration(row.tstamp - t),
        "action": ACTIONS[action] if action is not None else f"action {row.actiontype}",
        "fields": ", ".join(sorted(row.fields)) if row.fields else "",
        "part": part,
    }


def duration(seconds: int) -> str:
    """A span of seconds as the page shows it: seconds, hours or days."""
    if abs(seconds) < 120:
        return f"{seconds} s"
    if abs(seconds) < 2 * 86_400:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86_400:.1f} days"
