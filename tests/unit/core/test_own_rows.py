"""Own rows and AI rows as TYPO3 writes them (DESIGN.md rules 3, 4 and 7; DOMAIN.md, "When a row is stamped").

A row's tstamp is the start of the process that wrote it: seconds before the tool_write event in the chat's
exec strategy, days before in its worker strategy. W's own row is found by who wrote it (its lane), by
insertion order (uid) and by W's moment, never by the stamp's distance to t.
"""

from __future__ import annotations

import pytest

from core.classification import classify_writes
from core.outcomes import (
    RULE_VERSION,
    WRITE_DECISION,
    Action,
    CallOutcome,
    EditScope,
    Presence,
    UnknownReason,
    WriteFacts,
    WriteOutcome,
    decide,
)
from core.own_rows import match_own_rows
from core.time import DAY_S
from tests.unit.core.test_outcomes import (
    CLOSES,
    EDITOR,
    LONG_AGO,
    OTHER_EDITOR,
    WINDOW,
    T,
    a_row,
    a_write,
    classify,
    own_row,
)

DAY = DAY_S
HOUR_S = 3600
ACCEPTED = CallOutcome.ACCEPTED_UNCHANGED
EDITED = CallOutcome.EDITED
DISCARDED = CallOutcome.DISCARDED
UNKNOWN = CallOutcome.UNKNOWN


def hand_edit(uid: int, at: int, *fields: str, channel: int | None = None, **extra):
    """An editor's save in the backend: stamped at the start of its request, i.e. when it happened."""
    return a_row(uid, at, Action.MODIFY, fields or ("bodytext",), channel=channel, **extra)


# --- the stamps of the chat's two strategies ----------------------------------------------------------------


def test_an_exec_card_write_stamped_3_s_before_its_event_is_its_own_row():
    rows = (own_row(("bodytext",), at=T - 3), hand_edit(11, T + DAY, "bodytext"))

    result = classify(*rows)

    assert result.outcome is EDITED
    assert result.edit_scope is EditScope.SAME_FIELDS
    assert result.decided_by == (10, 11)


def test_a_write_75_s_into_a_long_turn_is_matched_to_its_row_stamped_at_the_turns_start():
    rows = (own_row(("header",), at=T - 75), hand_edit(11, T + HOUR_S, "header"))

    result = classify(*rows)

    assert result.edit_scope is EditScope.SAME_FIELDS


def test_a_worker_started_three_days_before_the_write_stamps_its_own_row():
    rows = (
        a_row(5, T - 30 * DAY, Action.ADD, ("header", "bodytext")),
        own_row(("bodytext",), at=T - 3 * DAY),
        hand_edit(11, T + DAY, "bodytext"),
    )

    result = classify(*rows)

    assert result.outcome is EDITED
    assert result.edit_scope is EditScope.SAME_FIELDS


def test_a_worker_restarted_inside_the_window_writes_ai_rows_not_human_edits():
    started, restarted = T - 2 * DAY, T + DAY // 2
    second = a_write(T + DAY, event_uid=502, run="run-2")
    rows = (own_row(at=started), a_row(11, restarted, Action.MODIFY, ("header",), channel=EDITOR))

    results = classify_writes([a_write(), second], rows, Presence.PRESENT, LONG_AGO, WINDOW)

    assert results[501].outcome is ACCEPTED
    assert results[502].outcome is ACCEPTED
    assert results[502].decided_by == (11,)


def test_one_worker_stamp_shared_by_several_runs_of_one_editor_gives_each_its_own_row():
    worker = T - 5 * DAY
    writes = [a_write(T + i * HOUR_S, event_uid=501 + i, run=f"run-{i}") for i in range(3)]
    rows = tuple(a_row(10 + i, worker, Action.MODIFY, ("bodytext",), channel=EDITOR) for i in range(3))

    matched = match_own_rows(writes, rows)

    assert [matched[w.event_uid].own.uid for w in writes] == [10, 11, 12]


def test_a_rewrite_by_a_second_run_a_day_later_is_no_human_edit_of_the_first():
    second = a_write(T + DAY, event_uid=502, run="run-2", channel=OTHER_EDITOR)
    rows = (own_row(), a_row(11, second.written_at - 4, Action.MODIFY, ("bodytext",), channel=OTHER_EDITOR))

    results = classify_writes([a_write(), second], rows, Presence.PRESENT, LONG_AGO, WINDOW)

    assert results[501].outcome is ACCEPTED
    assert results[502].outcome is ACCEPTED


