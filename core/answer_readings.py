"""runrecord's reading of each completed answer of one conversation, shown beside the answer (001_…, 000_…).

The rules are the ones the rates count with, applied to one conversation as it is loaded with its runs'
events: core.answers picks each run's completed answer and reads its claim and its denial, core.saved reads
from the run's events whether it wrote, and core.counting.AGREEMENT_COUNTS says whether the nothingSaved
notice the chat stored agrees with that recomputation. An answer is marked exactly when the
claimed_unwritten, denial and notice_agreement rates count it so.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from core import answers
from core.answers import (
    Answer,
    ClaimState,
    ConversationInput,
    DenialState,
    claim_state,
    completed_answers,
    denial_state,
    earlier_write,
    recorded_writes_before,
    verdict_from_record,
)
from core.conversation import Conversation, Run
from core.counting import AGREEMENT_COUNTS, DENOMINATOR, NUMERATOR
from core.error_codes import Notice
from core.events import OPENERS, Event, EventKind
from core.measured_runs import EventCounts, RunRow
from core.record_rebuild import rebuild_record
from core.run_record import RunRecordEntry
from core.saved import Verdict, nothing_saved


class NoticeReading(StrEnum):
    """The stored nothingSaved notice against the recomputation."""

    AGREES = "agrees"
    UNFOUNDED = "unfounded"  # stored, and the recomputation gives none: no claim word, or the run wrote
    MISSING = "missing"  # the answer claims a change its run did not write, and no notice is stored
    CANNOT_TELL = "cannot_tell"  # the run's events are missing or cannot be read


@dataclass(frozen=True)
class AnswerReading:
    """A completed answer as runrecord reads it: its claim, its stored notice, its denial of earlier work."""

    position: int
    run_uuid: str
    claim: ClaimState
    notice_stored: bool
    denial: DenialState
    denied: tuple[RunRecordEntry, ...] = ()  # the entries whose writes a denying answer denies

    @property
    def notice(self) -> NoticeReading:
        """Agrees, stored without cause, missing, or cannot tell (AGREEMENT_COUNTS)."""
        counted = AGREEMENT_COUNTS[(self.claim, self.notice_stored)]
        if counted == NUMERATOR:
            return NoticeReading.AGREES
        if counted == DENOMINATOR:
            return NoticeReading.UNFOUNDED if self.notice_stored else NoticeReading.MISSING
        return NoticeReading.CANNOT_TELL

    @property
    def denied_writes(self) -> int:
        """How many recorded writes the answer denies."""
        return sum(len(entry.writes) for entry in self.denied)


def read_answers(conversation: Conversation) -> tuple[AnswerReading, ...]:
    """Each run's completed answer with its claim, notice and denial read as the rates read them."""
    given = conversation_input(conversation)
    runs = {run.uuid: run_row(run, conversation) for run in conversation.runs}
    readings: list[AnswerReading] = []
    for answer in completed_answers(given, runs):
        claim = claim_state(answer, _verdict(conversation, given, answer))
        denial = denial_state(answer, earlier_write(given, answer, list(runs.values())))
        denied: tuple[RunRecordEntry, ...] = ()
        if denial is DenialState.DENIES:
            # The entries the denial rule read: the stored record's, or for a conversation from before the
            # chat stored one, the record rebuilt from its runs' events.
            entries = (
                conversation.stored_entries if given.record_stored else rebuild_record(conversation).rebuilt
            )
            denied = recorded_writes_before(entries, answer.text)
        text = answer.text
        notice = text.notice is Notice.NOTHING_SAVED
        readings.append(AnswerReading(text.position, text.run_uuid, claim, notice, denial, denied))
    return tuple(readings)


def conversation_input(conversation: Conversation) -> ConversationInput:
    """The conversation as measure-rates reads it: its readable messages, its stored run record."""
    messages = tuple(
        answers.StoredMessage(
            0,
            message.position,
            message.role.value,
            conversation.message_times.get(message.position, 0),
            message,
        )
        for message in conversation.messages
    )
    return ConversationInput(
        conversation.uid,
        conversation.skill or "",
        conversation.approval_run_uuid or "",
        messages,
        conversation.stored_entries,
        conversation.record_unreadable,
        conversation.record_stored,
    )


def run_row(run: Run, conversation: Conversation) -> RunRow:
    """A run with its events counted as the database counts them for measure-rates (adapters.events)."""
    events = conversation.events.get(run.uuid, ())
    unreadable = conversation.unreadable_events.get(run.uuid, 0)
    ended = run.finished_at or run.started_at
    return RunRow(run.uid, run.uuid, run.status, run.configuration, ended, event_counts(events, unreadable))


def event_counts(events: Sequence[Event], unreadable: int = 0) -> EventCounts:
    """Events (the unreadable ones too), tool_writes, approvals, openers, first write, last opener."""
    writes = [event for event in events if event.kind is EventKind.TOOL_WRITE]
    openers = [event for event in events if event.kind in OPENERS]
    return EventCounts(
        events=len(events) + unreadable,
        tool_writes=len(writes),
        approvals=sum(event.kind is EventKind.APPROVAL for event in events),
        openers=len(openers),
        first_write_at=min((event.crdate for event in writes), default=None),
        first_write_sequence=min((event.sequence for event in writes), default=None),
        last_opener_sequence=max((event.sequence for event in openers), default=None),
    )


def _verdict(conversation: Conversation, given: ConversationInput, answer: Answer) -> Verdict | None:
    """Whether the answer's run wrote: from its events, or, without a stream, from its stored run record."""
    run = answer.run
    if run is None or run.counts.events == 0:
        return verdict_from_record(given, answer)
    if not answer.claims:
        return None  # claim_state reads no verdict for an answer that claims nothing
    if conversation.unreadable_events.get(run.uuid, 0):
        return Verdict.CANNOT_TELL  # 001_…, "Decision": a stream that cannot be read yields no notice
    return nothing_saved(conversation.events.get(run.uuid, ()))
