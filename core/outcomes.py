"""The observed outcome of an AI write, derived from sys_history inside a window, and of a run (003_…).

What a write's history rows are, the decision tables that say what became of it (`decide`, read by
core.classification and compiled to SQL by adapters.decision), and `run_outcome`, which combines a run's
writes by precedence. DESIGN.md, "Rules decided where the records leave
room", rules 1-8, is the authority for every choice the seed leaves open.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import IntEnum, StrEnum

from core.window import (
    window_closed,
)

# DESIGN.md rule 8: every derived row carries the version of the rules that produced it. Raise it whenever a
# rule here changes what a write or a run is classified as.
RULE_VERSION = "2026.12-4"

# DESIGN.md rule 3: TYPO3 stamps a row with the start of the process that wrote it (DOMAIN.md, "When a row is
# stamped"), so no stamp tells W's own row. What bounds it is the order of insertion: a row inserted by W's
# moment t has no row before it (in uid order) stamped later than t, give or take the seconds by which two
# machines' clocks may differ.
SAME_SAVE_S = 2

# Columns DataHandler sets itself whenever it saves (the ctrl 'tstamp' field; the translation's copy of its
# source in l10n_diffsource), not because someone changed them: in newRecord they say nothing about
# whose text changed, and would make every edit look like one of our fields (DESIGN.md rule 7).
BOOKKEEPING_FIELDS: frozenset[str] = frozenset({"tstamp", "l10n_diffsource"})

# The backend user TYPO3's scheduler tasks and CLI commands act as (DOMAIN.md, "Who wrote it"): its rows are
# automation's, no human's (DESIGN.md rule 4).
AUTOMATION_USER = "_cli_"
# DOMAIN.md, "Who wrote it": DataHandler writes usertype 'BE' and the backend user's uid; Extbase history
# tracking writes 'FE' rows whose userid is a frontend user's, and '' rows where no user was logged in. Only a
# 'BE' row's userid is compared with a run's be_user or the _cli_ user: any other row is no AI row, and no
# automation row either (rule 4 knows automation only as the _cli_ backend user).
BACKEND_USERTYPE = "BE"

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
    OWN_ROW_UNCLEAR = "own_row_unclear"  # W's writer has rows that could be W's, but later writes need them
    CHANGED_BY_AUTOMATION = "changed_by_automation"  # no human edited it, but it did not survive untouched


class EditScope(StrEnum):
    RELEASED_ONLY = "released_only"
    REVERTED = "reverted"
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
# The actions of a write's own row: the tools add, update, move and delete records. Only an add or a modify
# says which fields W wrote (DESIGN.md rule 7).
OWN_ACTIONS = (Action.ADD, Action.MODIFY, Action.MOVE, Action.DELETE)
FIELD_ACTIONS = (Action.ADD, Action.MODIFY)
CHANGE_ACTIONS = (Action.MODIFY, Action.PUBLISH)  # the actions that change the live record's fields


@dataclass(frozen=True)
class HistoryRow:
    """One sys_history row of the written record; only the keys of history_data, never its values.

    Who wrote it is known only as comparisons made inside SQL: `channel` names the AI writes of this record
    whose run's backend user wrote the row (one event uid among them names them all, Write.channel),
    `by_automation` that the `_cli_` user wrote it, `restores` which rows' old values its new values equal."""

    uid: int
    tstamp: int
    actiontype: int
    fields: frozenset[str] | None  # newRecord's keys (modify), the record's (add); None when unreadable
    live: bool = True  # workspace 0; core.workspaces tells which rows of a workspace changed the live record
    by_automation: bool = False  # written as the _cli_ backend user (a scheduler task, a CLI command)
    channel: int | None = (
        None  # Write.channel of the writes whose backend user wrote it; None: no AI writer's
    )
    named_run: str | None = None  # the run uuid its correlation_id names as the scope
    restores: frozenset[tuple[int, str]] = (
        frozenset()
    )  # (row uid, field): newRecord[field] = that oldRecord's

    @property
    def action(self) -> Action | None:
        """The row's action; None for a code this version does not know, which counts as no modification."""
        return _ACTIONS.get(self.actiontype)