def test_the_chatting_editors_hand_edit_between_two_ai_writes_edits_the_first_only():
    second = a_write(T + 2 * HOUR_S, event_uid=502, run="run-2")
    rows = (
        own_row(("bodytext",)),
        hand_edit(11, T + HOUR_S, "bodytext", channel=EDITOR),
        a_row(12, second.written_at - 10, Action.MODIFY, ("header",), channel=EDITOR),
    )

    results = classify_writes([a_write(), second], rows, Presence.PRESENT, LONG_AGO, WINDOW)

    assert results[501].outcome is EDITED
    assert results[501].edit_scope is EditScope.SAME_FIELDS
    assert results[501].decided_by == (10, 11)
    assert results[502].outcome is ACCEPTED


def test_a_hand_edit_between_two_writes_of_one_worker_is_told_from_the_worker_rows_by_insertion_order():
    worker = T - DAY
    second = a_write(T + 2 * HOUR_S, event_uid=502, run="run-2")
    rows = (
        own_row(("bodytext",), at=worker),
        hand_edit(11, T + HOUR_S, "bodytext", channel=EDITOR),
        a_row(12, worker, Action.MODIFY, ("bodytext",), channel=EDITOR),
    )

    results = classify_writes([a_write(), second], rows, Presence.PRESENT, LONG_AGO, WINDOW)

    assert results[501].outcome is EDITED
    assert results[502].outcome is ACCEPTED
    assert results[502].decided_by == (12,)


def test_a_human_row_inserted_after_ws_own_but_stamped_before_t_is_after_our_write():
    rows = (own_row(at=T - DAY), hand_edit(11, T - HOUR_S, "bodytext", channel=OTHER_EDITOR))

    result = classify(*rows)

    assert result.outcome is EDITED
    assert result.first_change_after_s == 0


def test_a_row_of_ws_writer_stamped_at_t_plus_2_s_can_be_its_own_and_at_t_plus_3_s_cannot():
    at_bound = classify(own_row(at=T + 2))
    past_bound = classify(own_row(at=T + 3))

    assert at_bound.outcome is ACCEPTED
    assert at_bound.decided_by == (10,)
    assert past_bound.outcome is UNKNOWN
    assert past_bound.reason is UnknownReason.NO_HISTORY_ROW


def test_a_writer_row_at_a_later_writes_t_plus_2_s_is_its_own_and_at_t_plus_3_s_a_hand_edit_of_it():
    # At t' + 3 s the row was not inserted by the later write's moment: that write takes the lane's last row
    # inserted by then (W's), and W, left without one, cannot be told (rule 3, from the last write backwards).
    later = a_write(T + HOUR_S, event_uid=502, run="run-2")

    def both(at: int) -> dict[int, WriteOutcome]:
        rows = (own_row(at=T - 3), a_row(11, at, Action.MODIFY, ("bodytext",), channel=EDITOR))
        return classify_writes([a_write(), later], rows, Presence.PRESENT, LONG_AGO, WINDOW)

    at_bound, past_bound = both(T + HOUR_S + 2), both(T + HOUR_S + 3)

    assert (at_bound[501].outcome, at_bound[501].decided_by) == (ACCEPTED, (10,))
    assert (at_bound[502].outcome, at_bound[502].decided_by) == (ACCEPTED, (11,))
    assert (past_bound[501].outcome, past_bound[501].reason) == (UNKNOWN, UnknownReason.OWN_ROW_UNCLEAR)
    assert (past_bound[502].outcome, past_bound[502].decided_by) == (EDITED, (10, 11))


def test_a_row_inserted_after_a_row_stamped_past_t_plus_2_s_is_not_ws_own():
    rows = (hand_edit(9, T + 3, "header"), own_row(at=T - 60, uid=10))

    result = classify(*rows)

    assert result.outcome is UNKNOWN
    assert result.reason is UnknownReason.NO_HISTORY_ROW


