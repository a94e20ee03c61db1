"""A conversation as administrators inspect it: what the database holds of it, read into core's values.

The runs of a conversation are those its stored run record, its messages (`runUuid`), its card outcomes and
its `approval_run_uuid` name. Each reader below takes a column as stored and returns what it could read and
one line per part it could not (naming the part and why), so that the rest is still shown. Never its editor.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeGuard

from core import json_text
from core.cards import CardOutcome, parse_card_outcomes
from core.events import Event, EventProblem, PayloadShape
from core.message_time import created_seconds
from core.run_record import RunRecordEntry, UnreadableEntry
from core.run_record_json import parse_run_record
from core.transcript import TranscriptMessage, UnreadableMessage, read_message


@dataclass(frozen=True)
class Run:
    """A run the conversation names (tx_nrllm_agentrun, never its editor)."""

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
    message_times: Mapping[int, int]  # sorting -> the message's time (core.message_time)
    stored_entries: tuple[RunRecordEntry, ...]
    stored_record_readable: bool  # False: no run_record (a row from before it existed) or not readable
    card_outcomes: tuple[CardOutcome, ...]
    runs: tuple[Run, ...]
    events: Mapping[str, tuple[Event, ...]]  # by run uuid
    problems: tuple[str, ...] = field(default=())
    record_stored: bool = False  # the run_record column holds something (rows from before it hold none)
    record_unreadable: tuple[UnreadableEntry, ...] = ()  # the stored record's parts that cannot be read
    unreadable_events: Mapping[str, int] = field(default_factory=dict)  # by run uuid: events not read
    unread_messages: int = 0  # message rows that could not be read, so are not among `messages`

    @property
    def page_id(self) -> int:
        """The page the editor had open (view_context pageId); 0 when none."""
        return _int(self.view_context.get("pageId"))

    @property
    def last_page_id(self) -> int:
        """The page the conversation last worked on (view_context lastPageId, 000_…); 0 when none."""
        return _int(self.view_context.get("lastPageId"))


@dataclass(frozen=True)
class StoredMessage:
    """One tx_nrmcpagent_message row as stored: its sorting, its payload text, its crdate, its uid. The two
    numbers are as the driver returned them: SQLite keeps a text in an INTEGER column.

    With `shape`, the database read the payload (adapters.conversations): `shape` says what it is, and
    `payload` holds only its core.transcript.KEPT_MESSAGE_KEYS where it is an object."""

    sorting: object
    payload: str | None
    crdate: object
    uid: int = 0
    shape: PayloadShape | None = None


def read_messages(
    rows: Iterable[StoredMessage],
) -> tuple[tuple[TranscriptMessage, ...], dict[int, int], tuple[str, ...]]:
    """The readable messages, every message's time by sorting (core.message_time), and a line per message
    that cannot be read."""
    messages: list[TranscriptMessage] = []
    times: dict[int, int] = {}
    problems: list[str] = []
    for row in rows:
        sorting = row.sorting
        if not _is_number(sorting):
            problems.append(f"message uid {row.uid}: sorting is not a number")
            continue
        if _is_number(row.crdate):
            times[sorting] = row.crdate
        else:
            problems.append(f"message {sorting}: crdate is not a number")
        if row.shape in (PayloadShape.ABSENT, PayloadShape.INVALID):
            problems.append(f"message {sorting}: payload is not JSON")
            continue
        if row.shape is not None and row.shape is not PayloadShape.OBJECT:
            problems.append(f"message {sorting}: payload is not an object")
            continue
        try:
            payload = json_text.loads(row.payload or "")
        except (ValueError, RecursionError):  # not JSON, no UTF-8 text, or nested deeper than json reads
            problems.append(f"message {sorting}: payload is not JSON")
            continue
        message = read_message(sorting, payload)
        if isinstance(message, UnreadableMessage):
            problems.append(f"message {sorting}: {message.reason}")
            continue
        messages.append(message)
        # A readable message's own time where its payload names it, as measure-rates reads it: the chat
        # stamps every row's crdate anew at each save of the conversation (core.message_time).
        created = created_seconds(payload.get("createdAt")) if isinstance(payload, Mapping) else None
        if created is not None:
            times[sorting] = created
    return tuple(messages), times, tuple(problems)


def _is_number(value: object) -> TypeGuard[int]:
    """An integer column's value as a number; SQLite keeps a text or a blob there too."""
    return isinstance(value, int) and not isinstance(value, bool)


def read_run(
    uid: int, uuid: str, status: str, configuration: str, started_at: object, finished_at: object
) -> tuple[Run, tuple[str, ...]]:
    """A run with its times, each 0 (unknown) and a line naming it where it is not a number."""
    problems = tuple(
        f"run {uuid}: {name} is not a number"
        for name, value in (("started_at", started_at), ("finished_at", finished_at))
        if not _is_number(value)
    )
    return Run(uid, uuid, status, configuration, _int(started_at), _int(finished_at)), problems


def read_stored_record(text: str | None) -> tuple[tuple[RunRecordEntry, ...], bool, tuple[str, ...]]:
    """The stored run record's entries, whether the column as a whole could be read (it is there and every
    problem is one entry's), and a line per problem."""
    entries, unreadable = parse_run_record(text)
    readable = bool(text and text.strip()) and all(p.index is not None for p in unreadable)
    return entries, readable, tuple(f"run_record{_at(p.index)}: {p.reason}" for p in unreadable)


def read_card_outcomes(text: str | None) -> tuple[tuple[CardOutcome, ...], tuple[str, ...]]:
    """The stored card outcomes and a line per one that cannot be read."""
    outcomes, unreadable = parse_card_outcomes(text)
    return outcomes, tuple(f"card_outcomes{_at(p.index)}: {p.reason}" for p in unreadable)


def read_view_context(text: str | None) -> tuple[Mapping[str, Any], tuple[str, ...]]:
    """The view context object ({} when empty, not JSON or not an object) and a line when it is not JSON."""
    if not text:
        return {}, ()
    try:
        value = json_text.loads(text)
    except (ValueError, RecursionError):  # not JSON, no UTF-8 text, or nested deeper than json reads
        return {}, ("view_context: not JSON",)
    return (value if isinstance(value, dict) else {}), ()


def runs_named(
    stored: Sequence[RunRecordEntry],
    messages: Sequence[TranscriptMessage],
    outcomes: Sequence[CardOutcome],
    approval_run_uuid: str,
) -> list[str]:
    """The uuids of the runs a conversation names: in its run record, its messages, its card outcomes, and
    as the run waiting for its approval; sorted."""
    named = {entry.run_uuid for entry in stored} | {m.run_uuid for m in messages if m.run_uuid}
    named |= {o.run_uuid for o in outcomes if o.run_uuid}
    if approval_run_uuid:
        named.add(approval_run_uuid)
    return sorted(named)


def event_problem(run_uuid: str, problem: EventProblem) -> str:
    """The line naming an event of the run that cannot be read, and why."""
    detail = f" ({problem.detail})" if problem.detail else ""
    return f"event {problem.uid} of run {run_uuid}: {problem.problem.value}{detail}"


def _at(index: int | None) -> str:
    return "" if index is None else f" entry {index}"


def _int(value: object) -> int:
    return value if _is_number(value) else 0
