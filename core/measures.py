"""What measure-rates counts, and how the counts become rates (DESIGN.md, "Rates"; 001_…, 000_…, 003_…).

Two steps, both over plain values:

* Classification. A conversation's stored messages, the runs it names (with counts of their events) and its
  run record give one `Fact` per run — its completed answer, whether that answer carries the nothingSaved
  notice, claims a change the run never made or denies earlier work, and whether the editor said "go on"
  while an approval waited — and one per answer whose run cannot be found or whose message cannot be read,
  so that such an answer is counted as excluded, never as a zero. The facts are what
  tx_runrecord_measure_fact stores; be_user and editor ids are no part of them.
* Aggregation. Facts and derived outcomes, counted per period and group by the database, become numerator,
  denominator and excluded per metric (`rate_counts`). A group is all runs, a configuration or a skill, never
  an editor. Periods are the UTC day or the ISO week (Monday to Sunday) of the run's end. Two metrics are
  counts, not rates: the runs, and the runs still inside their window (`COUNTS`); they are stored the same
  way, with the denominator equal to the numerator, so that the pages read every figure from one table.

`METRICS` states every metric's exact definition; the README quotes it.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime, timedelta
from enum import StrEnum
from itertools import groupby
from typing import TypeVar

from core.claims import claims_change, denies_change, is_go_on
from core.error_codes import Notice
from core.events import EventKind
from core.outcomes import CallOutcome, EditScope
from core.rates import show_group
from core.run_record import RunRecordEntry, RunStatus, UnreadableEntry, parse_run_record
from core.saved import Verdict
from core.transcript import Role, TranscriptMessage, UnreadableMessage, read_message

# Raise whenever a rule here changes what a fact says: the job rebuilds every fact when the version it
# stored differs, instead of mixing facts of two rule sets in one rate.
# 2: the claim rule as 001_… words it (core.claims) and the approved call itself as the write (core.saved).
MEASURE_VERSION = 2
# What a measurement writes beyond what the facts say: raise when measure-rates writes a metric it did not
# write before (the facts stay as they are, so nothing is counted afresh). Stored as a mark, so that a page
# can tell a database measured before a metric existed ("not counted yet") from one where it counts none.
# 2: window_open. 3: notice_agreement (closed periods get it too: measure-rates rewrites every period once).
RATES_VERSION = 3

DAY_S = 86_400


class Grain(StrEnum):
    DAY = "day"
    WEEK = "week"


class Metric(StrEnum):
    # Runs ending in the period: the count a group's "too few to show" is judged by (DESIGN.md, "Privacy").
    RUNS = "runs"
    EDITED_RATE = "edited_rate"
    DISCARDED_RATE = "discarded_rate"
    ACCEPTED_UNCHANGED_RATE = "accepted_unchanged_rate"
    UNKNOWN_SHARE = "unknown_share"
    EDITED_RELEASED_ONLY = "edited_released_only"
    EDITED_SAME_FIELDS = "edited_same_fields"
    EDITED_OTHER_FIELDS = "edited_other_fields"
    EDITED_FIELDS_UNKNOWN = "edited_fields_unknown"
    NOTHING_SAVED_RATE = "nothing_saved_rate"
    CLAIMED_UNWRITTEN_RATE = "claimed_unwritten_rate"
    GO_ON_WHILE_WAITING = "go_on_while_waiting"
    DENIAL_RATE = "denial_rate"
    # The recomputed notice (claimed_unwritten_rate's rule) against the chat's stored one, from the first
    # stored notice on: the evidence that the back-filled rate before the notice measures what it does after.
    NOTICE_AGREEMENT = "notice_agreement"
    # Runs ending in the period that are still inside their window (not derived yet): a count, beside the
    # outcome mix. A period that holds none has no row (a closed period never holds one).
    WINDOW_OPEN = "window_open"


@dataclass(frozen=True)
class MetricDefinition:
    metric: Metric
    numerator: str
    denominator: str
    excluded: str
    count: bool = False  # a count, not a rate: never compared, never given a rate or an interval


_KNOWN_OUTCOME = (
    "derived runs (tx_runrecord_run_outcome) with a known outcome: accepted_unchanged, edited or discarded"
)
_OUTCOME_EXCLUDED = "derived runs whose outcome is unknown, or a value no rule writes"
_EDITED_RUNS = (
    "EDITED runs; a run's scope is the first of same_fields, fields_unknown, other_fields, released_only "
    "among its EDITED writes"
)
_SCOPE_EXCLUDED = "EDITED runs without an EDITED write that names a scope"
_COUNT = "the same (a count, not a rate)"
_ANSWERS = (
    "completed answers: a completed run's last assistant message in its last segment (one per run), "
    "and the last assistant message naming a run that tx_nrllm_agentrun no longer holds"
)

# The exact definitions (README, `runrecord compare --help`). Every metric but the counts is a proportion of
# units; a unit that could feed it but cannot be read is excluded, never counted as a zero.
METRICS: tuple[MetricDefinition, ...] = (
    MetricDefinition(Metric.RUNS, "runs ending in the period", _COUNT, "nothing", count=True),
    MetricDefinition(
        Metric.EDITED_RATE, "derived runs with outcome edited", _KNOWN_OUTCOME, _OUTCOME_EXCLUDED
    ),
    MetricDefinition(
        Metric.DISCARDED_RATE, "derived runs with outcome discarded", _KNOWN_OUTCOME, _OUTCOME_EXCLUDED
    ),
    MetricDefinition(
        Metric.ACCEPTED_UNCHANGED_RATE,
        "derived runs with outcome accepted_unchanged",
        _KNOWN_OUTCOME,
        _OUTCOME_EXCLUDED,
    ),
    MetricDefinition(
        Metric.UNKNOWN_SHARE,
        "derived runs with outcome unknown",
        "all derived runs",
        "derived runs with an outcome value no rule writes",
    ),
    MetricDefinition(
        Metric.EDITED_RELEASED_ONLY, "EDITED runs of scope released_only", _EDITED_RUNS, _SCOPE_EXCLUDED
    ),
    MetricDefinition(
        Metric.EDITED_SAME_FIELDS, "EDITED runs of scope same_fields", _EDITED_RUNS, _SCOPE_EXCLUDED
    ),
    MetricDefinition(
        Metric.EDITED_OTHER_FIELDS, "EDITED runs of scope other_fields", _EDITED_RUNS, _SCOPE_EXCLUDED
    ),
    MetricDefinition(
        Metric.EDITED_FIELDS_UNKNOWN, "EDITED runs of scope fields_unknown", _EDITED_RUNS, _SCOPE_EXCLUDED
    ),
    MetricDefinition(
        Metric.NOTHING_SAVED_RATE,
        "completed answers the chat stored with the nothingSaved notice",
        _ANSWERS,
        "assistant messages whose payload cannot be read",
    ),
    MetricDefinition(
        Metric.CLAIMED_UNWRITTEN_RATE,
        "completed answers that claim a change (core.claims: a claim word without a negation among the three "
        "words before it) while the run's events show no write (core.saved: no tool_write, no approved call "
        "run without error: the call directly after an approval with approved = true)",
        _ANSWERS,
        "claiming answers whose run's events cannot be read or are missing (core.saved: cannot tell), "
        "and assistant messages whose payload cannot be read",
    ),
    MetricDefinition(
        Metric.GO_ON_WHILE_WAITING,
        'conversations in which a whole user message was a "go on" phrase (core.claims) sent while one of '
        "the conversation's runs waited for an approval",
        "conversations with a run that waited for an approval (an approval event, or the status "
        "waiting_for_approval); a conversation counts once, in the period and configuration of its first "
        "such run",
        "conversations without such a phrase but with a user message that cannot be read, sent while an "
        "approval waited",
    ),
    MetricDefinition(
        Metric.DENIAL_RATE,
        'completed answers that deny a change ("nichts gespeichert", "nothing was changed"; core.claims)',
        "completed answers in conversations whose run record shows a write in an earlier segment (the "
        "stored run record; for a conversation from before the record, its runs' tool_write events)",
        "answers in conversations whose run record cannot be read, and assistant messages whose payload "
        "cannot be read",
    ),
    MetricDefinition(
        Metric.NOTICE_AGREEMENT,
        "completed answers where the recomputation (claimed_unwritten_rate's rule: a claim, core.claims, "
        "while the run's events show no write, core.saved) and the chat's stored nothingSaved notice say "
        "the same: both nothingSaved, or neither",
        "completed answers stored at or after the first stored notice: the earliest completed answer in "
        "the installation that carries the nothingSaved notice (an answer's time is its run's end, when "
        "the chat stored it; without its run, the message's crdate)",
        "answers after the first stored notice whose recomputation cannot tell (claiming answers whose "
        "run's events cannot be read or are missing), and assistant messages after it whose payload "
        "cannot be read",
    ),
    MetricDefinition(
        Metric.WINDOW_OPEN,
        "runs ending in the period with at least one tool_write event whose last write's window had not "
        "closed when measure-rates ran (core.outcomes.is_due: the last write at or after now − window) and "
        "without a derived outcome (tx_runrecord_run_outcome)",
        _COUNT,
        "nothing; a run whose recorded end is before now − window is not looked at (a run ends after its "
        "writes), so a closed period has no such run and no row",
        count=True,
    ),
)

DEFINITIONS: Mapping[Metric, MetricDefinition] = {definition.metric: definition for definition in METRICS}
# The counts (no rate, no interval, no comparison) and the rates: what compare and the pages offer.
COUNTS: tuple[Metric, ...] = tuple(definition.metric for definition in METRICS if definition.count)
RATES: tuple[Metric, ...] = tuple(definition.metric for definition in METRICS if not definition.count)
# The RATES_VERSION from which measure-rates stores a metric; a metric not named here is stored since 1.
STORED_SINCE: Mapping[Metric, int] = {Metric.WINDOW_OPEN: 2, Metric.NOTICE_AGREEMENT: 3}


def parse_metric(name: str) -> Metric | None:
    """The metric a name stands for; None for a name that is none."""
    try:
        return Metric(name)
    except ValueError:
        return None


# --- periods ---------------------------------------------------------------------------------------------


def period_start(unix: int, grain: Grain) -> date:
    """The period holding a unix time, in UTC: the day itself, or the Monday of its ISO week."""
    day = datetime.fromtimestamp(unix, UTC).date()
    return day - timedelta(days=day.weekday()) if grain is Grain.WEEK else day


def period_length(grain: Grain) -> timedelta:
    """A day, or a week."""
    return timedelta(days=7) if grain is Grain.WEEK else timedelta(days=1)


def unix_of(day: date) -> int:
    """Midnight UTC of a day, as unix time."""
    return int(datetime(day.year, day.month, day.day, tzinfo=UTC).timestamp())


def open_from(now: int, window_s: int, earliest_open_end: int | None, grain: Grain) -> date:
    """The first open period: runs ending at or after now − window may still change (a write at that second is
    not due yet: core.outcomes.is_due), and so may the current period.

    `earliest_open_end` is the earliest run end at or after now − window (None when there is none). Every
    period from the one holding it on is open, since each later period's runs end later still.
    """
    current = period_start(now, grain)
    if earliest_open_end is None:
        return current
    return min(current, period_start(earliest_open_end, grain))


@dataclass(frozen=True)
class Sides:
    """The periods a before/after comparison sums: N weeks of full periods on each side of a date."""

    before: tuple[date, ...]  # oldest first
    after: tuple[date, ...]
    straddling: date | None  # the period holding the date when it does not start it: on neither side


def comparison_periods(at: date, weeks: int, grain: Grain) -> Sides:
    """Before: the full periods of the `weeks` weeks that end on or before `at`; after: those from `at` on.

    A week that holds `at` without starting on it has runs of both sides and is left out of both.
    """
    length = period_length(grain)
    count = weeks * 7 // length.days
    first = period_start(unix_of(at), grain)
    straddling = None if first == at else first
    after_start = first if straddling is None else first + length
    before = tuple(first - length * k for k in range(count, 0, -1))
    after = tuple(after_start + length * k for k in range(count))
    return Sides(before, after, straddling)


def run_end(finished_at: int, tstamp: int, started_at: int, crdate: int) -> int:
    """When a run ended: finished_at; for a run not finished (waiting, cancelled), its last update."""
    for value in (finished_at, tstamp, started_at, crdate):
        if value > 0:
            return value
    return 0


# --- the facts of one run --------------------------------------------------------------------------------


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


class GoOnState(StrEnum):
    NONE = ""  # not the run the conversation is counted at
    NO = "no"
    YES = "yes"
    CANNOT_TELL = "cannot_tell"


class Exclusion(StrEnum):
    """Why something that could have fed a metric was excluded from it."""

    MESSAGE_UNREADABLE = "message_unreadable"
    EVENTS_UNREADABLE = "events_unreadable"
    NO_EVENTS = "no_events"
    RUN_MISSING = "run_missing"
    RUN_RECORD_UNREADABLE = "run_record_unreadable"
    USER_MESSAGE_UNREADABLE = "user_message_unreadable"
    OUTCOME_UNREADABLE = "outcome_unreadable"
    EDIT_SCOPE_MISSING = "edit_scope_missing"


@dataclass(frozen=True)
class EventCounts:
    """What the database counted of a run's events (kind, sequence and crdate columns; payloads unread)."""

    events: int = 0
    tool_writes: int = 0
    approvals: int = 0
    openers: int = 0  # approval and input events: the run has openers + 1 segments
    first_write_at: int | None = None
    first_write_sequence: int | None = None
    last_opener_sequence: int | None = None


