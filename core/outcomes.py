"""The observed outcome of an AI write, derived from sys_history inside a window, and of a run (003_…).

`classify_write` reads the history rows of one written record (T, U) and answers what became of the write;
`run_outcome` combines a run's writes by precedence. DESIGN.md, "Rules decided where the records leave
room", rules 1-8, is the authority for every choice the seed leaves open.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import IntEnum, StrEnum
from operator import attrgetter

from core.window import window_closed, window_closes_at

# DESIGN.md rule 8: every derived row carries the version of the rules that produced it. Raise it whenever a
# rule here changes what a write or a run is classified as.
RULE_VERSION = "2026.11-1"

# DESIGN.md rules 3 and 4: the tool_write event is stamped when the step ends and DataHandler stamps its
# sys_history row in the same or the next second or two, so a row this close to an AI write is that write.
SAME_SAVE_S = 2

# Columns DataHandler sets itself whenever it saves (the ctrl 'tstamp' field; the translation's copy of its
# source in l10n_diffsource), not because someone changed them: in newRecord they say nothing about
# whose text changed, and would make every edit look like one of our fields (DESIGN.md rule 7).
BOOKKEEPING_FIELDS: frozenset[str] = frozenset({"tstamp", "l10n_diffsource"})

# The field a hide or unhide changes (DESIGN.md rule 7, `released_only`).
RELEASE_FIELD = "hidden"


class CallOutcome(StrEnum):
    """The observed outcomes of tx_nrllm_call_outcome.outcome."""

    ACCEPTED_UNCHANGED = "accepted_unchanged"
    EDITED = "edited"
    DISCARDED = "discarded"
    UNKNOWN = "unknown"


class UnknownReason(StrEnum):
    HISTORY_TRIMMED = "history_trimmed"
    NO_HISTORY_ROW = "no_history_row"
    UNREADABLE_TARGET = "unreadable_target"


class EditScope(StrEnum):
    RELEASED_ONLY = "released_only"
    SAME_FIELDS = "same_fields"
    OTHER_FIELDS = "other_fields"
    FIELDS_UNKNOWN = "fields_unknown"


class Action(IntEnum):
    """sys_history.actiontype."""

    ADD = 1
    MODIFY = 2
    MOVE = 3
    DELETE = 4
    UNDELETE = 5
    STAGE = 6
    PUBLISH = 7


class Presence(StrEnum):
    """Whether the written record is still there when the derivation looks."""

    PRESENT = "present"
    DELETED = "deleted"  # deleted=1
    ROW_MISSING = "row_missing"  # hard-deleted
    TABLE_MISSING = "table_missing"  # the table is no longer in the database


class RunWithoutWritesError(ValueError):
    """A run that wrote nothing has no observed outcome."""


_ACTIONS = {action.value: action for action in Action}
_HISTORY_ORDER = attrgetter("tstamp", "uid")


@dataclass(frozen=True)
class HistoryRow:
    """One sys_history row of the written record; only the keys of history_data, never its values."""

    uid: int
    tstamp: int
    actiontype: int
    fields: frozenset[str] | None  # newRecord's keys (modify), the record's (add); None when unreadable

    @property
    def action(self) -> Action | None:
        """The row's action; None for a code this version does not know, which counts as no modification."""
        return _ACTIONS.get(self.actiontype)


@dataclass(frozen=True)
class Write:
    """One tool_write event: W wrote record `uid` of `table` at `written_at` (the event's crdate, t)."""

    event_uid: int
    table: str
    uid: int
    written_at: int


@dataclass(frozen=True)
class WriteOutcome:
    event_uid: int
    outcome: CallOutcome
    reason: UnknownReason | None  # only for UNKNOWN
    edit_scope: EditScope | None  # only for EDITED
    first_change_after_s: int | None  # t to the first human row in the window, of any kind
    decided_by: tuple[int, ...]  # sys_history uids: the evidence row, then the human rows that decided
    rule_version: str = RULE_VERSION

    def __post_init__(self) -> None:
        if (self.reason is None) == (self.outcome == CallOutcome.UNKNOWN):
            raise ValueError(f"an outcome has a reason exactly when it is unknown: {self}")
        if (self.edit_scope is None) == (self.outcome == CallOutcome.EDITED):
            raise ValueError(f"an outcome has an edit scope exactly when it is edited: {self}")


