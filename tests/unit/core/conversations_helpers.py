"""A conversation as core.conversation holds it, written in a line: conversation(messages=..., runs=...)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from core.cards import CardOutcome
from core.conversation import Conversation, Run
from core.events import Event
from core.run_record import RunRecordEntry
from core.transcript import Role, TranscriptMessage
from tests.unit.core.events_helpers import START

RUN_UUID = "5f0c6e1a-2222-4c4c-9a9a-000000000001"


def user(position: int, text: str = "Setze einen neuen Seitentitel.") -> TranscriptMessage:
    return TranscriptMessage(position, Role.USER, text)


def assistant(position: int, text: str = "Erledigt.", *, run_uuid: str = RUN_UUID, segment: int = 0):
    return TranscriptMessage(position, Role.ASSISTANT, text, run_uuid=run_uuid, segment=segment)


def a_run(status: str = "completed", *, uuid: str = RUN_UUID, uid: int = 1, started_at: int = START) -> Run:
    return Run(uid, uuid, status, "seo-assistant", started_at, started_at + 60)


def conversation(
    *,
    messages: Sequence[TranscriptMessage] = (),
    times: Mapping[int, int] | None = None,
    stored: Sequence[RunRecordEntry] = (),
    readable: bool = True,
    outcomes: Sequence[CardOutcome] = (),
    runs: Sequence[Run] = (),
    events: Mapping[str, tuple[Event, ...]] | None = None,
    view_context: Mapping[str, Any] | None = None,
    skill: str = "",
    problems: Sequence[str] = (),
    record_stored: bool = False,
    unreadable_events: Mapping[str, int] | None = None,
    unread_messages: int = 0,
) -> Conversation:
    """A conversation; each message is stamped a minute after START unless `times` says otherwise."""
    return Conversation(
        uid=7,
        status="idle",
        skill=skill,
        view_context=view_context or {},
        error_code="",
        error_message="",
        approval_run_uuid="",
        tstamp=START,
        messages=tuple(messages),
        message_times=dict(times) if times is not None else {m.position: START + 60 for m in messages},
        stored_entries=tuple(stored),
        stored_record_readable=readable,
        card_outcomes=tuple(outcomes),
        runs=tuple(runs),
        events=dict(events or {}),
        problems=tuple(problems),
        record_stored=record_stored,
        unreadable_events=dict(unreadable_events or {}),
        unread_messages=unread_messages,
    )