@dataclass(frozen=True)
class RunRow:
    uid: int
    uuid: str
    status: str
    configuration: str
    ended_at: int
    counts: EventCounts = EventCounts()

    @property
    def waited_for_approval(self) -> bool:
        """The run waited for an approval: it has an approval event or waits for one now."""
        return self.counts.approvals > 0 or self.status == RunStatus.WAITING_FOR_APPROVAL


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


def _role(message: StoredMessage) -> str:
    return message.read.role.value if isinstance(message.read, TranscriptMessage) else message.role


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


def claim_state(answer: Answer, verdict: Verdict | None) -> ClaimState:
    """No claim, whatever the run did; a claim is written, unwritten, or cannot tell (also: no verdict)."""
    if not answer.claims:
        return ClaimState.NO_CLAIM
    if verdict is Verdict.WROTE:
        return ClaimState.WROTE
    if verdict is Verdict.NOTHING_SAVED:
        return ClaimState.NOTHING_SAVED
    return ClaimState.CANNOT_TELL


def earlier_write(conversation: ConversationInput, answer: Answer, runs: Sequence[RunRow]) -> bool | None:
    """Whether the conversation shows a write in a segment before the answer's; None when it cannot tell.

    From the stored run record: an entry with writes at or before the answer's position, not the answer's own
    segment. A conversation from before the record (its column empty) is read from its runs' tool_write
    events instead: another run's write before the answer, or the answer's own run's write before its last
    segment began.
    """
    text = answer.text
    if conversation.record_stored:
        for entry in conversation.record:
            if not entry.writes or entry.position > text.position:
                continue
            if entry.run_uuid == text.run_uuid:
                own = (
                    entry.position == text.position if text.segment is None else entry.segment == text.segment
                )
                if own:
                    continue
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


