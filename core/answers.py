"""The completed answers of a conversation, read into what the text rules judge (001_…, 000_…).

A conversation's stored messages, the runs it names and its run record give one completed answer per run:
whether it claims a change (core.claims), whether the run's events show a write (core.saved), and whether it
denies a change after an earlier write.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

from core.claims import claims_change, denies_change
from core.measured_runs import EventCounts, RunRow
from core.run_record import RunRecordEntry, UnreadableEntry
from core.run_record_json import parse_run_record
from core.run_status import RunStatus
from core.saved import Verdict
from core.transcript import Role, TranscriptMessage, UnreadableMessage, read_message


class AnswerState(StrEnum):
    NONE = ""  # the run gave no completed answer
    READ = "read"
    UNREADABLE = "unreadable"  # an assistant message whose payload cannot be read


class ClaimState(StrEnum):
    NONE = ""
    NO_CLAIM = "no_claim"
    WROTE = "wrote"  # claims a change, and the run wrote
    NOTHING_SAVED = "nothing_saved"  # claims a change the run never made
    CANNOT_TELL = "cannot_tell"  # claims a change; the run's events cannot be read or are missing


class DenialState(StrEnum):
    NONE = ""
    NO_EARLIER_WRITE = "no_earlier_write"
    DENIES = "denies"
    DOES_NOT_DENY = "does_not_deny"
    CANNOT_TELL = "cannot_tell"  # the run record cannot be read


@dataclass(frozen=True)
class StoredMessage:
    """A tx_nrmcpagent_message row: its columns and its payload as read."""

    uid: int
    sorting: int
    role: str  # the row's role column: all that is known of a message whose payload cannot be read
    crdate: int
    read: TranscriptMessage | UnreadableMessage


def stored_message(
    uid: int, sorting: int, role: str, crdate: int, payload: str | bytes | None
) -> StoredMessage:
    """A message row with its payload read by core.transcript; a payload that is not JSON is unreadable."""
    try:
        decoded = None if payload is None else json.loads(payload)
    except ValueError:
        return StoredMessage(uid, sorting, role, crdate, UnreadableMessage(sorting, "payload is not JSON"))
    return StoredMessage(uid, sorting, role, crdate, read_message(sorting, decoded))


@dataclass(frozen=True)
class ConversationInput:
    uid: int
    skill: str
    approval_run_uuid: str
    messages: tuple[StoredMessage, ...]  # in sorting order
    record: tuple[RunRecordEntry, ...] = ()
    record_problems: tuple[UnreadableEntry, ...] = ()
    record_stored: bool = False  # the run_record column holds something (rows from before it hold NULL)


def conversation_input(
    uid: int,
    skill: str,
    approval_run_uuid: str,
    run_record: str | bytes | None,
    messages: Sequence[StoredMessage],
) -> ConversationInput:
    """A conversation row and its messages, with its run record read by core.run_record."""
    entries, problems = parse_run_record(run_record)
    stored = run_record is not None and bool(run_record.strip())
    ordered = tuple(sorted(messages, key=lambda message: message.sorting))
    return ConversationInput(uid, skill or "", approval_run_uuid or "", ordered, entries, problems, stored)


def named_runs(conversation: ConversationInput) -> tuple[str, ...]:
    """The runs a conversation names (DESIGN.md): its messages' runUuid, approval_run_uuid, its run record."""
    names: dict[str, None] = {}
    for message in conversation.messages:
        if isinstance(message.read, TranscriptMessage) and message.read.run_uuid:
            names.setdefault(message.read.run_uuid)
    if conversation.approval_run_uuid:
        names.setdefault(conversation.approval_run_uuid)
    for entry in conversation.record:
        if entry.run_uuid:
            names.setdefault(entry.run_uuid)
    return tuple(names)


@dataclass(frozen=True)
class Answer:
    """A completed answer: the message, the run behind it (None: gone), whether it claims a change."""

    message: StoredMessage
    text: TranscriptMessage
    run: RunRow | None
    claims: bool


def completed_answers(conversation: ConversationInput, runs: Mapping[str, RunRow]) -> tuple[Answer, ...]:
    """One per run: a completed run's last assistant message in its last segment (openers + 1 segments).

    A message without `segment` (older rows) may be it; a run without events has no known last segment. A
    run tx_nrllm_agentrun no longer holds gets its last assistant message, since its status cannot be read.
    """
    by_run: dict[str, list[tuple[StoredMessage, TranscriptMessage]]] = {}
    for message in conversation.messages:
        read = message.read
        if isinstance(read, TranscriptMessage) and read.role is Role.ASSISTANT and read.run_uuid:
            by_run.setdefault(read.run_uuid, []).append((message, read))
    answers: list[Answer] = []
    for uuid, messages in by_run.items():
        run = runs.get(uuid)
        if run is not None:
            if run.status != RunStatus.COMPLETED:
                continue
            last = run.counts.openers if run.counts.events > 0 else None
            messages = [m for m in messages if last is None or m[1].segment is None or m[1].segment == last]
        if messages:
            message, read = messages[-1]
            answers.append(Answer(message, read, run, claims_change(read.content)))
    return tuple(answers)