# 003_…, "The classification", applied to the human rows of the window: the first action found decides,
# in this order; none of them → ACCEPTED_UNCHANGED. Move, undelete, stage change, publish and add are not
# modifications (DESIGN.md rule 4).
WINDOW_CLASSIFICATION: tuple[tuple[Action, CallOutcome], ...] = (
    (Action.DELETE, CallOutcome.DISCARDED),
    (Action.MODIFY, CallOutcome.EDITED),
)

# 003_…, "One outcome per RUN": the worst write decides, best first here.
PRECEDENCE: tuple[CallOutcome, ...] = (
    CallOutcome.ACCEPTED_UNCHANGED,
    CallOutcome.UNKNOWN,
    CallOutcome.EDITED,
    CallOutcome.DISCARDED,
)


def is_due(last_write_at: int, now: int, window_s: int) -> bool:
    """A run is derived once the window of its LAST write has closed, i.e. `now` is past its end (rule 1)."""
    return window_closed(last_write_at, now, window_s)


def run_outcome(outcomes: Iterable[CallOutcome]) -> CallOutcome:
    """A run's outcome is its worst write's: DISCARDED > EDITED > UNKNOWN > ACCEPTED_UNCHANGED."""
    worst = max(outcomes, key=PRECEDENCE.index, default=None)
    if worst is None:
        raise RunWithoutWritesError("a run without writes has no observed outcome")
    return worst


def unreadable_target(event_uid: int) -> WriteOutcome:
    """A write whose target cannot be read is UNKNOWN, reason unreadable_target (DESIGN.md rule 6)."""
    return _unknown(event_uid, UnknownReason.UNREADABLE_TARGET)


@dataclass(frozen=True)
class WriteFacts:
    """What the decision tables ask of one write W, reduced from its record's history rows.

    The SQL path (adapters.write_facts) aggregates the same facts per write in the database; `decide` and the
    compiled CASE expressions read them through the same tables (WRITE_DECISION, EDIT_SCOPE_DECISION)."""

    target_readable: bool  # the payload names a table that holds records, and a uid (rule 6)
    gone: bool  # the record's row is missing, deleted=1, or its table is gone (rule 2)
    deleted_in_window: bool  # some delete row of the record with t < tstamp <= t + window
    deleted_after_window: bool  # some delete row stamped after the window
    evidence: bool  # a retained row with tstamp <= t + SAME_SAVE_S (rule 3)
    history_reaches_back: bool  # the oldest row left in sys_history is at or before t
    human_actions: frozenset[Action]  # the actions of the human rows of the window (rule 4)
    changed_unreadable: bool = False  # a human modify row whose keys cannot be read (rule 7)
    changed: frozenset[str] = frozenset()  # the human modify rows' keys, bookkeeping fields left out
    written: frozenset[str] | None = None  # W's own row's keys; None when W has no readable own row


class WriteTest(StrEnum):
    """A question WRITE_DECISION asks of a write's facts."""

    TARGET_UNREADABLE = "target_unreadable"
    RECORD_GONE = "record_gone"  # gone, unless sys_history shows the delete only after the window
    HISTORY_TRIMMED = "history_trimmed"  # no evidence, and history does not reach back to t
    NO_EVIDENCE = "no_evidence"
    HUMAN_DELETE = "human_delete"
    HUMAN_MODIFY = "human_modify"
    OTHERWISE = "otherwise"


class ScopeTest(StrEnum):
    """A question EDIT_SCOPE_DECISION asks of an EDITED write's facts."""

    CHANGED_UNREADABLE = "changed_unreadable"
    ONLY_RELEASE_CHANGED = "only_release_changed"
    WRITTEN_UNKNOWN = "written_unknown"
    SAME_FIELD_CHANGED = "same_field_changed"
    OTHERWISE = "otherwise"


# The human action each window test asks about (003_…, "The classification"; WINDOW_CLASSIFICATION's order).
WINDOW_TESTS: dict[Action, WriteTest] = {
    Action.DELETE: WriteTest.HUMAN_DELETE,
    Action.MODIFY: WriteTest.HUMAN_MODIFY,
}