def denial_state(answer: Answer, earlier: bool | None) -> DenialState:
    """Counted only after an earlier write; then the answer denies a change or does not (core.claims)."""
    if earlier is None:
        return DenialState.CANNOT_TELL
    if not earlier:
        return DenialState.NO_EARLIER_WRITE
    return DenialState.DENIES if denies_change(answer.text.content) else DenialState.DOES_NOT_DENY


# --- "go on" while an approval waits -----------------------------------------------------------------------


@dataclass(frozen=True)
class Step:
    """An event as the wait reading needs it: columns only, no payload."""

    uid: int
    sequence: int
    kind: str
    crdate: int


@dataclass(frozen=True)
class Wait:
    start: int
    end: int | None  # None: still waiting


def approval_waits(steps: Sequence[Step], status: str) -> tuple[Wait, ...]:
    """A run waited for an approval from its last event before each approval event up to that event, and
    from its last event on while its status is waiting_for_approval."""
    ordered = sorted(steps, key=lambda step: (step.sequence, step.uid))
    waits: list[Wait] = []
    for previous, step in zip(ordered, ordered[1:], strict=False):
        if step.kind == EventKind.APPROVAL:
            waits.append(Wait(previous.crdate, step.crdate))
    if status == RunStatus.WAITING_FOR_APPROVAL and ordered:
        waits.append(Wait(ordered[-1].crdate, None))
    return tuple(waits)