def test_a_write_whose_writers_rows_are_all_taken_by_later_writes_is_unknown_own_row_unclear():
    second = a_write(T + HOUR_S, event_uid=502, run="run-2")
    rows = (own_row(at=T - 10), hand_edit(11, T + DAY, "bodytext"))

    results = classify_writes([a_write(), second], rows, Presence.PRESENT, LONG_AGO, WINDOW)

    assert results[501].outcome is UNKNOWN
    assert results[501].reason is UnknownReason.OWN_ROW_UNCLEAR
    assert results[501].decided_by == ()
    assert results[501].event_uid == 501


def test_an_unclear_write_is_never_edited_by_an_ai_row():
    second = a_write(T + HOUR_S, event_uid=502, run="run-2")
    rows = (own_row(at=T - 10), a_row(11, T - 10, Action.MODIFY, ("bodytext",), channel=EDITOR))
    third = a_write(T + 2 * HOUR_S, event_uid=503, run="run-3")

    results = classify_writes([a_write(), second, third], rows, Presence.PRESENT, LONG_AGO, WINDOW)

    assert results[501].reason is UnknownReason.OWN_ROW_UNCLEAR
    assert results[502].outcome is ACCEPTED


# --- workspaces ---------------------------------------------------------------------------------------------


def test_a_drafts_rows_a_publish_moved_onto_the_record_are_no_change_of_it_but_the_publish_is():
    rows = (
        own_row(("bodytext",)),
        hand_edit(11, T + DAY, "bodytext", live=False),
        a_row(12, T + 2 * DAY, Action.PUBLISH, ()),
    )

    result = classify(*rows)

    assert result.decided_by == (10, 12)


@pytest.mark.parametrize("action", [Action.MODIFY, Action.DELETE], ids=["modify", "delete"])
def test_a_workspaces_row_on_the_record_no_publish_follows_changed_the_live_record(action):
    # TYPO3 12.4 and 13.4.0-13.4.15 publish a draft as a modify row on the live uid with the publisher's
    # workspace; a table that is not versioned is edited live from a workspace.
    rows = (own_row(("bodytext",)), a_row(11, T + DAY, action, ("bodytext",), live=False))

    result = classify(*rows, presence=Presence.PRESENT)

    assert result.outcome is (EDITED if action is Action.MODIFY else DISCARDED)
    assert result.decided_by == (10, 11)


def test_a_workspaces_row_before_the_records_last_publish_is_a_draft_even_after_earlier_publishes():
    rows = (
        a_row(5, T - DAY, Action.PUBLISH, ()),
        own_row(("bodytext",)),
        hand_edit(12, T + DAY, "header", live=False),
        a_row(13, CLOSES + DAY, Action.PUBLISH, ()),
    )

    result = classify(*rows)

    assert result.outcome is ACCEPTED


def test_a_draft_published_inside_the_window_is_edited_with_the_drafts_fields():
    rows = (
        own_row(("bodytext",)),
        hand_edit(11, T + DAY, "bodytext", live=False),
        a_row(12, T + 2 * DAY, Action.PUBLISH, ()),
    )

    result = classify(*rows)

    assert result.outcome is EDITED
    assert result.edit_scope is EditScope.SAME_FIELDS
    assert result.decided_by == (10, 12)


def version_copy(uid: int, at: int, **extra):
    """The draft a first edit in a workspace adds (DataHandler::insertDB): an add row of every field of the
    record, pointed at the live record when the draft is published (RecordHistoryStore)."""
    return a_row(
        uid, at, Action.ADD, ("uid", "pid", "header", "bodytext", "hidden", "t3ver_oid"), live=False, **extra
    )


def a_published_draft_of_the_header(*, automation: bool = False):
    """W wrote the bodytext; a first edit in a workspace changed the header, published a day later."""
    return (
        own_row(("bodytext",)),
        version_copy(11, T + DAY),
        hand_edit(12, T + DAY, "header", live=False),
        a_row(13, T + 2 * DAY, Action.PUBLISH, (), automation=automation),
    )


def test_a_publish_changed_the_fields_its_drafts_modified_not_every_field_of_the_version_copy():
    result = classify(*a_published_draft_of_the_header())

    assert result.outcome is EDITED
    assert result.edit_scope is EditScope.OTHER_FIELDS
    assert result.decided_by == (10, 13)


def test_a_cli_publish_of_a_draft_of_other_fields_leaves_the_write_accepted():
    assert classify(*a_published_draft_of_the_header(automation=True)).outcome is ACCEPTED