@dataclass(frozen=True)
class Write:
    """One tool_write event: W wrote record `uid` of `table` at `written_at` (the event's crdate, t).

    `channel` groups the AI writes of one record whose runs act as the same backend user (compared in SQL: one
    event uid among them names them all); `run` is the run's uuid."""

    event_uid: int
    table: str
    uid: int
    written_at: int
    run: str = ""
    channel: int | None = None  # None: the event uid itself (a writer no other write of the record shares)

    @property
    def lane(self) -> int:
        return self.event_uid if self.channel is None else self.channel


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
# in this order; none of them → ACCEPTED_UNCHANGED. A publish of a draft changes the live record (DESIGN.md
# rule 4); move, undelete, stage change and add are not modifications.
WINDOW_CLASSIFICATION: tuple[tuple[Action, CallOutcome], ...] = (
    (Action.DELETE, CallOutcome.DISCARDED),
    (Action.MODIFY, CallOutcome.EDITED),
    (Action.PUBLISH, CallOutcome.EDITED),
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
    return unknown_outcome(event_uid, UnknownReason.UNREADABLE_TARGET)


@dataclass(frozen=True)
class WriteFacts:
    """What the decision tables ask of one write W, reduced from its record's history rows.

    The SQL path (adapters.derive_batch) aggregates the same facts per write in the database; `decide` and the
    compiled CASE expressions read them through the same tables (WRITE_DECISION, EDIT_SCOPE_DECISION)."""

    target_readable: bool  # the payload names a table that holds records, and a uid (rule 6)
    gone: bool  # the record's row is missing, deleted=1, or its table is gone (rule 2)
    deleted_in_window: bool  # a live delete row inserted after W's own, stamped up to t + window
    deleted_after_window: bool  # a live delete row inserted after W's own, stamped after the window
    evidence: bool  # W's own row, or its writer's rows that could be it (rule 3; 003_…: no older survivor)
    history_reaches_back: bool  # the oldest row left in sys_history is at or before t
    human_actions: frozenset[Action]  # the actions of the human rows of the window (rule 4)
    own_row_unclear: bool = False  # rows of W's writer could be W's own, but later writes need them all
    automation_changed: bool = False  # an automation row of the window changed a field W wrote (rule 4)
    changed_unreadable: bool = False  # a human change whose keys cannot be read (rule 7)
    changed: frozenset[str] = frozenset()  # the human changes' keys, bookkeeping fields left out
    written: frozenset[str] | None = None  # W's own row's keys; None when W has no readable own row
    reverted: bool = False  # every field W wrote holds again the value it had before W (rule 7)


class WriteTest(StrEnum):
    """A question WRITE_DECISION asks of a write's facts."""

    TARGET_UNREADABLE = "target_unreadable"
    RECORD_GONE = "record_gone"  # gone, unless sys_history shows the delete only after the window
    HISTORY_TRIMMED = "history_trimmed"  # no evidence, and history does not reach back to t
    NO_EVIDENCE = "no_evidence"
    OWN_ROW_UNCLEAR = "own_row_unclear"
    HUMAN_DELETE = "human_delete"
    HUMAN_MODIFY = "human_modify"
    HUMAN_PUBLISH = "human_publish"
    AUTOMATION_CHANGE = "automation_change"
    OTHERWISE = "otherwise"


class ScopeTest(StrEnum):
    """A question EDIT_SCOPE_DECISION asks of an EDITED write's facts."""

    CHANGED_UNREADABLE = "changed_unreadable"
    ONLY_RELEASE_CHANGED = "only_release_changed"
    WRITTEN_UNKNOWN = "written_unknown"
    REVERTED = "reverted"
    SAME_FIELD_CHANGED = "same_field_changed"
    OTHERWISE = "otherwise"


# The human action each window test asks about (003_…, "The classification"; WINDOW_CLASSIFICATION's order).
WINDOW_TESTS: dict[Action, WriteTest] = {
    Action.DELETE: WriteTest.HUMAN_DELETE,
    Action.MODIFY: WriteTest.HUMAN_MODIFY,
    Action.PUBLISH: WriteTest.HUMAN_PUBLISH,
}

# DESIGN.md rules 2, 3, 6 and 4, in the order they decide: the first test that holds gives the outcome (and,
# for UNKNOWN, the reason). The window's part follows WINDOW_CLASSIFICATION; an automation's change counts
# only where no human changed the record.
WRITE_DECISION: tuple[tuple[WriteTest, CallOutcome, UnknownReason | None], ...] = (
    (WriteTest.TARGET_UNREADABLE, CallOutcome.UNKNOWN, UnknownReason.UNREADABLE_TARGET),
    (WriteTest.RECORD_GONE, CallOutcome.DISCARDED, None),
    (WriteTest.HISTORY_TRIMMED, CallOutcome.UNKNOWN, UnknownReason.HISTORY_TRIMMED),
    (WriteTest.NO_EVIDENCE, CallOutcome.UNKNOWN, UnknownReason.NO_HISTORY_ROW),
    (WriteTest.OWN_ROW_UNCLEAR, CallOutcome.UNKNOWN, UnknownReason.OWN_ROW_UNCLEAR),
    *((WINDOW_TESTS[action], outcome, None) for action, outcome in WINDOW_CLASSIFICATION),
    (WriteTest.AUTOMATION_CHANGE, CallOutcome.UNKNOWN, UnknownReason.CHANGED_BY_AUTOMATION),
    (WriteTest.OTHERWISE, CallOutcome.ACCEPTED_UNCHANGED, None),
)

# DESIGN.md rule 7, in the order it decides.
EDIT_SCOPE_DECISION: tuple[tuple[ScopeTest, EditScope], ...] = (
    (ScopeTest.CHANGED_UNREADABLE, EditScope.FIELDS_UNKNOWN),
    (ScopeTest.ONLY_RELEASE_CHANGED, EditScope.RELEASED_ONLY),
    (ScopeTest.WRITTEN_UNKNOWN, EditScope.FIELDS_UNKNOWN),
    (ScopeTest.REVERTED, EditScope.REVERTED),
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
    if test is WriteTest.OWN_ROW_UNCLEAR:
        return facts.own_row_unclear
    if test is WriteTest.AUTOMATION_CHANGE:
        return facts.automation_changed
    action = next((a for a, t in WINDOW_TESTS.items() if t is test), None)
    if action is not None:
        return action in facts.human_actions
    return True


def scope_test_holds(test: ScopeTest, facts: WriteFacts) -> bool:
    """Whether an EDIT_SCOPE_DECISION test holds for the facts."""
    if test is ScopeTest.CHANGED_UNREADABLE:
        return facts.changed_unreadable
    if test is ScopeTest.ONLY_RELEASE_CHANGED:
        return facts.changed == {RELEASE_FIELD}
    if test is ScopeTest.WRITTEN_UNKNOWN:
        return facts.written is None
    if test is ScopeTest.REVERTED:
        return facts.reverted
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


def unknown_outcome(event_uid: int, reason: UnknownReason) -> WriteOutcome:
    return WriteOutcome(
        event_uid=event_uid,
        outcome=CallOutcome.UNKNOWN,
        reason=reason,
        edit_scope=None,
        first_change_after_s=None,
        decided_by=(),
    )
