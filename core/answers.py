"""The completed answers of a conversation, read into what the text rules judge (001_…, 000_…).

A conversation's stored messages, the runs it names and its run record give one completed answer per run:
whether it claims a change (core.claims), whether the run's events show a write (core.saved), and whether it
denies a change after an earlier write.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

from core import json_text
from core.claims import claims_change, denies_change
from core.measured_runs import EventCounts, RunRow
from core.message_time import message_time
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
    crdate: int  # the message's time (core.message_time): its createdAt where readable, else the row's crdate
    read: TranscriptMessage | UnreadableMessage


def stored_message(
    uid: int, sorting: int, role: str, crdate: int, payload: str | bytes | None
) -> StoredMessage:
    """A message row with its payload read by core.transcript; a payload that is not JSON is unreadable. A
    readable message is dated by its createdAt where it names one (core.message_time), every other by the
    row's crdate."""
    try:
        decoded = None if payload is None else json_text.loads(payload)
    except (ValueError, RecursionError):
        return StoredMessage(uid, sorting, role, crdate, UnreadableMessage(sorting, "payload is not JSON"))
    read = read_message(sorting, decoded)
    if isinstance(read, UnreadableMessage) or not isinstance(decoded, Mapping):
        return StoredMessage(uid, sorting, role, crdate, read)
    return StoredMessage(uid, sorting, role, message_time(decoded.get("createdAt"), crdate), read)


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


class CountTest(StrEnum):
    """A question VERDICT_BY_COUNTS asks of a claiming run's event counts."""

    NO_EVENTS = "no_events"
    DOUBTFUL_EVENTS = "doubtful_events"  # an event the database could not vouch for
    TOOL_WRITE = "tool_write"
    NO_APPROVAL = "no_approval"
    OTHERWISE = "otherwise"


# core.saved.nothing_saved's verdict where a run's event counts settle it, in the order it decides: the first
# test that holds gives the verdict; None: the counts do not settle it, and the stream must be read. No
# events: cannot tell (001_…, "Decision"). Then, with every event vouched for: a tool_write is a write;
# without any approval event no call can have been released by one, so nothing was saved.
VERDICT_BY_COUNTS: tuple[tuple[CountTest, Verdict | None], ...] = (
    (CountTest.NO_EVENTS, Verdict.CANNOT_TELL),
    (CountTest.DOUBTFUL_EVENTS, None),
    (CountTest.TOOL_WRITE, Verdict.WROTE),
    (CountTest.NO_APPROVAL, Verdict.NOTHING_SAVED),
    (CountTest.OTHERWISE, None),
)


def count_test_holds(test: CountTest, counts: EventCounts, problems: int) -> bool:
    """Whether a VERDICT_BY_COUNTS test holds (adapters.measure_batch.verdicts compiles the same tests).

    `problems` are the events the database could not vouch for (a kind unknown, a payload that is not a JSON
    object, sequence or duration NULL)."""
    if test is CountTest.NO_EVENTS:
        return counts.events == 0
    if test is CountTest.DOUBTFUL_EVENTS:
        return problems > 0
    if test is CountTest.TOOL_WRITE:
        return counts.tool_writes > 0
    if test is CountTest.NO_APPROVAL:
        return counts.approvals == 0
    return True


def verdict_from_counts(counts: EventCounts, problems: int) -> Verdict | None:
    """core.saved.nothing_saved's verdict where the counts settle it (VERDICT_BY_COUNTS); None where the
    stream must be read."""
    return next(verdict for test, verdict in VERDICT_BY_COUNTS if count_test_holds(test, counts, problems))


class RecordTest(StrEnum):
    """A question VERDICT_BY_RECORD asks of the stored run record (for an answer whose run left no stream)."""

    NOT_STORED = "not_stored"  # the column holds nothing (rows from before it)
    RUN_WROTE = "run_wrote"  # an entry of the answer's run lists a write
    RECORD_UNREADABLE = "record_unreadable"  # an entry cannot be read
    RUN_CONTINUED = "run_continued"  # an entry of the answer's run is of a segment after the first
    OWN_ENTRY = "own_entry"  # the answer's own entry is there (_own_entry)
    OTHERWISE = "otherwise"