# DESIGN.md rules 2, 3, 6 and 4, in the order they decide: the first test that holds gives the outcome (and,
# for UNKNOWN, the reason). The window's part follows WINDOW_CLASSIFICATION.
WRITE_DECISION: tuple[tuple[WriteTest, CallOutcome, UnknownReason | None], ...] = (
    (WriteTest.TARGET_UNREADABLE, CallOutcome.UNKNOWN, UnknownReason.UNREADABLE_TARGET),
    (WriteTest.RECORD_GONE, CallOutcome.DISCARDED, None),
    (WriteTest.HISTORY_TRIMMED, CallOutcome.UNKNOWN, UnknownReason.HISTORY_TRIMMED),
    (WriteTest.NO_EVIDENCE, CallOutcome.UNKNOWN, UnknownReason.NO_HISTORY_ROW),
    *((WINDOW_TESTS[action], outcome, None) for action, outcome in WINDOW_CLASSIFICATION),
    (WriteTest.OTHERWISE, CallOutcome.ACCEPTED_UNCHANGED, None),
)

# DESIGN.md rule 7, in the order it decides.
EDIT_SCOPE_DECISION: tuple[tuple[ScopeTest, EditScope], ...] = (
    (ScopeTest.CHANGED_UNREADABLE, EditScope.FIELDS_UNKNOWN),
    (ScopeTest.ONLY_RELEASE_CHANGED, EditScope.RELEASED_ONLY),
    (ScopeTest.WRITTEN_UNKNOWN, EditScope.FIELDS_UNKNOWN),
    (ScopeTest.SAME_FIELD_CHANGED, EditScope.SAME_FIELDS),
    (ScopeTest.OTHERWISE, EditScope.OTHER_FIELDS),
)


def write_test_holds(test: WriteTest, facts: WriteFacts) -> bool:
    """Whether a WRITE_DECISION test holds for the facts (the SQL path compiles the same tests)."""
    if test is WriteTest.TARGET_UNREADABLE:
        return not facts.target_readable
    if test is WriteTest.RECORD_GONE:
        return facts.gone and (facts.deleted_in_window or not facts.deleted_after_window)
    if test is WriteTest.HISTORY_TRIMMED:
        return not facts.evidence and not facts.history_reaches_back
    if test is WriteTest.NO_EVIDENCE:
        return not facts.evidence
    if test is WriteTest.HUMAN_DELETE:
        return Action.DELETE in facts.human_actions
    if test is WriteTest.HUMAN_MODIFY:
        return Action.MODIFY in facts.human_actions
    return True


def scope_test_holds(test: ScopeTest, facts: WriteFacts) -> bool:
    """Whether an EDIT_SCOPE_DECISION test holds for the facts."""
    if test is ScopeTest.CHANGED_UNREADABLE:
        return facts.changed_unreadable
    if test is ScopeTest.ONLY_RELEASE_CHANGED:
        return facts.changed == {RELEASE_FIELD}
    if test is ScopeTest.WRITTEN_UNKNOWN:
        return facts.written is None
    if test is ScopeTest.SAME_FIELD_CHANGED:
        return facts.written is not None and bool((facts.changed - {RELEASE_FIELD}) & facts.written)
    return True


def decide(facts: WriteFacts) -> tuple[CallOutcome, UnknownReason | None, EditScope | None]:
    """The outcome, reason and edit scope the decision tables give for the facts."""
    outcome, reason = next((o, r) for test, o, r in WRITE_DECISION if write_test_holds(test, facts))
    scope = None
    if outcome is CallOutcome.EDITED:
        scope = next(s for test, s in EDIT_SCOPE_DECISION if scope_test_holds(test, facts))
    return outcome, reason, scope