def verdict_from_counts(counts: EventCounts, problems: int) -> Verdict | None:
    """core.saved.nothing_saved's verdict where the counts settle it; None where the stream must be read.

    `problems` are the events the database could not vouch for (a kind unknown, a payload that is not a JSON
    object, sequence or duration NULL). No events: cannot tell. Then, with every event vouched for: a
    tool_write is a write; without any approval event no call can have been released by one, so nothing was
    saved. Anything else is for nothing_saved.
    """
    if counts.events == 0:
        return Verdict.CANNOT_TELL
    if problems > 0:
        return None
    if counts.tool_writes > 0:
        return Verdict.WROTE
    if counts.approvals == 0:
        return Verdict.NOTHING_SAVED
    return None


def verdict_from_record(conversation: ConversationInput, answer: Answer) -> Verdict:
    """Where the run left no stream, its stored run record is the evidence: a write any of its entries lists
    is a write; nothing saved when the answer's own entry lists none and the run was never continued."""
    # 001_…, "Decision": "A run that could not be persisted has no stream; its result's steps are the
    # evidence then." The record is built from those steps (000_…). It cannot show the second kind of write,
    # a call released by an approval that left no write target (a remote tool), so a run continued after a
    # decision cannot tell; nor can a record with an entry that cannot be read.
    text = answer.text
    if not conversation.record_stored:
        return Verdict.CANNOT_TELL
    entries = [entry for entry in conversation.record if entry.run_uuid == text.run_uuid]
    if any(entry.writes for entry in entries):
        return Verdict.WROTE
    if conversation.record_problems or any(entry.segment > 0 for entry in entries):
        return Verdict.CANNOT_TELL
    if any(_own_entry(entry, text) for entry in entries):
        return Verdict.NOTHING_SAVED
    return Verdict.CANNOT_TELL


def _own_entry(entry: RunRecordEntry, text: TranscriptMessage) -> bool:
    """The entry of the answer's segment: by its segment, or by its position for a message without one."""
    return entry.position == text.position if text.segment is None else entry.segment == text.segment


# A claiming answer's state by its run's verdict (core.saved); without a verdict: cannot tell.
CLAIM_BY_VERDICT: Mapping[Verdict, ClaimState] = {
    Verdict.WROTE: ClaimState.WROTE,
    Verdict.NOTHING_SAVED: ClaimState.NOTHING_SAVED,
    Verdict.CANNOT_TELL: ClaimState.CANNOT_TELL,
}


def claim_state(answer: Answer, verdict: Verdict | None) -> ClaimState:
    """No claim, whatever the run did; a claim is written, unwritten, or cannot tell (also: no verdict)."""
    if not answer.claims:
        return ClaimState.NO_CLAIM
    if verdict is None:
        return ClaimState.CANNOT_TELL
    return CLAIM_BY_VERDICT[verdict]


def earlier_write(conversation: ConversationInput, answer: Answer, runs: Sequence[RunRow]) -> bool | None:
    """Whether the conversation shows a write in a segment before the answer's; None when it cannot tell.

    From the stored run record: an entry with writes at or before the answer's position, not the answer's own
    segment. A conversation from before the record (its column empty) is read from its runs' tool_write
    events instead: another run's write before the answer, or the answer's own run's write before its last
    segment began.
    """
    text = answer.text
    if conversation.record_stored:
        if recorded_writes_before(conversation.record, text):
            return True
        return None if conversation.record_problems else False
    for run in runs:
        counts = run.counts
        if counts.first_write_at is None:
            continue
        if answer.run is not None and run.uid == answer.run.uid:
            first, opener = counts.first_write_sequence, counts.last_opener_sequence
            if first is not None and opener is not None and first < opener:
                return True
        elif counts.first_write_at <= answer.message.crdate:
            return True
    return False


def recorded_writes_before(
    entries: Sequence[RunRecordEntry], text: TranscriptMessage
) -> tuple[RunRecordEntry, ...]:
    """The run-record entries with writes at or before the answer's position, its own segment's left out."""
    return tuple(
        entry
        for entry in entries
        if entry.writes
        and entry.position <= text.position
        and not (entry.run_uuid == text.run_uuid and _own_entry(entry, text))
    )


def denial_state(answer: Answer, earlier: bool | None) -> DenialState:
    """Counted only after an earlier write; then the answer denies a change or does not (core.claims)."""
    if earlier is None:
        return DenialState.CANNOT_TELL
    if not earlier:
        return DenialState.NO_EARLIER_WRITE
    return DenialState.DENIES if denies_change(answer.text.content) else DenialState.DOES_NOT_DENY