def test_a_draft_published_after_the_window_is_accepted_unchanged_whenever_it_is_derived():
    # Until the publish the draft's rows are the version's (another uid): the record has its own row alone.
    before = classify(own_row(("bodytext",)))
    after = classify(
        own_row(("bodytext",)),
        hand_edit(11, T + DAY, "bodytext", live=False),
        a_row(12, CLOSES + DAY, Action.PUBLISH, ()),
    )

    assert before.outcome is ACCEPTED
    assert after == before


def test_a_publish_reads_only_the_drafts_since_the_previous_publish():
    rows = (
        own_row(("bodytext",)),
        hand_edit(11, T + HOUR_S, "bodytext", live=False),
        a_row(12, T + 2 * HOUR_S, Action.PUBLISH, ()),
        hand_edit(13, T + DAY, "header", live=False),
        a_row(14, T + 2 * DAY, Action.PUBLISH, ()),
    )

    result = classify(*rows)

    assert result.edit_scope is EditScope.SAME_FIELDS
    assert classify(*rows[:1], *rows[3:]).edit_scope is EditScope.OTHER_FIELDS


def test_a_publish_whose_drafts_are_gone_is_edited_with_its_fields_unknown():
    rows = (own_row(("bodytext",)), a_row(12, T + DAY, Action.PUBLISH, ()))

    result = classify(*rows)

    assert result.outcome is EDITED
    assert result.edit_scope is EditScope.FIELDS_UNKNOWN


# --- automation ---------------------------------------------------------------------------------------------


def test_a_cli_task_that_changed_a_field_w_wrote_is_unknown_changed_by_automation():
    rows = (own_row(("bodytext",)), hand_edit(11, T + DAY, "bodytext", automation=True))

    result = classify(*rows)

    assert result.outcome is UNKNOWN
    assert result.reason is UnknownReason.CHANGED_BY_AUTOMATION


def test_a_cli_task_on_another_field_changes_nothing():
    rows = (own_row(("bodytext",)), hand_edit(11, T + DAY, "header", automation=True))

    result = classify(*rows)

    assert result.outcome is ACCEPTED


def test_a_cli_task_on_any_field_is_unknown_when_ws_fields_are_unknown():
    rows = (own_row(None, action=Action.MOVE), hand_edit(11, T + DAY, "header", automation=True))

    result = classify(*rows)

    assert result.reason is UnknownReason.CHANGED_BY_AUTOMATION


def test_a_human_edit_beside_a_cli_task_is_edited():
    rows = (
        own_row(("bodytext",)),
        hand_edit(11, T + HOUR_S, "bodytext", automation=True),
        hand_edit(12, T + DAY, "header"),
    )

    result = classify(*rows)

    assert result.outcome is EDITED
    assert result.edit_scope is EditScope.OTHER_FIELDS
    assert result.decided_by == (10, 12)


def test_a_delete_by_a_cli_task_is_discarded():
    rows = (own_row(), a_row(11, T + DAY, Action.DELETE, (), automation=True))

    result = classify(*rows, presence=Presence.DELETED)

    assert result.outcome is DISCARDED
    assert result.decided_by == (10, 11)


def test_an_agent_run_acting_as_cli_writes_ai_rows_not_automation_ones():
    second = a_write(T + DAY, event_uid=502, run="run-2", channel=OTHER_EDITOR)
    rows = (
        own_row(("bodytext",)),
        a_row(11, second.written_at - 5, Action.MODIFY, ("bodytext",), channel=OTHER_EDITOR, automation=True),
    )

    results = classify_writes([a_write(), second], rows, Presence.PRESENT, LONG_AGO, WINDOW)

    assert results[501].outcome is ACCEPTED


# --- correlation_id -----------------------------------------------------------------------------------------


def test_a_row_whose_correlation_id_names_the_run_is_its_own_whatever_its_stamp():
    rows = (
        hand_edit(9, T + 30, "header", channel=OTHER_EDITOR),
        a_row(10, T - 3, Action.MODIFY, ("bodytext",), channel=EDITOR, named_run="run-w"),
        hand_edit(11, T + DAY, "bodytext", channel=OTHER_EDITOR),
    )

    result = classify(*rows)

    assert result.outcome is EDITED
    assert result.edit_scope is EditScope.SAME_FIELDS
    assert result.decided_by == (10, 11)