def needs_waits(conversation: ConversationInput) -> bool:
    """Waits are read only where they can change the count: a "go on" phrase or an unreadable user message."""
    for message in conversation.messages:
        read = message.read
        if isinstance(read, TranscriptMessage):
            if read.role is Role.USER and is_go_on(read.content):
                return True
        elif message.role == Role.USER.value:
            return True
    return False


def go_on_state(conversation: ConversationInput, waits: Iterable[Wait] | None) -> GoOnState:
    """Yes: a whole user message was a "go on" phrase, sent while an approval waited (001_…, "Decision")."""
    if waits is None:
        return GoOnState.NO
    windows = tuple(waits)

    def inside(at: int) -> bool:
        return any(wait.start <= at and (wait.end is None or at <= wait.end) for wait in windows)

    unreadable = False
    for message in conversation.messages:
        read = message.read
        if isinstance(read, TranscriptMessage):
            if read.role is Role.USER and is_go_on(read.content) and inside(message.crdate):
                return GoOnState.YES
        elif message.role == Role.USER.value and inside(message.crdate):
            unreadable = True
    return GoOnState.CANNOT_TELL if unreadable else GoOnState.NO


# --- facts -----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Fact:
    """A row of tx_runrecord_measure_fact: a run (run_uid > 0), or an answer no run stands behind."""

    run_uid: int
    message_uid: int
    conversation_uid: int
    configuration: str | None  # None: not known (an answer without its run)
    skill: str | None  # None: no conversation names the run
    ended_at: int
    runs: int  # 1 for a run, 0 for an answer without its run
    answer: AnswerState = AnswerState.NONE
    notice: bool = False
    claim: ClaimState = ClaimState.NONE
    denial: DenialState = DenialState.NONE
    go_on: GoOnState = GoOnState.NONE
    problems: tuple[Exclusion, ...] = ()

    def period(self, grain: Grain) -> date:
        """The period of the run's end."""
        return period_start(self.ended_at, grain)


