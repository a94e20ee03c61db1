"""A conversation as administrators inspect it: the run record rebuilt from events beside the stored one.

The runs of a conversation are those its stored run record, its messages (`runUuid`) and its
`approval_run_uuid` name. Everything is read with plain SELECTs; `be_user` is never selected, nor tool
arguments or results (core.events keeps only what the privacy filter keeps at every level). A row that cannot
be read is reported as one line naming the row and why, and the rest is still shown.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Engine, select

from adapters import schema
from adapters.database import RunrecordError, reported
from adapters.events import event_of, events_of
from core.cards import CardOutcome, parse_card_outcomes
from core.events import Event, EventProblem, Segment, split_segments
from core.notes import NotesResult, notes_for_conversation, page_prompt_line
from core.run_record import (
    CardReading,
    EntryDifference,
    RunRecordEntry,
    UndecidedBy,
    build_entries,
    diff,
    keep_newest,
    parse_run_record,
    read_cards,
)
from core.transcript import Role, TranscriptMessage, UnreadableMessage, read_message

WAITING_STATUSES = frozenset({"waiting_for_approval", "waiting_for_input"})


class ConversationNotFoundError(RunrecordError):
    """No conversation with that uid."""


@dataclass(frozen=True)
class Run:
    uid: int
    uuid: str
    status: str
    configuration: str
    started_at: int
    finished_at: int


@dataclass(frozen=True)
class Conversation:
    """What the database holds of one conversation (never its editor)."""

    uid: int
    status: str
    skill: str
    view_context: Mapping[str, Any]
    error_code: str
    error_message: str
    approval_run_uuid: str
    tstamp: int
    messages: tuple[TranscriptMessage, ...]
    message_times: Mapping[int, int]  # sorting -> crdate
    stored_entries: tuple[RunRecordEntry, ...]
    stored_record_readable: bool  # False: no run_record (a row from before it existed) or not readable
    card_outcomes: tuple[CardOutcome, ...]
    runs: tuple[Run, ...]
    events: Mapping[str, tuple[Event, ...]]  # by run uuid
    problems: tuple[str, ...] = field(default=())


@dataclass(frozen=True)
class RecordReport:
    conversation: Conversation
    rebuilt: tuple[RunRecordEntry, ...]
    differences: tuple[EntryDifference, ...]


def load_conversation(engine: Engine, uid: int) -> Conversation:
    """Read one conversation, its messages, the runs it names and their events."""
    c = schema.conversation.c
    columns = (
        c.uid,
        c.status,
        c.skill_identifier,
        c.view_context,
        c.error_code,
        c.error_message,
        c.approval_run_uuid,
        c.run_record,
        c.card_outcomes,
        c.tstamp,
    )
    with reported(engine, "reading the conversation"), engine.connect() as connection:
        row = connection.execute(select(*columns).where(c.uid == uid)).one_or_none()
        if row is None:
            raise ConversationNotFoundError(f"conversation {uid} does not exist")
        m = schema.message.c
        message_rows = connection.execute(
            select(m.sorting, m.payload, m.crdate).where(m.conversation == uid).order_by(m.sorting)
        ).all()
        problems: list[str] = []
        messages, times = _messages(message_rows, problems)
        stored, record_problems = parse_run_record(row.run_record)
        problems += [f"run_record{_at(p.index)}: {p.reason}" for p in record_problems]
        outcomes, outcome_problems = parse_card_outcomes(row.card_outcomes)
        problems += [f"card_outcomes{_at(p.index)}: {p.reason}" for p in outcome_problems]
        named = {entry.run_uuid for entry in stored} | {m.run_uuid for m in messages if m.run_uuid}
        named |= {o.run_uuid for o in outcomes if o.run_uuid}
        if row.approval_run_uuid:
            named.add(row.approval_run_uuid)
        runs = _runs(connection, sorted(named))
        events = _events(connection, runs, problems)
    return Conversation(
        uid=row.uid,
        status=row.status,
        skill=row.skill_identifier,
        view_context=_view_context(row.view_context, problems),
        error_code=row.error_code,
        error_message=row.error_message or "",
        approval_run_uuid=row.approval_run_uuid,
        tstamp=row.tstamp,
        messages=messages,
        message_times=times,
        stored_entries=stored,
        stored_record_readable=bool(row.run_record and row.run_record.strip())
        and all(p.index is not None for p in record_problems),
        card_outcomes=outcomes,
        runs=runs,
        events=events,
        problems=tuple(problems),
    )


def rebuild_record(conversation: Conversation) -> RecordReport:
    """The run record rebuilt from the runs' events, and where it differs from the stored one."""
    rebuilt: list[RunRecordEntry] = []
    for run in conversation.runs:
        rebuilt += _run_entries(conversation, run)
    rebuilt.sort(key=lambda entry: (entry.at, entry.run_uuid, entry.segment))
    entries = keep_newest(rebuilt)
    differences = diff(conversation.stored_entries, entries) if conversation.stored_record_readable else ()
    return RecordReport(conversation, entries, differences)


def _run_entries(conversation: Conversation, run: Run) -> tuple[RunRecordEntry, ...]:
    segments = split_segments(conversation.events.get(run.uuid, ()))
    first, positions = _positions(conversation, run, segments)
    return build_entries(
        run.uuid,
        segments,
        status=run.status,
        position=first,
        positions=positions,
        card_outcomes=conversation.card_outcomes,
        left_by=_left_by(conversation, run, segments[-1].returned_at if segments else run.started_at),
        at=run.finished_at or run.started_at,
    )


