"""The Conversation page (administrators): a conversation as its reader saw it and as its next turn gets it.

Loading is adapters.conversations' (`load_conversation`), rebuilding and the notes core.record_rebuild's, as
for `runrecord record` and `runrecord notes`; `be_user` is never selected. The functions below `load` turn
what was loaded into rows for the page, calling core for every reading: notice labels and errors per reader
and language (core.error_codes), the entries in words (core.record_text.describe), the stuck rule
(core.health).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd
from sqlalchemy import Engine

from adapters import conversations as conversation_reads
from adapters.conversations import last_page_visible, load_conversation
from adapters.database import reported
from core.answer_readings import AnswerReading, read_answers
from core.card_text import card_line
from core.conversation import Conversation
from core.error_codes import Language, Reader, RenderedError, notice_label, render_error
from core.health import ConversationState, StuckConversation, stuck
from core.notes import Note, Placement, describe_entry, labelled
from core.record_diff import DifferenceKind
from core.record_rebuild import (
    NotesReport,
    RecordReport,
    TurnNotes,
    next_turn_notes,
    rebuild_record,
    turn_notes,
)
from core.record_text import TOOL_RESULT_NOT_READ, describe
from core.run_record import RunRecordEntry
from core.transcript import Role
from dashboard.queries.common import when
from dashboard.queries.readings import Mark, answer_marks, given_mark, step_name

RECENT_PAGE = 25  # conversations the picker lists at a time, newest first

LANGUAGES: tuple[Language, ...] = ("de", "en")

DIFFERENCES = {
    DifferenceKind.ONLY_STORED: "only in the stored record",
    DifferenceKind.ONLY_REBUILT: "only rebuilt from events",
    DifferenceKind.CHANGED: "differs",
}


def recent(engine: Engine, *, before_uid: int | None, limit: int = RECENT_PAGE) -> pd.DataFrame:
    """Conversations with uid below before_uid, newest first: uid, status, skill, messages, last change."""
    with reported(engine, "reading the conversations"), engine.connect() as connection:
        rows = conversation_reads.recent_conversations(connection, before_uid=before_uid, limit=limit)
        total = conversation_reads.count_conversations(connection, deleted_too=False)
    frame = pd.DataFrame(
        [
            {
                "conversation": row.uid,
                "status": row.status,
                "skill": row.skill_identifier,
                "messages": row.message_count,
                "last change (UTC)": when(row.tstamp),
            }
            for row in rows
        ],
        columns=["conversation", "status", "skill", "messages", "last change (UTC)"],
    )
    frame.attrs["total"] = int(total)
    return frame


@dataclass(frozen=True)
class Loaded:
    """A conversation with everything the page reads of it: its record rebuilt, the notes of its next turn,
    runrecord's reading of each completed answer, and the notes each earlier turn was given."""

    conversation: Conversation
    record: RecordReport
    notes: NotesReport
    readings: Mapping[int, AnswerReading]  # by the answer's position
    turns: Mapping[int, TurnNotes]  # by the position of each run's first answer


def load(engine: Engine, uid: int, own_transcript_skills: Collection[str]) -> Loaded:
    """The conversation, its run record rebuilt from the runs' events, the notes its next turn gets (none
    for a conversation whose skill is one of `own_transcript_skills`), the readings of its answers and the
    notes each turn was given."""
    conversation = load_conversation(engine, uid)
    notes = next_turn_notes(
        conversation,
        own_transcript_skills=own_transcript_skills,
        last_page_visible=last_page_visible(engine, conversation),
    )
    readings = {reading.position: reading for reading in read_answers(conversation)}
    turns: dict[int, TurnNotes] = {}
    for position in turn_answers(conversation):
        given = turn_notes(conversation, position, own_transcript_skills=own_transcript_skills)
        if given is not None:
            turns[position] = given
    return Loaded(conversation, rebuild_record(conversation), notes, readings, turns)


def turn_answers(conversation: Conversation) -> list[int]:
    """The first assistant message of each run (and each assistant message that names no run): where the
    notes its turn was given are shown."""
    seen: set[str] = set()
    positions: list[int] = []
    for message in conversation.messages:
        if message.role is not Role.ASSISTANT or message.run_uuid in seen:
            continue
        if message.run_uuid:
            seen.add(message.run_uuid)
        positions.append(message.position)
    return positions


def stuck_now(conversation: Conversation, now: int) -> StuckConversation | None:
    """The conversation when it is stuck in a claimed status now (core.health's rule), else None."""
    found = stuck([ConversationState(conversation.uid, conversation.status, conversation.tstamp)], now)
    return found[0] if found else None


@dataclass(frozen=True)
class ErrorViews:
    """The conversation's failure as an administrator and as an editor read it."""

    code: str
    administrator: RenderedError
    editor: RenderedError


def error_views(conversation: Conversation, language: Language) -> ErrorViews | None:
    """The stored error rendered per reader (001_…, "A failure carries its kind"); None without one."""
    if not conversation.error_code and not conversation.error_message.strip():
        return None
    code, message = conversation.error_code, conversation.error_message
    return ErrorViews(
        code,
        render_error(code, message, Reader.ADMINISTRATOR, language),
        render_error(code, message, Reader.EDITOR, language),
    )


@dataclass(frozen=True)
class Line:
    """One line of a transcript: a message, a card outcome under its answer, or a note for the model."""

    kind: str  # "message", "card", "note"
    role: str  # "user", "assistant", "chat" (the chat's own words)
    position: int
    text: str
    label: str = ""  # a notice's label under an assistant message, in the reader's language
    marks: tuple[Mark, ...] = ()  # runrecord's readings of the message
    given: tuple[str, ...] = ()  # the notes the turn behind an answer was given