def orphan_fact(run: RunRow) -> Fact:
    """A run no conversation names: counted in all and its configuration, never in a skill."""
    return Fact(run.uid, 0, 0, run.configuration, None, run.ended_at, 1)


def _answer_fields(
    conversation: ConversationInput, answer: Answer, verdict: Verdict | None, runs: Sequence[RunRow]
) -> tuple[ClaimState, DenialState, list[Exclusion]]:
    claim = claim_state(answer, verdict)
    denial = denial_state(answer, earlier_write(conversation, answer, runs))
    problems: list[Exclusion] = []
    if answer.run is None:
        problems.append(Exclusion.RUN_MISSING)
    if claim is ClaimState.CANNOT_TELL:
        no_events = answer.run is None or answer.run.counts.events == 0
        problems.append(Exclusion.NO_EVENTS if no_events else Exclusion.EVENTS_UNREADABLE)
    if denial is DenialState.CANNOT_TELL:
        problems.append(Exclusion.RUN_RECORD_UNREADABLE)
    return claim, denial, problems


def conversation_facts(
    conversation: ConversationInput,
    runs: Sequence[RunRow],
    answers: Sequence[Answer],
    verdicts: Mapping[int, Verdict],
    waits: Mapping[int, Sequence[Wait]] | None,
) -> tuple[Fact, ...]:
    """The facts of a conversation: one per run it names and finds, one per answer without its run, one per
    assistant message that cannot be read (counted where it could have been a completed answer)."""
    skill = conversation.skill
    by_run = {answer.run.uid: answer for answer in answers if answer.run is not None}
    waiting = [run for run in runs if run.waited_for_approval]
    counted_at = min(waiting, key=lambda run: (run.ended_at, run.uid)).uid if waiting else None
    go_on = GoOnState.NONE
    if counted_at is not None:
        all_waits = None if waits is None else [wait for run_waits in waits.values() for wait in run_waits]
        go_on = go_on_state(conversation, all_waits)
    facts: list[Fact] = []
    for run in runs:
        answer = by_run.get(run.uid)
        state, notice = AnswerState.NONE, False
        claim, denial = ClaimState.NONE, DenialState.NONE
        problems: list[Exclusion] = []
        if answer is not None:
            state, notice = AnswerState.READ, answer.text.notice is Notice.NOTHING_SAVED
            claim, denial, problems = _answer_fields(conversation, answer, verdicts.get(run.uid), runs)
        run_go_on = go_on if run.uid == counted_at else GoOnState.NONE
        if run_go_on is GoOnState.CANNOT_TELL:
            problems.append(Exclusion.USER_MESSAGE_UNREADABLE)
        facts.append(
            Fact(
                run.uid,
                0,
                conversation.uid,
                run.configuration,
                skill,
                run.ended_at,
                1,
                state,
                notice,
                claim,
                denial,
                run_go_on,
                tuple(problems),
            )
        )
    for answer in answers:
        if answer.run is None:
            message = answer.message
            claim, denial, problems = _answer_fields(conversation, answer, Verdict.CANNOT_TELL, runs)
            notice = answer.text.notice is Notice.NOTHING_SAVED
            facts.append(
                Fact(
                    0,
                    message.uid,
                    conversation.uid,
                    None,
                    skill,
                    message.crdate,
                    0,
                    AnswerState.READ,
                    notice,
                    claim,
                    denial,
                    GoOnState.NONE,
                    tuple(problems),
                )
            )
    for message in conversation.messages:
        if isinstance(message.read, UnreadableMessage) and message.role == Role.ASSISTANT.value:
            unreadable = Fact(0, message.uid, conversation.uid, None, skill, message.crdate, 0)
            facts.append(
                replace(unreadable, answer=AnswerState.UNREADABLE, problems=(Exclusion.MESSAGE_UNREADABLE,))
            )
    return tuple(facts)


# --- groups ----------------------------------------------------------------------------------------------


class GroupKind(StrEnum):
    ALL = "all"
    CONFIGURATION = "configuration"
    SKILL = "skill"


@dataclass(frozen=True, order=True)
class Group:
    kind: GroupKind
    value: str = ""  # a configuration identifier or a skill identifier; "" for a conversation without skill

    @property
    def label(self) -> str:
        """The group as the command line names it: all, configuration:X, skill:Y (skill:none for none)."""
        if self.kind is GroupKind.ALL:
            return "all"
        if self.kind is GroupKind.SKILL and not self.value:
            return "skill:none"
        return f"{self.kind.value}:{self.value}"