def test_a_row_naming_another_run_is_an_ai_row_never_a_human_edit():
    rows = (own_row(), a_row(11, T + DAY, Action.MODIFY, ("bodytext",), named_run="run-other"))

    result = classify(*rows)

    assert result.outcome is ACCEPTED


# --- reverted -----------------------------------------------------------------------------------------------


def test_an_editor_who_restored_every_field_w_wrote_reverted_it():
    rows = (
        own_row(("bodytext", "header")),
        hand_edit(11, T + DAY, "bodytext", "header", restores=[(10, "bodytext"), (10, "header")]),
    )

    result = classify(*rows)

    assert result.outcome is EDITED
    assert result.edit_scope is EditScope.REVERTED


def test_a_rewrite_that_is_not_a_revert_is_same_fields():
    rows = (own_row(("bodytext",)), hand_edit(11, T + DAY, "bodytext"))

    result = classify(*rows)

    assert result.edit_scope is EditScope.SAME_FIELDS


def test_a_revert_of_only_some_of_ws_fields_is_same_fields():
    rows = (own_row(("bodytext", "header")), hand_edit(11, T + DAY, "bodytext", restores=[(10, "bodytext")]))

    result = classify(*rows)

    assert result.edit_scope is EditScope.SAME_FIELDS


def test_a_revert_edited_again_afterwards_is_no_revert():
    rows = (
        own_row(("bodytext",)),
        hand_edit(11, T + HOUR_S, "bodytext", restores=[(10, "bodytext")]),
        hand_edit(12, T + DAY, "bodytext"),
    )

    result = classify(*rows)

    assert result.edit_scope is EditScope.SAME_FIELDS


def test_a_record_the_ai_created_cannot_be_reverted_only_discarded():
    rows = (
        own_row(("bodytext",), action=Action.ADD),
        hand_edit(11, T + DAY, "bodytext", restores=[(10, "bodytext")]),
    )

    result = classify(*rows)

    assert result.edit_scope is EditScope.SAME_FIELDS


def test_a_revert_made_by_automation_is_no_human_revert():
    rows = (
        own_row(("bodytext",)),
        hand_edit(11, T + DAY, "bodytext", automation=True, restores=[(10, "bodytext")]),
    )

    result = classify(*rows)

    assert result.reason is UnknownReason.CHANGED_BY_AUTOMATION


# --- the window's bounds, pinned ----------------------------------------------------------------------------


def test_a_delete_stamped_exactly_at_t_and_inserted_after_ws_own_row_is_discarded():
    rows = (own_row(), a_row(11, T, Action.DELETE, ()))

    result = classify(*rows, presence=Presence.DELETED)

    assert result.outcome is DISCARDED
    assert result.decided_by == (10, 11)


def test_a_delete_exactly_at_the_windows_close_is_discarded_and_a_second_later_is_not():
    at_close = classify(own_row(), a_row(11, CLOSES, Action.DELETE, ()), presence=Presence.DELETED)
    after = classify(own_row(), a_row(11, CLOSES + 1, Action.DELETE, ()), presence=Presence.DELETED)

    assert at_close.outcome is DISCARDED
    assert at_close.decided_by == (10, 11)
    assert after.outcome is ACCEPTED


def test_an_unreadable_target_whose_record_is_also_gone_is_unknown_unreadable_target():
    facts = WriteFacts(
        target_readable=False,
        gone=True,
        deleted_in_window=True,
        deleted_after_window=False,
        evidence=True,
        history_reaches_back=True,
        human_actions=frozenset({Action.DELETE}),
    )

    assert decide(facts) == (UNKNOWN, UnknownReason.UNREADABLE_TARGET, None)
    assert WRITE_DECISION[0][2] is UnknownReason.UNREADABLE_TARGET


def test_each_change_of_the_rules_has_its_own_version():
    # 2026.12-1 read history as TYPO3 writes it; 2026.12-2 leaves a draft's add row (the copy of every field)
    # out of the fields a publish changed, and compares only a backend user's row with a run's be_user;
    # 2026.12-3 takes no other row of the record for evidence that W's own row survived; 2026.12-4 reads a
    # workspace's row on the record as a draft only where a publish row follows it.
    assert RULE_VERSION == "2026.12-4"