def reader_transcript(
    conversation: Conversation, language: Language, readings: Mapping[int, AnswerReading] | None = None
) -> list[Line]:
    """The transcript as the reader saw it: messages, notices and card outcomes in the reader's language, and
    beside each completed answer runrecord's reading of it."""
    cards: dict[int, list[Line]] = {}
    for outcome in conversation.card_outcomes:
        line = Line("card", "chat", outcome.position, card_line(outcome, language))
        cards.setdefault(outcome.position, []).append(line)
    lines: list[Line] = []
    for message in conversation.messages:
        if message.role is Role.TOOL:
            continue
        label = ""
        if message.notice is not None:
            label = notice_label(message.notice, language, message.notice_args)
        reading = (readings or {}).get(message.position)
        marks = answer_marks(reading) if reading is not None else ()
        lines.append(Line("message", message.role.value, message.position, message.content, label, marks))
        lines += cards.pop(message.position, [])
    for position in sorted(cards):
        lines += cards[position]
    return lines


def model_transcript(report: NotesReport, turns: Mapping[int, TurnNotes] | None = None) -> list[Line]:
    """The transcript as the next turn gets it: each message with the notes placed in and between them, and
    beside each earlier turn's answer the notes that turn was given."""
    by_position: dict[int, list[Note]] = {}
    for note in report.notes.notes:
        by_position.setdefault(note.position, []).append(note)
    lines: list[Line] = []
    placed: set[int] = set()
    for message in report.conversation.messages:
        here = by_position.get(message.position, [])
        lines += [_note(n) for n in here if n.placement is Placement.SYNTHETIC_ASSISTANT]
        text = TOOL_RESULT_NOT_READ if message.role is Role.TOOL else message.content
        appended = [n.text for n in here if n.placement is not Placement.SYNTHETIC_ASSISTANT]
        turn = (turns or {}).get(message.position)
        marks = (given_mark(turn),) if turn is not None else ()
        given = tuple(note.text for note in turn.notes.notes) if turn is not None else ()
        lines.append(Line("message", message.role.value, message.position, text, marks=marks, given=given))
        lines += [Line("note", message.role.value, message.position, note) for note in appended]
        placed.add(message.position)
    for position, rest in sorted(by_position.items()):
        if position not in placed:
            lines += [_note(note) for note in rest]
    return lines


def _note(note: Note) -> Line:
    return Line("note", "assistant (added by the chat)", note.position, note.text)


def written_in_notes(report: NotesReport) -> list[str]:
    """The writes the notes tell the model about, one per run-record entry with writes whose note was kept:
    "pages:1 (turn)", "pages:1 (continuation 2)"."""
    sent = {note.text for note in report.notes.notes}
    found: list[str] = []
    for entry in report.conversation.stored_entries:
        if entry.writes and labelled(describe_entry(entry)) in sent:
            found += [f"{write.record} ({step_name(entry.segment)})" for write in entry.writes]
    return found


def record_table(report: RecordReport, *, every: bool = False) -> pd.DataFrame:
    """The stored entries beside the rebuilt ones, keyed by run and segment, differences marked: only the
    entries that differ, or `every` entry."""
    stored = {(e.run_uuid, e.segment): e for e in report.conversation.stored_entries}
    rebuilt = {(e.run_uuid, e.segment): e for e in report.rebuilt}
    marks = {(d.run_uuid, d.segment): d for d in report.differences}
    keys = sorted(set(stored) | set(rebuilt), key=lambda key: _order(key, stored, rebuilt))
    rows: list[dict[str, Any]] = []
    for key in keys:
        difference = marks.get(key)
        if difference is None and not every:
            continue
        mark = ""
        if difference is not None:
            mark = DIFFERENCES[difference.kind]
            if difference.kind is DifferenceKind.CHANGED:
                mark += ": " + ", ".join(difference.fields)
        rows.append(
            {
                "run": key[0][:8],
                "segment": key[1],
                "position": _position(stored.get(key) or rebuilt.get(key)),
                "stored": entry_words(stored.get(key))
                if report.conversation.stored_record_readable
                else "(none readable)",
                "rebuilt from events": entry_words(rebuilt.get(key)),
                "difference": mark,
            }
        )
    return pd.DataFrame(
        rows, columns=["run", "segment", "position", "stored", "rebuilt from events", "difference"]
    )


def _order(
    key: tuple[str, int],
    stored: dict[tuple[str, int], RunRecordEntry],
    rebuilt: dict[tuple[str, int], RunRecordEntry],
) -> tuple[int, int, str, int]:
    entry = rebuilt.get(key) or stored[key]
    return (entry.at, entry.position, key[0], key[1])


def _position(entry: RunRecordEntry | None) -> int | None:
    return None if entry is None else entry.position


def entry_words(entry: RunRecordEntry | None) -> str:
    """A record table's cell: how the entry ended, then the entry in a few words (core.record_text); "—" for
    none."""
    if entry is None:
        return "—"
    described = describe(entry)
    # A waiting entry that did nothing but wait reads "waiting: update_page_seo", not "waiting: waiting: …".
    said = f"{entry.ended.value}: "
    return described if described.startswith(said) else said + described


def runs_table(conversation: Conversation) -> pd.DataFrame:
    """The runs the conversation names: short uuid, configuration, status, start (UTC)."""
    return pd.DataFrame(
        [
            {
                "run": run.uuid[:8],
                "uuid": run.uuid,
                "configuration": run.configuration,
                "status": run.status,
                "started (UTC)": when(run.started_at),
            }
            for run in conversation.runs
        ],
        columns=["run", "uuid", "configuration", "status", "started (UTC)"],
    )


def problems(conversation: Conversation) -> Sequence[str]:
    """The rows of the conversation that could not be read, one line each (the rest is shown)."""
    return conversation.problems
