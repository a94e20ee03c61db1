"""core.outcomes' decision tables compiled into SQL CASE expressions, and core.window's spans into SQL
conditions (DESIGN.md, "The data path").

WRITE_DECISION, EDIT_SCOPE_DECISION and PRECEDENCE are read here, row by row, in their order; each test is
stated once over the columns of a write's facts (`FactColumns`, aggregated by adapters.derive_batch). A table
changed in core changes this SQL with it; core.outcomes.decide reads the same tables in Python, and the
differential tests hold the two together. A span (core.window.HUMAN_ROWS, DELETES) is compiled by `in_span`
over a history row's columns and its write's own row and window end, the way core.window.in_span reads it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import ColumnElement, and_, case, false, func, literal, or_, true

from core.outcomes import (
    EDIT_SCOPE_DECISION,
    PRECEDENCE,
    WINDOW_TESTS,
    WRITE_DECISION,
    Action,
    CallOutcome,
    Presence,
    ScopeTest,
    WriteTest,
)
from core.window import Inserted, Span, Stamped


@dataclass(frozen=True)
class FactColumns:
    """The SQL columns of one write's facts (core.outcomes.WriteFacts), as counts where Python has sets."""

    target_unreadable: ColumnElement[bool]
    presence: ColumnElement[Any]  # core.outcomes.Presence value
    deletes_in_window: ColumnElement[Any]
    deletes_after_window: ColumnElement[Any]
    evidence_uid: ColumnElement[Any]  # NULL without evidence
    history_reaches_back: ColumnElement[bool]
    own_row_unclear: ColumnElement[Any]  # 1 when the rows cannot tell which is W's own
    human_actions: Mapping[Action, ColumnElement[Any]]  # the window's human rows of each WINDOW_TESTS action
    unreadable_changes: ColumnElement[Any]  # human changes whose keys cannot be read
    automation_unreadable: ColumnElement[Any]  # automation changes whose keys cannot be read
    automation_keys: ColumnElement[Any]  # keys the window's automation changes changed
    automation_same: ColumnElement[Any]  # of those, the ones W wrote
    written_fields: ColumnElement[Any]  # W's own row's keys (text), NULL when it has none readable
    changed: ColumnElement[Any]  # distinct changed fields, bookkeeping left out
    release_changed: ColumnElement[Any]  # of those, RELEASE_FIELD (0 or 1)
    same_changed: ColumnElement[Any]  # of those other than RELEASE_FIELD, the ones W wrote
    reverted: ColumnElement[Any]  # 1 when every field W wrote holds its old value again


def _count(column: ColumnElement[Any]) -> ColumnElement[Any]:
    return func.coalesce(column, 0)


def write_test(test: WriteTest, facts: FactColumns) -> ColumnElement[bool]:
    """core.outcomes.write_test_holds, in SQL."""
    if test is WriteTest.TARGET_UNREADABLE:
        return facts.target_unreadable
    if test is WriteTest.RECORD_GONE:
        gone = func.coalesce(facts.presence, Presence.PRESENT.value) != Presence.PRESENT.value
        return and_(gone, or_(_count(facts.deletes_in_window) > 0, _count(facts.deletes_after_window) == 0))
    if test is WriteTest.HISTORY_TRIMMED:
        return and_(facts.evidence_uid.is_(None), ~facts.history_reaches_back)
    if test is WriteTest.NO_EVIDENCE:
        return facts.evidence_uid.is_(None)
    if test is WriteTest.OWN_ROW_UNCLEAR:
        return _count(facts.own_row_unclear) > 0
    if test is WriteTest.AUTOMATION_CHANGE:
        # core.outcomes._meets: any automation change whose keys cannot be read; any key when W's fields
        # are unknown; else one of W's fields.
        return or_(
            _count(facts.automation_unreadable) > 0,
            and_(facts.written_fields.is_(None), _count(facts.automation_keys) > 0),
            _count(facts.automation_same) > 0,
        )
    if test is WriteTest.OTHERWISE:
        return true()
    action = next((a for a, t in WINDOW_TESTS.items() if t is test), None)
    if action is None:
        raise NotImplementedError(f"no SQL for the write test {test}")
    return _count(facts.human_actions[action]) > 0