# Where the run left no stream, its stored run record is the evidence (001_…, "Decision": "A run that could
# not be persisted has no stream; its result's steps are the evidence then."; the record is built from those
# steps, 000_…). In the order it decides: a write any of the run's entries lists is a write; the record cannot
# show the second kind of write, a call released by an approval that left no write target (a remote tool),
# so a run continued after a decision cannot tell, nor can a record with an entry that cannot be read; nothing
# saved when the answer's own entry lists none.
VERDICT_BY_RECORD: tuple[tuple[RecordTest, Verdict], ...] = (
    (RecordTest.NOT_STORED, Verdict.CANNOT_TELL),
    (RecordTest.RUN_WROTE, Verdict.WROTE),
    (RecordTest.RECORD_UNREADABLE, Verdict.CANNOT_TELL),
    (RecordTest.RUN_CONTINUED, Verdict.CANNOT_TELL),
    (RecordTest.OWN_ENTRY, Verdict.NOTHING_SAVED),
    (RecordTest.OTHERWISE, Verdict.CANNOT_TELL),
)


def record_test_holds(test: RecordTest, conversation: ConversationInput, answer: Answer) -> bool:
    """Whether a VERDICT_BY_RECORD test holds (adapters.measure_batch.facts compiles the same tests)."""
    text = answer.text
    entries = [entry for entry in conversation.record if entry.run_uuid == text.run_uuid]
    if test is RecordTest.NOT_STORED:
        return not conversation.record_stored
    if test is RecordTest.RUN_WROTE:
        return any(entry.writes for entry in entries)
    if test is RecordTest.RECORD_UNREADABLE:
        return bool(conversation.record_problems)
    if test is RecordTest.RUN_CONTINUED:
        return any(entry.segment > 0 for entry in entries)
    if test is RecordTest.OWN_ENTRY:
        return any(_own_entry(entry, text) for entry in entries)
    return True


def verdict_from_record(conversation: ConversationInput, answer: Answer) -> Verdict:
    """Where the run left no stream, the verdict its stored run record gives (VERDICT_BY_RECORD): a write any
    of its entries lists is a write; nothing saved when the answer's own entry lists none and the run was
    never continued."""
    return next(
        verdict for test, verdict in VERDICT_BY_RECORD if record_test_holds(test, conversation, answer)
    )


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


class DenialTest(StrEnum):
    """A question DENIAL_DECISION asks of a completed answer."""

    EARLIER_UNKNOWN = "earlier_unknown"  # whether a write came before it cannot be told (earlier_write)
    NO_EARLIER_WRITE = "no_earlier_write"
    DENIES = "denies"  # the answer denies a change (core.claims.denies_change)
    OTHERWISE = "otherwise"


# A denial is counted only after an earlier write (001_…); in the order it decides.
DENIAL_DECISION: tuple[tuple[DenialTest, DenialState], ...] = (
    (DenialTest.EARLIER_UNKNOWN, DenialState.CANNOT_TELL),
    (DenialTest.NO_EARLIER_WRITE, DenialState.NO_EARLIER_WRITE),
    (DenialTest.DENIES, DenialState.DENIES),
    (DenialTest.OTHERWISE, DenialState.DOES_NOT_DENY),
)


def denial_test_holds(test: DenialTest, answer: Answer, earlier: bool | None) -> bool:
    """Whether a DENIAL_DECISION test holds (adapters.measure_batch.facts compiles the same tests)."""
    if test is DenialTest.EARLIER_UNKNOWN:
        return earlier is None
    if test is DenialTest.NO_EARLIER_WRITE:
        return earlier is False
    if test is DenialTest.DENIES:
        return denies_change(answer.text.content)
    return True


def denial_state(answer: Answer, earlier: bool | None) -> DenialState:
    """Counted only after an earlier write; then the answer denies a change or does not (DENIAL_DECISION)."""
    return next(state for test, state in DENIAL_DECISION if denial_test_holds(test, answer, earlier))