ALL_RUNS = Group(GroupKind.ALL)


def parse_group(text: str) -> Group | None:
    """all, configuration:X or skill:Y ("skill:none" and "skill:" are conversations without a skill)."""
    if text == "all":
        return ALL_RUNS
    kind, colon, value = text.partition(":")
    if not colon or kind not in (GroupKind.CONFIGURATION.value, GroupKind.SKILL.value):
        return None
    if kind == GroupKind.SKILL.value and value == "none":
        value = ""
    return Group(GroupKind(kind), value)


def groups_of(configuration: str | None, skill: str | None) -> tuple[Group, ...]:
    """All, the run's configuration when known, the conversation's skill when a conversation names the run."""
    groups = [ALL_RUNS]
    if configuration is not None:
        groups.append(Group(GroupKind.CONFIGURATION, configuration))
    if skill is not None:
        groups.append(Group(GroupKind.SKILL, skill))
    return tuple(groups)


def shown(group: Group, runs: int) -> bool:
    """A configuration or skill below MIN_GROUP_RUNS runs is too few to show (DESIGN.md, "Privacy")."""
    return group.kind is GroupKind.ALL or show_group(runs)


# --- aggregation -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Count:
    numerator: int = 0
    denominator: int = 0
    excluded: int = 0

    def __add__(self, other: Count) -> Count:
        return Count(
            self.numerator + other.numerator,
            self.denominator + other.denominator,
            self.excluded + other.excluded,
        )

    @property
    def empty(self) -> bool:
        """Nothing counted and nothing excluded: the period has no data for the metric (absent, never 0%)."""
        return self.denominator == 0 and self.excluded == 0


@dataclass(frozen=True)
class FactTally:
    """Facts the database counted per period, group values and states."""

    period: date
    configuration: str | None
    skill: str | None
    answer: str
    notice: bool
    claim: str
    denial: str
    go_on: str
    problems: str  # Exclusion values joined by commas
    runs: int  # the sum of the facts' runs (answers without their run add none)
    facts: int
    since_first_notice: bool = False  # at or after the installation's first stored notice (NOTICE_AGREEMENT)


@dataclass(frozen=True)
class OutcomeTally:
    """Derived runs (tx_runrecord_run_outcome) per period, group values and outcome."""

    period: date
    configuration: str | None
    skill: str | None
    outcome: str
    runs: int


@dataclass(frozen=True)
class OpenTally:
    """Runs still inside their window (Metric.WINDOW_OPEN) per period of the run's end and group values."""

    period: date
    configuration: str | None
    skill: str | None
    runs: int


@dataclass(frozen=True)
class EditedWrite:
    """An EDITED run's EDITED write (tx_runrecord_write_outcome); edit_scope None: the run has no such row."""

    period: date
    configuration: str | None
    skill: str | None
    run_uid: int
    edit_scope: str | None


# (in the numerator, in the denominator, excluded) for each state of a fact.
Counted = tuple[bool, bool, bool]
NUMERATOR: Counted = (True, True, False)
DENOMINATOR: Counted = (False, True, False)
EXCLUDED: Counted = (False, False, True)
NOT_COUNTED: Counted = (False, False, False)