def classify_write(
    write: Write,
    history: Sequence[HistoryRow],
    ai_write_times: Sequence[int],
    presence: Presence,
    oldest_retained_tstamp: int | None,
    window_s: int,
) -> WriteOutcome:
    """What became of W, from the retained history rows of its record inside its window (rules 2-4, 7)."""
    t = write.written_at
    closes = window_closes_at(t, window_s)
    rows = sorted(history, key=_HISTORY_ORDER)
    evidence = _evidence_row(rows, t)
    human = _human_rows(rows, t, closes, ai_write_times)
    modifications = tuple(row for row in human if row.action is Action.MODIFY)
    deletes = [row.tstamp for row in rows if row.action is Action.DELETE]
    facts = WriteFacts(
        target_readable=True,
        gone=presence is not Presence.PRESENT,
        deleted_in_window=any(t < tstamp <= closes for tstamp in deletes),
        deleted_after_window=any(tstamp > closes for tstamp in deletes),
        evidence=evidence is not None,
        history_reaches_back=oldest_retained_tstamp is not None and oldest_retained_tstamp <= t,
        human_actions=frozenset(action for row in human if (action := row.action) is not None),
        changed_unreadable=any(row.fields is None for row in modifications),
        changed=frozenset().union(*(row.fields or () for row in modifications)) - BOOKKEEPING_FIELDS,
        written=_written_fields(write, evidence) if evidence is not None else None,
    )
    outcome, reason, scope = decide(facts)
    if outcome is CallOutcome.UNKNOWN:
        assert reason is not None
        return _unknown(write.event_uid, reason)
    if outcome is CallOutcome.DISCARDED and write_test_holds(WriteTest.RECORD_GONE, facts):
        # DESIGN.md rule 2: a record that is gone is a fact whatever the history says, evidence or not.
        deciding = tuple(row for row in rows if row.action is Action.DELETE and t < row.tstamp <= closes)
    else:
        action = next((a for a, o in WINDOW_CLASSIFICATION if o is outcome), None)
        deciding = tuple(row for row in human if row.action is action) if action is not None else ()
    return WriteOutcome(
        event_uid=write.event_uid,
        outcome=outcome,
        reason=None,
        edit_scope=scope,
        first_change_after_s=human[0].tstamp - t if human else None,
        decided_by=_uids(evidence, deciding),
    )


def _unknown(event_uid: int, reason: UnknownReason) -> WriteOutcome:
    return WriteOutcome(
        event_uid=event_uid,
        outcome=CallOutcome.UNKNOWN,
        reason=reason,
        edit_scope=None,
        first_change_after_s=None,
        decided_by=(),
    )


def _evidence_row(rows: Sequence[HistoryRow], t: int) -> HistoryRow | None:
    """The newest retained row at or just after W (normally W's own row), proving its history survived.

    `rows` are in (tstamp, uid) order: the candidates are the rows before the first one stamped later."""
    evidence = None
    for row in rows:
        if row.tstamp > t + SAME_SAVE_S:
            break
        evidence = row
    return evidence


def _missing_evidence_reason(t: int, oldest_retained_tstamp: int | None) -> UnknownReason:
    # 003_…, "The classification": history is trimmed oldest-first, so only the OLDEST row left in all of
    # sys_history tells whether W's own row could have been trimmed away.
    if oldest_retained_tstamp is None or oldest_retained_tstamp > t:
        return UnknownReason.HISTORY_TRIMMED
    return UnknownReason.NO_HISTORY_ROW


def _human_rows(
    rows: Sequence[HistoryRow], t: int, closes: int, ai_write_times: Sequence[int]
) -> tuple[HistoryRow, ...]:
    """The rows of W's window that are no AI write's own: none within SAME_SAVE_S of W or of another AI write.

    W's own: a row after t within SAME_SAVE_S of it, i.e. not t + SAME_SAVE_S < tstamp."""
    human = []
    for row in rows:
        tstamp = row.tstamp
        if t + SAME_SAVE_S < tstamp <= closes:
            for at in ai_write_times:
                if abs(tstamp - at) <= SAME_SAVE_S:
                    break
            else:
                human.append(row)
    return tuple(human)


def _written_fields(write: Write, evidence: HistoryRow) -> frozenset[str] | None:
    # DESIGN.md rule 7: the fields W wrote are its own history row's keys; the card's fields are not read.
    # The evidence row is W's own only when it lies within the same save of t and records an add or a modify.
    own = (
        abs(evidence.tstamp - write.written_at) <= SAME_SAVE_S
        and evidence.action in (Action.ADD, Action.MODIFY)
        and evidence.fields is not None
    )
    return evidence.fields if own else None


def _uids(evidence: HistoryRow | None, deciding: Iterable[HistoryRow]) -> tuple[int, ...]:
    head = (evidence.uid,) if evidence is not None else ()
    return head + tuple(row.uid for row in deciding) if deciding else head