def scope_test(test: ScopeTest, facts: FactColumns) -> ColumnElement[bool]:
    """core.outcomes.scope_test_holds, in SQL."""
    if test is ScopeTest.CHANGED_UNREADABLE:
        return _count(facts.unreadable_changes) > 0
    if test is ScopeTest.ONLY_RELEASE_CHANGED:
        return and_(_count(facts.changed) == 1, _count(facts.release_changed) == 1)
    if test is ScopeTest.WRITTEN_UNKNOWN:
        return facts.written_fields.is_(None)
    if test is ScopeTest.REVERTED:
        return _count(facts.reverted) > 0
    if test is ScopeTest.SAME_FIELD_CHANGED:
        return and_(facts.written_fields.is_not(None), _count(facts.same_changed) > 0)
    if test is ScopeTest.OTHERWISE:
        return true()
    raise NotImplementedError(f"no SQL for the scope test {test}")


def deciding_test(facts: FactColumns) -> ColumnElement[Any]:
    """Which WRITE_DECISION test decides the write (its name): the first whose test holds. The outcome and
    the reason follow from it (`outcome_of`, `reason_of`), so the tests are asked once per write."""
    return case(*[(write_test(test, facts), literal(test.value)) for test, _, _ in WRITE_DECISION])


def outcome_of(test_name: ColumnElement[Any]) -> ColumnElement[Any]:
    """The outcome WRITE_DECISION gives for the deciding test's name."""
    return case(*[(test_name == test.value, literal(o.value)) for test, o, _ in WRITE_DECISION])


def reason_of(test_name: ColumnElement[Any]) -> ColumnElement[Any]:
    """The reason of an UNKNOWN write for the deciding test's name, '' for every other."""
    return case(*[(test_name == test.value, literal(r.value if r else "")) for test, _, r in WRITE_DECISION])


def decides(test_name: ColumnElement[Any], outcome: CallOutcome) -> ColumnElement[bool]:
    """Whether the deciding test's name gives `outcome`."""
    return test_name.in_([test.value for test, o, _ in WRITE_DECISION if o is outcome])


def edit_scope(facts: FactColumns) -> ColumnElement[Any]:
    """The edit scope the facts give (the first EDIT_SCOPE_DECISION row whose test holds); it is the write's
    only when it is EDITED."""
    return case(*[(scope_test(test, facts), literal(s.value)) for test, s in EDIT_SCOPE_DECISION])


def rank(outcome_value: ColumnElement[Any]) -> ColumnElement[Any]:
    """The outcome's place in PRECEDENCE (0 best): a run's outcome is its writes' highest."""
    return case(*[(outcome_value == o.value, i) for i, o in enumerate(PRECEDENCE)], else_=0)


def ranked(highest: ColumnElement[Any]) -> ColumnElement[Any]:
    """The outcome at a PRECEDENCE place."""
    return case(*[(highest == i, literal(o.value)) for i, o in enumerate(PRECEDENCE)])


def reaches_back(written_at: ColumnElement[int], oldest: int | None) -> ColumnElement[bool]:
    """Whether the oldest row left in sys_history is at or before the write (history_reaches_back)."""
    return false() if oldest is None else written_at >= oldest


@dataclass(frozen=True)
class SpanColumns:
    """The SQL columns a span's bounds compare: a history row's uid and tstamp, and its write's own row (the
    evidence boundary, 0 without one) and window end (t + window)."""

    uid: ColumnElement[Any]
    tstamp: ColumnElement[Any]
    own_row: ColumnElement[Any]
    closes: ColumnElement[Any]


def inserted_in(inserted: Inserted, columns: SpanColumns) -> ColumnElement[bool]:
    """core.window.inserted_in, in SQL."""
    if inserted is Inserted.AFTER_OWN_ROW:
        return columns.uid > columns.own_row
    raise NotImplementedError(f"no SQL for {inserted}")


def stamped_in(stamped: Stamped, columns: SpanColumns) -> ColumnElement[bool]:
    """core.window.stamped_in, in SQL."""
    if stamped is Stamped.UP_TO_CLOSE:
        return columns.tstamp <= columns.closes
    if stamped is Stamped.AFTER_CLOSE:
        return columns.tstamp > columns.closes
    return true()


def in_span(span: Span, columns: SpanColumns) -> ColumnElement[bool]:
    """core.window.in_span, in SQL: the row lies where the span starts and within its time."""
    return and_(inserted_in(span.inserted, columns), stamped_in(span.stamped, columns))