CLAIM_COUNTS: Mapping[ClaimState, Counted] = {
    ClaimState.NO_CLAIM: DENOMINATOR,
    ClaimState.WROTE: DENOMINATOR,
    ClaimState.NOTHING_SAVED: NUMERATOR,
    ClaimState.CANNOT_TELL: EXCLUDED,
}
DENIAL_COUNTS: Mapping[DenialState, Counted] = {
    DenialState.NO_EARLIER_WRITE: NOT_COUNTED,
    DenialState.DENIES: NUMERATOR,
    DenialState.DOES_NOT_DENY: DENOMINATOR,
    DenialState.CANNOT_TELL: EXCLUDED,
}
# (recomputation, stored notice) → counted. The recomputation says nothingSaved exactly where
# claimed_unwritten_rate counts a claim the run never made; where it cannot tell, the answer is excluded.
AGREEMENT_COUNTS: Mapping[tuple[ClaimState, bool], Counted] = {
    (ClaimState.NOTHING_SAVED, True): NUMERATOR,
    (ClaimState.NO_CLAIM, False): NUMERATOR,
    (ClaimState.WROTE, False): NUMERATOR,
    (ClaimState.NOTHING_SAVED, False): DENOMINATOR,
    (ClaimState.NO_CLAIM, True): DENOMINATOR,
    (ClaimState.WROTE, True): DENOMINATOR,
    (ClaimState.CANNOT_TELL, True): EXCLUDED,
    (ClaimState.CANNOT_TELL, False): EXCLUDED,
}
GO_ON_COUNTS: Mapping[GoOnState, Counted] = {
    GoOnState.NO: DENOMINATOR,
    GoOnState.YES: NUMERATOR,
    GoOnState.CANNOT_TELL: EXCLUDED,
}
# 003_…: a known outcome is in the denominator of the three outcome rates; UNKNOWN is excluded from them and
# reported beside them as its share of all derived runs (DESIGN.md, "Rates").
OUTCOME_METRICS: Mapping[Metric, Mapping[CallOutcome, Counted]] = {
    Metric.EDITED_RATE: {
        CallOutcome.EDITED: NUMERATOR,
        CallOutcome.DISCARDED: DENOMINATOR,
        CallOutcome.ACCEPTED_UNCHANGED: DENOMINATOR,
        CallOutcome.UNKNOWN: EXCLUDED,
    },
    Metric.DISCARDED_RATE: {
        CallOutcome.EDITED: DENOMINATOR,
        CallOutcome.DISCARDED: NUMERATOR,
        CallOutcome.ACCEPTED_UNCHANGED: DENOMINATOR,
        CallOutcome.UNKNOWN: EXCLUDED,
    },
    Metric.ACCEPTED_UNCHANGED_RATE: {
        CallOutcome.EDITED: DENOMINATOR,
        CallOutcome.DISCARDED: DENOMINATOR,
        CallOutcome.ACCEPTED_UNCHANGED: NUMERATOR,
        CallOutcome.UNKNOWN: EXCLUDED,
    },
    Metric.UNKNOWN_SHARE: {
        CallOutcome.EDITED: DENOMINATOR,
        CallOutcome.DISCARDED: DENOMINATOR,
        CallOutcome.ACCEPTED_UNCHANGED: DENOMINATOR,
        CallOutcome.UNKNOWN: NUMERATOR,
    },
}
# A run's edit scope when its EDITED writes differ (DESIGN.md rule 7): a real edit of a field the run wrote
# decides, then a scope that cannot rule one out, then an edit of other fields; only a run whose every EDITED
# write merely released the record is released_only. So released_only + other_fields is the share of EDITED
# runs that over-report (003_…, "Revisit when": "EDITED is measured and high").
SCOPE_PRECEDENCE: tuple[EditScope, ...] = (
    EditScope.SAME_FIELDS,
    EditScope.FIELDS_UNKNOWN,
    EditScope.OTHER_FIELDS,
    EditScope.RELEASED_ONLY,
)
SCOPE_METRICS: Mapping[EditScope, Metric] = {
    EditScope.RELEASED_ONLY: Metric.EDITED_RELEASED_ONLY,
    EditScope.SAME_FIELDS: Metric.EDITED_SAME_FIELDS,
    EditScope.OTHER_FIELDS: Metric.EDITED_OTHER_FIELDS,
    EditScope.FIELDS_UNKNOWN: Metric.EDITED_FIELDS_UNKNOWN,
}
ANSWER_METRICS = (Metric.NOTHING_SAVED_RATE, Metric.CLAIMED_UNWRITTEN_RATE, Metric.DENIAL_RATE)

Key = tuple[Metric, date, Group]


@dataclass
class RateCounts:
    """Counts per metric, period and group; exclusions by reason per metric (group all)."""

    counts: dict[Key, Count] = field(default_factory=dict)
    exclusions: Counter[tuple[Metric, Exclusion]] = field(default_factory=Counter)

    def add(
        self,
        metric: Metric,
        period: date,
        groups: Iterable[Group],
        count: Count,
        reason: Exclusion | None = None,
    ) -> None:
        """Add a count to every group of a period; an exclusion is noted under its reason once."""
        for group in groups:
            key = (metric, period, group)
            self.counts[key] = self.counts.get(key, Count()) + count
        if count.excluded and reason is not None:
            self.exclusions[(metric, reason)] += count.excluded

    def rows(self) -> list[tuple[Key, Count]]:
        """Every metric, period and group with data; one without data is absent, never a zero."""
        return sorted(
            ((key, count) for key, count in self.counts.items() if not count.empty),
            key=lambda item: (item[0][0].value, item[0][1], item[0][2]),
        )


def _count(counted: Counted, units: int) -> Count:
    in_numerator, in_denominator, excluded = counted
    return Count(units if in_numerator else 0, units if in_denominator else 0, units if excluded else 0)


S = TypeVar("S", bound=StrEnum)


def _state(kind: type[S], value: str, fallback: S) -> S:
    found = _known(kind, value)
    return fallback if found is None else found


def _known(kind: type[S], value: str) -> S | None:
    try:
        return kind(value)
    except ValueError:
        return None


