"""Which rows of a workspace changed the live record (core.workspaces, DESIGN.md rule 4 read with TYPO3's
code): a draft's rows that a publish moved onto the record are none; TYPO3 before 13.4.16 publishes as a
modify row of the publisher's workspace, and a table without versioning is edited live from a workspace."""

from __future__ import annotations

from core.outcomes import Action, HistoryRow
from core.workspaces import live_changes


def _row(uid: int, action: Action, *, live: bool) -> HistoryRow:
    return HistoryRow(uid=uid, tstamp=uid, actiontype=action.value, fields=frozenset({"title"}), live=live)


def _live(*rows: HistoryRow) -> list[bool]:
    return [row.live for row in live_changes(rows)]


def test_a_workspaces_modify_after_a_live_row_and_before_no_publish_changed_the_live_record() -> None:
    assert _live(_row(1, Action.ADD, live=True), _row(2, Action.MODIFY, live=False)) == [True, True]


def test_a_drafts_rows_a_publish_moved_onto_the_record_are_drafts() -> None:
    rows = (
        _row(1, Action.ADD, live=True),
        _row(2, Action.MODIFY, live=False),
        _row(3, Action.PUBLISH, live=True),
    )

    assert _live(*rows) == [True, False, True]


def test_the_rows_of_a_record_created_in_a_workspace_are_drafts_until_a_live_row() -> None:
    rows = (
        _row(1, Action.ADD, live=False),
        _row(2, Action.MODIFY, live=False),
        _row(3, Action.MODIFY, live=True),
        _row(4, Action.MODIFY, live=False),
    )

    assert _live(*rows) == [False, False, True, True]


def test_only_the_rows_before_the_records_last_publish_are_drafts() -> None:
    rows = (
        _row(1, Action.ADD, live=True),
        _row(2, Action.MODIFY, live=False),
        _row(3, Action.PUBLISH, live=True),
        _row(4, Action.MODIFY, live=False),
    )

    assert _live(*rows) == [True, False, True, True]