def card_readings(conversation: Conversation, run: Run) -> dict[int, CardReading]:
    """The cards the run's decisions answered, per continuation, read as the rebuilt record reads them."""
    segments = split_segments(conversation.events.get(run.uuid, ()))
    first, positions = _positions(conversation, run, segments)
    return read_cards(run.uuid, segments, conversation.card_outcomes, position=first, positions=positions)


def _positions(
    conversation: Conversation, run: Run, segments: Sequence[Segment]
) -> tuple[int, dict[int, int]]:
    """The transcript position of the run's turn and of each segment: its answer's, else where it would be."""
    answered = {
        m.segment: m.position
        for m in conversation.messages
        if m.run_uuid == run.uuid and m.segment is not None and m.role is Role.ASSISTANT
    }
    positions = {
        segment.index: answered.get(segment.index, _next_position(conversation, segment.returned_at))
        for segment in segments
    }
    return positions.get(0, _next_position(conversation, run.started_at)), positions


def _next_position(conversation: Conversation, at: int) -> int:
    """Where the answer of a segment that returned at `at` would stand: before the first later message."""
    later = [sorting for sorting, created in conversation.message_times.items() if created > at]
    # After the last message: the next sorting (sortings need not start at 0 or be dense).
    return min(later, default=max(conversation.message_times, default=-1) + 1)


def _left_by(conversation: Conversation, run: Run, returned_at: int) -> UndecidedBy | None:
    """A waiting run left by a new message of the editor, or a run cancelled by the end of its tour (core
    records a card or question left undecided only when the run waited for one)."""
    if run.status == "cancelled":
        return UndecidedBy.TOUR_ENDED
    if run.status in WAITING_STATUSES:
        later_user = any(
            m.role is Role.USER and conversation.message_times.get(m.position, 0) > returned_at
            for m in conversation.messages
        )
        return UndecidedBy.NEW_MESSAGE if later_user else None
    return None


def _messages(
    rows: Sequence[Any], problems: list[str]
) -> tuple[tuple[TranscriptMessage, ...], dict[int, int]]:
    messages: list[TranscriptMessage] = []
    times: dict[int, int] = {}
    for row in rows:
        times[row.sorting] = row.crdate
        try:
            payload = json.loads(row.payload or "")
        except json.JSONDecodeError:
            problems.append(f"message {row.sorting}: payload is not JSON")
            continue
        message = read_message(row.sorting, payload)
        if isinstance(message, UnreadableMessage):
            problems.append(f"message {row.sorting}: {message.reason}")
        else:
            messages.append(message)
    return tuple(messages), times


def _runs(connection: Any, uuids: Sequence[str]) -> tuple[Run, ...]:
    if not uuids:
        return ()
    r = schema.agentrun.c
    rows = connection.execute(
        select(r.uid, r.uuid, r.status, r.configuration_identifier, r.started_at, r.finished_at)
        .where(r.uuid.in_(uuids))
        .order_by(r.started_at, r.uid)
    ).all()
    return tuple(
        Run(row.uid, row.uuid, row.status, row.configuration_identifier, row.started_at, row.finished_at)
        for row in rows
    )


def _events(connection: Any, runs: Sequence[Run], problems: list[str]) -> dict[str, tuple[Event, ...]]:
    if not runs:
        return {}
    by_uid = {run.uid: run.uuid for run in runs}
    rows = events_of(connection, list(by_uid))  # only the payload keys a rule may read
    events: dict[str, list[Event]] = {run.uuid: [] for run in runs}
    for row in rows:
        parsed = event_of(row)
        if isinstance(parsed, EventProblem):
            detail = f" ({parsed.detail})" if parsed.detail else ""
            problems.append(f"event {parsed.uid} of run {by_uid[row.run]}: {parsed.problem.value}{detail}")
        else:
            events[by_uid[row.run]].append(parsed)
    return {uuid: tuple(found) for uuid, found in events.items()}


def _view_context(text: str, problems: list[str]) -> Mapping[str, Any]:
    if not text:
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        problems.append("view_context: not JSON")
        return {}
    return value if isinstance(value, dict) else {}


def _at(index: int | None) -> str:
    return "" if index is None else f" entry {index}"


@dataclass(frozen=True)
class NotesReport:
    conversation: Conversation
    notes: NotesResult
    page_line: str


def next_turn_notes(
    engine: Engine, conversation: Conversation, *, own_transcript_skills: Collection[str]
) -> NotesReport:
    """The notes the next turn gets: built from the stored run record and card outcomes, as the chat does;
    none for a conversation whose skill is one of `own_transcript_skills` (the setting of that name)."""
    notes = notes_for_conversation(
        conversation.skill,
        own_transcript_skills,
        conversation.messages,
        conversation.stored_entries,
        conversation.card_outcomes,
    )
    page_id = _int(conversation.view_context.get("pageId"))
    last_page_id = _int(conversation.view_context.get("lastPageId"))
    visible = last_page_id > 0 and _page_visible(engine, last_page_id)
    return NotesReport(conversation, notes, page_prompt_line(page_id, last_page_id or None, visible))


def _page_visible(engine: Engine, uid: int) -> bool:
    # Whether this editor may see the page is the backend's to say, and runrecord reads no editor; a page
    # that is gone or deleted no reader can see, so only then is it not named.
    p = schema.pages.c
    with reported(engine, "reading the last page"), engine.connect() as connection:
        deleted = connection.execute(select(p.deleted).where(p.uid == uid)).scalar_one_or_none()
    return deleted == 0


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