def _reason(problems: str, *candidates: Exclusion) -> Exclusion | None:
    found = set(problems.split(",")) if problems else set()
    return next((reason for reason in candidates if reason.value in found), None)


def rate_counts(
    facts: Iterable[FactTally],
    outcomes: Iterable[OutcomeTally],
    edited: Iterable[EditedWrite],
    window_open: Iterable[OpenTally] = (),
) -> RateCounts:
    """Numerator, denominator and excluded per metric, period and group (METRICS has the definitions).

    `edited` comes in run order (all EDITED writes of a run together), so that it can be a stream.
    `window_open`: the runs still inside their window, counted as of the measurement.
    """
    result = RateCounts()
    for tally in facts:
        _add_facts(result, tally)
    for outcome_tally in outcomes:
        groups = groups_of(outcome_tally.configuration, outcome_tally.skill)
        outcome = _known(CallOutcome, outcome_tally.outcome)
        for metric, counts in OUTCOME_METRICS.items():
            counted = EXCLUDED if outcome is None else counts[outcome]
            reason = Exclusion.OUTCOME_UNREADABLE if outcome is None else None
            result.add(metric, outcome_tally.period, groups, _count(counted, outcome_tally.runs), reason)
    for period, configuration, skill, scope in _edited_runs(edited):
        groups = groups_of(configuration, skill)
        for run_scope, metric in SCOPE_METRICS.items():
            if scope is None:
                result.add(metric, period, groups, Count(0, 0, 1), Exclusion.EDIT_SCOPE_MISSING)
            else:
                result.add(metric, period, groups, Count(int(scope is run_scope), 1, 0))
    for open_tally in window_open:
        groups = groups_of(open_tally.configuration, open_tally.skill)
        runs = open_tally.runs
        result.add(Metric.WINDOW_OPEN, open_tally.period, groups, Count(runs, runs, 0))
    return result


def _add_facts(result: RateCounts, tally: FactTally) -> None:
    period, units = tally.period, tally.facts
    groups = groups_of(tally.configuration, tally.skill)
    if tally.runs:
        result.add(Metric.RUNS, period, groups, Count(tally.runs, tally.runs, 0))
    answer = _state(AnswerState, tally.answer, AnswerState.UNREADABLE)
    if answer is AnswerState.UNREADABLE:
        metrics = ANSWER_METRICS + ((Metric.NOTICE_AGREEMENT,) if tally.since_first_notice else ())
        for metric in metrics:
            result.add(metric, period, groups, Count(0, 0, units), Exclusion.MESSAGE_UNREADABLE)
    elif answer is AnswerState.READ:
        notice = Count(units if tally.notice else 0, units, 0)
        result.add(Metric.NOTHING_SAVED_RATE, period, groups, notice)
        claim = _state(ClaimState, tally.claim, ClaimState.CANNOT_TELL)
        reason = _reason(
            tally.problems, Exclusion.RUN_MISSING, Exclusion.NO_EVENTS, Exclusion.EVENTS_UNREADABLE
        )
        claim_count = _count(CLAIM_COUNTS.get(claim, EXCLUDED), units)
        result.add(Metric.CLAIMED_UNWRITTEN_RATE, period, groups, claim_count, reason)
        if tally.since_first_notice:
            agreement = _count(AGREEMENT_COUNTS.get((claim, tally.notice), EXCLUDED), units)
            result.add(Metric.NOTICE_AGREEMENT, period, groups, agreement, reason)
        denial = _state(DenialState, tally.denial, DenialState.CANNOT_TELL)
        denial_count = _count(DENIAL_COUNTS.get(denial, EXCLUDED), units)
        reason = _reason(tally.problems, Exclusion.RUN_RECORD_UNREADABLE)
        result.add(Metric.DENIAL_RATE, period, groups, denial_count, reason)
    go_on = _state(GoOnState, tally.go_on, GoOnState.CANNOT_TELL)
    if go_on is not GoOnState.NONE:
        reason = _reason(tally.problems, Exclusion.USER_MESSAGE_UNREADABLE)
        result.add(Metric.GO_ON_WHILE_WAITING, period, groups, _count(GO_ON_COUNTS[go_on], units), reason)


def _edited_runs(
    edited: Iterable[EditedWrite],
) -> Iterable[tuple[date, str | None, str | None, EditScope | None]]:
    """Each EDITED run with its scope by SCOPE_PRECEDENCE; the writes come in run order, one run at a time."""
    for _, writes in groupby(edited, key=lambda write: write.run_uid):
        found = list(writes)
        scopes = {_known(EditScope, write.edit_scope or "") for write in found}
        first = found[0]
        scope = next((s for s in SCOPE_PRECEDENCE if s in scopes), None)
        yield first.period, first.configuration, first.skill, scope
