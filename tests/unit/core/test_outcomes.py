"""The observed outcome of a write and of a run: 003_…, "The classification", and DESIGN.md rules 1-8."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.classification import classify_write
from core.outcomes import (
    BOOKKEEPING_FIELDS,
    PRECEDENCE,
    RULE_VERSION,
    Action,
    CallOutcome,
    EditScope,
    HistoryRow,
    Presence,
    RunWithoutWritesError,
    UnknownReason,
    Write,
    WriteOutcome,
    is_due,
    run_outcome,
    unreadable_target,
)
from core.time import DAY_S
from core.window import MIN_WINDOW_S, InvalidWindowError, window_closes_at

DAY = DAY_S
WINDOW = 7 * DAY
T = 1_790_000_000  # W's time: the tool_write event's crdate
CLOSES = T + WINDOW
LONG_AGO = T - 90 * DAY  # the oldest row left in sys_history, unless a test trims it

ACCEPTED = CallOutcome.ACCEPTED_UNCHANGED
EDITED = CallOutcome.EDITED
DISCARDED = CallOutcome.DISCARDED
UNKNOWN = CallOutcome.UNKNOWN

GONE = (Presence.DELETED, Presence.ROW_MISSING, Presence.TABLE_MISSING)
NOT_MODIFICATIONS = (Action.ADD, Action.MOVE, Action.UNDELETE, Action.STAGE)


# --- builders -----------------------------------------------------------------------------------------------


EDITOR = 501  # the lane of W and of every write its backend user made to the record (Write.channel)
OTHER_EDITOR = 601


def a_write(at: int = T, *, event_uid: int = 501, run: str = "run-w", channel: int = EDITOR) -> Write:
    return Write(event_uid=event_uid, table="tt_content", uid=42, written_at=at, run=run, channel=channel)


def a_row(
    uid: int,
    at: int,
    action: int = Action.MODIFY,
    fields: Sequence[str] | None = ("bodytext",),
    *,
    channel: int | None = None,
    live: bool = True,
    automation: bool = False,
    named_run: str | None = None,
    restores: Sequence[tuple[int, str]] = (),
) -> HistoryRow:
    """A row of the record; by default an editor's who made no AI write to it (no channel)."""
    return HistoryRow(
        uid=uid,
        tstamp=at,
        actiontype=action,
        fields=None if fields is None else frozenset(fields),
        live=live,
        by_automation=automation,
        channel=channel,
        named_run=named_run,
        restores=frozenset(restores),
    )


def own_row(
    fields: Sequence[str] | None = ("bodytext",), at: int = T - 3, uid: int = 10, action: int = Action.MODIFY
) -> HistoryRow:
    """W's own sys_history row: written by W's backend user, stamped when its process started (3 s before the
    step, as after an approval in the chat's exec strategy)."""
    return a_row(uid, at, action, fields, channel=EDITOR)


def classify(
    *rows: HistoryRow,
    write: Write | None = None,
    presence: Presence = Presence.PRESENT,
    others: Sequence[Write] = (),
    oldest: int | None = LONG_AGO,
    window_s: int = WINDOW,
) -> WriteOutcome:
    return classify_write(
        write if write is not None else a_write(),
        rows,
        others,
        presence,
        oldest,
        window_s,
    )


# --- 003_…, "The classification" ----------------------------------------------------------------------------


def test_no_human_row_with_the_record_still_present_is_accepted_unchanged():
    rows = (own_row(),)

    result = classify(*rows)

    assert result.outcome is ACCEPTED
    assert result.reason is None
    assert result.edit_scope is None


def test_a_human_modify_in_the_window_is_edited():
    rows = (own_row(), a_row(12, T + DAY))

    result = classify(*rows)

    assert result.outcome is EDITED


def test_a_human_delete_in_the_window_is_discarded():
    rows = (own_row(), a_row(12, T + DAY, Action.DELETE, ()))

    result = classify(*rows, presence=Presence.DELETED)

    assert result.outcome is DISCARDED


@pytest.mark.parametrize("presence", GONE)
def test_the_record_gone_is_discarded_whatever_the_history_says(presence):
    rows = (own_row(),)

    result = classify(*rows, presence=presence)

    assert result.outcome is DISCARDED
    assert result.edit_scope is None


@pytest.mark.parametrize("presence", GONE)
def test_the_record_gone_is_discarded_even_without_an_evidence_row(presence):
    result = classify(presence=presence, oldest=T + DAY)

    assert result.outcome is DISCARDED
    assert result.decided_by == ()


def test_history_trimmed_past_the_write_is_unknown_history_trimmed():
    rows = (a_row(17, T + 3 * DAY),)

    result = classify(*rows, oldest=T + 1)

    assert result.outcome is UNKNOWN
    assert result.reason is UnknownReason.HISTORY_TRIMMED


def test_an_empty_sys_history_is_unknown_history_trimmed():
    result = classify(oldest=None)

    assert result.outcome is UNKNOWN
    assert result.reason is UnknownReason.HISTORY_TRIMMED


def test_no_retained_history_row_at_or_before_the_write_is_unknown_never_accepted():
    result = classify(oldest=T)

    assert result.outcome is UNKNOWN
    assert result.reason is UnknownReason.NO_HISTORY_ROW
    assert result.decided_by == ()
    assert result.first_change_after_s is None


def test_a_record_whose_history_starts_after_the_write_is_unknown_even_with_later_rows():
    rows = (a_row(17, T + 3, Action.MODIFY), a_row(18, T + DAY, Action.DELETE, ()))

    result = classify(*rows, oldest=LONG_AGO)

    assert result.outcome is UNKNOWN
    assert result.reason is UnknownReason.NO_HISTORY_ROW


# --- DESIGN.md rule 3: evidence -----------------------------------------------------------------------------


def test_a_row_up_to_two_seconds_after_the_write_is_its_evidence():
    rows = (own_row(at=T + 2),)

    result = classify(*rows)

    assert result.outcome is ACCEPTED
    assert result.decided_by == (10,)


def test_an_older_retained_row_of_the_record_is_no_evidence_that_ws_own_row_survived():
    # 003_…, "The classification": "what proves our write's row survived is not that SOME row exists at or
    # before it — an older survivor answers that for a write whose own row is long gone".
    rows = (a_row(5, T - 30 * DAY, Action.ADD, ("header", "bodytext")),)

    result = classify(*rows)

    assert result.outcome is UNKNOWN
    assert result.reason is UnknownReason.NO_HISTORY_ROW
    assert result.decided_by == ()


def test_a_worker_stamped_own_row_trimmed_before_an_earlier_inserted_edit_leaves_the_write_unknown():
    # The worker's row is stamped when the worker started, days before the write; the editor's row, inserted
    # before it, is stamped at its request. Trimming by stamp takes the worker's row and keeps the editor's.
    started = T - 5 * DAY
    rows = (a_row(5, T - DAY, Action.MODIFY, ("header",)),)

    result = classify(*rows, oldest=started + DAY)

    assert result.outcome is UNKNOWN
    assert result.reason is UnknownReason.NO_HISTORY_ROW


def test_the_evidence_row_is_the_newest_row_at_or_just_after_the_write():
    rows = (a_row(5, T - 30 * DAY, Action.ADD), own_row(at=T + 1), a_row(20, T + DAY))

    result = classify(*rows)

    assert result.decided_by == (10, 20)


# --- DESIGN.md rule 4: human rows inside the window ---------------------------------------------------------


def test_a_writes_own_row_stamped_a_second_after_the_step_is_evidence_not_a_human_edit():
    rows = (own_row(at=T + 1),)

    result = classify(*rows)

    assert result.outcome is ACCEPTED
    assert result.first_change_after_s is None


def test_a_later_ai_write_is_not_a_human_edit():
    later = a_write(T + 2 * DAY, event_uid=502)
    rows = (own_row(), a_row(12, later.written_at - 40, channel=EDITOR))

    result = classify(*rows, others=(later,))

    assert result.outcome is ACCEPTED


def test_another_editors_row_three_seconds_after_a_later_ai_write_is_a_human_edit():
    later = a_write(T + 2 * DAY, event_uid=502)
    rows = (own_row(), a_row(12, later.written_at - 40, channel=EDITOR), a_row(13, later.written_at + 3))

    result = classify(*rows, others=(later,))

    assert result.outcome is EDITED
    assert result.decided_by == (10, 13)


def test_w_is_among_its_records_writes_even_when_the_caller_leaves_it_out():
    rows = (own_row(at=T + 1),)

    result = classify(*rows, others=())

    assert result.outcome is ACCEPTED


def test_a_row_stamped_at_the_last_second_of_the_window_still_counts():
    rows = (own_row(), a_row(12, CLOSES))

    result = classify(*rows)

    assert result.outcome is EDITED


def test_rows_after_the_window_never_count():
    rows = (own_row(), a_row(12, CLOSES + 1), a_row(13, CLOSES + DAY, Action.DELETE, ()))

    result = classify(*rows)

    assert result.outcome is ACCEPTED
    assert result.first_change_after_s is None


def test_a_delete_in_the_window_is_discarded_even_if_the_record_is_undeleted_later():
    rows = (own_row(), a_row(12, T + DAY, Action.DELETE, ()), a_row(13, T + 2 * DAY, Action.UNDELETE, ()))

    result = classify(*rows, presence=Presence.PRESENT)

    assert result.outcome is DISCARDED
    assert result.decided_by == (10, 12)


def test_a_delete_outranks_a_modify_in_the_window():
    rows = (own_row(), a_row(12, T + DAY), a_row(13, T + 2 * DAY, Action.DELETE, ()))

    result = classify(*rows)

    assert result.outcome is DISCARDED
    assert result.edit_scope is None
    assert result.decided_by == (10, 13)


@pytest.mark.parametrize("action", NOT_MODIFICATIONS, ids=lambda action: action.name.lower())
def test_moves_undeletes_stage_changes_and_adds_are_not_modifications(action):
    rows = (own_row(), a_row(12, T + DAY, action, ("pid",)))

    result = classify(*rows)

    assert result.outcome is ACCEPTED
    assert result.first_change_after_s == DAY


@pytest.mark.parametrize("code", [0, 8, 99, -1])
def test_an_unknown_action_code_is_not_a_modification(code):
    rows = (own_row(), a_row(12, T + DAY, code, ("title",)))

    result = classify(*rows)

    assert result.outcome is ACCEPTED


def test_a_delete_in_the_window_is_discarded_whoever_made_it_an_ai_run_too():
    later = a_write(T + DAY, event_uid=502)
    rows = (
        own_row(),
        a_row(12, later.written_at - 5, Action.DELETE, (), channel=EDITOR),
        a_row(13, T + 2 * DAY, Action.UNDELETE, ()),
    )

    result = classify(*rows, others=(later,))

    assert result.outcome is DISCARDED
    assert result.decided_by == (10, 12)


# --- DESIGN.md rule 2: a gone record, and a delete after the window -----------------------------------------


@pytest.mark.parametrize("presence", [Presence.DELETED, Presence.ROW_MISSING])
def test_a_delete_after_the_window_does_not_make_the_write_discarded(presence):
    rows = (own_row(), a_row(12, CLOSES + DAY, Action.DELETE, ()))

    result = classify(*rows, presence=presence)

    assert result.outcome is ACCEPTED


def test_a_record_deleted_after_the_window_is_judged_on_the_windows_rows():
    rows = (
        own_row(("header",)),
        a_row(12, T + DAY, Action.MODIFY, ("header",)),
        a_row(13, CLOSES + 5, 4, ()),
    )

    result = classify(*rows, presence=Presence.DELETED)

    assert result.outcome is EDITED
    assert result.edit_scope is EditScope.SAME_FIELDS


def test_a_record_deleted_after_the_window_without_evidence_is_unknown():
    rows = (a_row(13, CLOSES + 5, Action.DELETE, ()),)

    result = classify(*rows, presence=Presence.DELETED, oldest=T + 10)

    assert result.outcome is UNKNOWN
    assert result.reason is UnknownReason.HISTORY_TRIMMED


def test_a_gone_record_with_a_delete_in_the_window_and_another_after_it_is_discarded():
    later = a_write(T + DAY, event_uid=502)
    rows = (
        own_row(),
        a_row(12, later.written_at, Action.DELETE, (), channel=EDITOR),
        a_row(13, T + 2 * DAY, Action.UNDELETE, ()),
        a_row(14, CLOSES + DAY, Action.DELETE, ()),
    )

    result = classify(*rows, presence=Presence.DELETED, others=(later,))

    assert result.outcome is DISCARDED
    assert result.decided_by == (10, 12)


def test_a_gone_record_without_a_delete_row_is_discarded_and_decided_by_its_evidence():
    rows = (own_row(), a_row(12, T + DAY))

    result = classify(*rows, presence=Presence.TABLE_MISSING)

    assert result.outcome is DISCARDED
    assert result.decided_by == (10,)
    assert result.first_change_after_s == DAY


def test_a_gone_record_without_ws_own_row_is_decided_by_the_last_row_inserted_before_it_and_its_delete():
    # No evidence of W's own row (003_…), but the deletes that count are those inserted after that row.
    rows = (a_row(5, T - DAY), a_row(12, T + DAY, Action.DELETE, ()))

    result = classify(*rows, presence=Presence.DELETED)

    assert result.outcome is DISCARDED
    assert result.decided_by == (5, 12)


# --- DESIGN.md rule 7: edit scope ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "changed",
    [("hidden",), ("hidden", "tstamp"), ("hidden", "tstamp", "l10n_diffsource")],
    ids=["hidden", "hidden+tstamp", "hidden+bookkeeping"],
)
def test_unhide_only_edits_are_edited_with_scope_released_only(changed):
    rows = (own_row(("bodytext",)), a_row(12, T + DAY, Action.MODIFY, changed))

    result = classify(*rows)

    assert result.outcome is EDITED
    assert result.edit_scope is EditScope.RELEASED_ONLY


def test_a_hide_and_a_later_unhide_are_released_only():
    rows = (own_row(), a_row(12, T + DAY, fields=("hidden",)), a_row(13, T + 2 * DAY, fields=("hidden",)))

    result = classify(*rows)

    assert result.edit_scope is EditScope.RELEASED_ONLY
    assert result.decided_by == (10, 12, 13)


def test_released_only_needs_no_knowledge_of_the_written_fields():
    rows = (own_row(None, action=Action.MOVE), a_row(12, T + DAY, fields=("hidden",)))

    result = classify(*rows, write=a_write())

    assert result.edit_scope is EditScope.RELEASED_ONLY


def test_an_edit_of_a_field_the_write_wrote_is_same_fields():
    rows = (own_row(("header", "bodytext")), a_row(12, T + DAY, fields=("bodytext",)))

    result = classify(*rows)

    assert result.edit_scope is EditScope.SAME_FIELDS


def test_an_edit_of_hidden_and_a_field_the_write_wrote_is_same_fields():
    rows = (own_row(("bodytext",)), a_row(12, T + DAY, fields=("hidden", "bodytext")))

    result = classify(*rows)

    assert result.edit_scope is EditScope.SAME_FIELDS


def test_an_edit_of_fields_the_write_did_not_write_is_other_fields():
    rows = (own_row(("bodytext",)), a_row(12, T + DAY, fields=("hidden", "header")))

    result = classify(*rows)

    assert result.edit_scope is EditScope.OTHER_FIELDS


def test_the_fields_of_all_human_modifies_are_compared():
    rows = (own_row(("bodytext",)), a_row(12, T + DAY, fields=("header",)), a_row(13, T + 2 * DAY))

    result = classify(*rows)

    assert result.edit_scope is EditScope.SAME_FIELDS


def test_bookkeeping_fields_are_not_a_change_of_the_written_fields():
    rows = (
        own_row(("bodytext", "tstamp")),
        a_row(12, T + DAY, fields=("header", "tstamp", "l10n_diffsource")),
    )

    result = classify(*rows)

    assert result.edit_scope is EditScope.OTHER_FIELDS


def test_a_modify_of_bookkeeping_fields_alone_is_not_released_only():
    rows = (own_row(("bodytext",)), a_row(12, T + DAY, fields=sorted(BOOKKEEPING_FIELDS)))

    result = classify(*rows)

    assert result.outcome is EDITED
    assert result.edit_scope is EditScope.OTHER_FIELDS


def test_an_unreadable_human_modify_row_makes_the_scope_fields_unknown():
    rows = (
        own_row(("bodytext",)),
        a_row(12, T + DAY, fields=("hidden",)),
        a_row(13, T + 2 * DAY, fields=None),
    )

    result = classify(*rows)

    assert result.outcome is EDITED
    assert result.edit_scope is EditScope.FIELDS_UNKNOWN


def test_without_the_written_fields_the_scope_is_fields_unknown():
    # W's own row is a move: it names no field W wrote.
    rows = (own_row(None, action=Action.MOVE), a_row(12, T + DAY, fields=("bodytext",)))

    result = classify(*rows, write=a_write())

    assert result.edit_scope is EditScope.FIELDS_UNKNOWN


def test_an_own_row_whose_keys_could_not_be_read_makes_the_scope_fields_unknown():
    rows = (own_row(None), a_row(12, T + DAY, fields=("header",)))

    result = classify(*rows)

    assert result.edit_scope is EditScope.FIELDS_UNKNOWN


def test_the_fields_w_wrote_come_from_its_own_history_row():
    rows = (own_row(("bodytext",)), a_row(12, T + DAY, fields=("header",)))

    result = classify(*rows)

    assert result.edit_scope is EditScope.OTHER_FIELDS


def test_a_write_without_its_own_row_is_unknown_even_when_an_editor_changed_the_record_after_it():
    rows = (a_row(5, T - DAY, Action.MODIFY, ("bodytext",)), a_row(12, T + DAY, fields=("header",)))

    result = classify(*rows)

    assert result.outcome is UNKNOWN
    assert result.reason is UnknownReason.NO_HISTORY_ROW


def test_the_scope_ignores_non_modifications_in_the_window():
    rows = (
        own_row(("bodytext",)),
        a_row(12, T + DAY, Action.MOVE, ("bodytext",)),
        a_row(13, T + 2 * DAY, 2, ["pid"]),
    )

    result = classify(*rows)

    assert result.edit_scope is EditScope.OTHER_FIELDS
    assert result.decided_by == (10, 13)


# --- first change, decided by -------------------------------------------------------------------------------


def test_first_change_after_is_the_seconds_to_the_first_human_row_of_any_kind():
    rows = (own_row(), a_row(13, T + 2 * DAY), a_row(12, T + 3600, Action.MOVE, ("pid",)))

    result = classify(*rows)

    assert result.outcome is EDITED
    assert result.first_change_after_s == 3600


def test_first_change_after_skips_later_ai_writes():
    later = a_write(T + 600, event_uid=502)
    rows = (own_row(), a_row(12, later.written_at - 20, channel=EDITOR), a_row(13, T + DAY))

    result = classify(*rows, others=(later,))

    assert result.first_change_after_s == DAY


def test_decided_by_names_the_evidence_row_and_the_deciding_human_rows():
    rows = (
        own_row(),
        a_row(14, T + 3 * DAY),
        a_row(12, T + DAY),
        a_row(13, T + 2 * DAY, Action.PUBLISH, ()),
    )

    result = classify(*rows)

    assert result.decided_by == (10, 12, 14)


def test_an_accepted_write_is_decided_by_its_evidence_row_alone():
    rows = (own_row(), a_row(12, T + DAY, Action.MOVE, ("pid",)))

    result = classify(*rows)

    assert result.decided_by == (10,)


def test_the_order_of_the_history_rows_does_not_matter():
    rows = (own_row(), a_row(12, T + DAY), a_row(13, T + 2 * DAY, Action.MOVE, ()))

    forwards = classify(*rows)
    backwards = classify(*reversed(rows))

    assert forwards == backwards


# --- DESIGN.md rule 6: an unreadable target -----------------------------------------------------------------


def test_an_unreadable_target_is_unknown_with_reason_unreadable_target():
    result = unreadable_target(event_uid=77)

    assert result.event_uid == 77
    assert result.outcome is UNKNOWN
    assert result.reason is UnknownReason.UNREADABLE_TARGET
    assert result.decided_by == ()


def test_a_run_with_an_unreadable_target_cannot_be_accepted_unchanged():
    outcomes = [ACCEPTED, unreadable_target(event_uid=77).outcome, ACCEPTED]

    result = run_outcome(outcomes)

    assert result is UNKNOWN


# --- DESIGN.md rule 8: the rule version ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "result",
    [
        classify(own_row()),
        classify(own_row(), a_row(12, T + DAY)),
        classify(presence=Presence.ROW_MISSING),
        classify(oldest=None),
        unreadable_target(event_uid=77),
    ],
    ids=["accepted", "edited", "discarded", "unknown", "unreadable"],
)
def test_every_outcome_carries_the_rule_version(result):
    assert result.rule_version == RULE_VERSION


def test_an_outcome_names_the_write_it_belongs_to():
    write = a_write()

    result = classify(own_row(), write=write)

    assert result.event_uid == write.event_uid


@pytest.mark.parametrize(
    ("outcome", "reason", "scope"),
    [
        (UNKNOWN, None, None),
        (ACCEPTED, UnknownReason.NO_HISTORY_ROW, None),
        (EDITED, None, None),
        (ACCEPTED, None, EditScope.SAME_FIELDS),
    ],
    ids=["unknown-without-reason", "reason-without-unknown", "edited-without-scope", "scope-without-edited"],
)
def test_an_outcome_has_a_reason_exactly_when_unknown_and_a_scope_exactly_when_edited(outcome, reason, scope):
    with pytest.raises(ValueError, match="exactly when"):
        WriteOutcome(
            event_uid=1,
            outcome=outcome,
            reason=reason,
            edit_scope=scope,
            first_change_after_s=None,
            decided_by=(),
        )


# --- DESIGN.md rule 1: the window ---------------------------------------------------------------------------


def test_a_run_waits_for_the_window_of_its_last_write():
    first_write, last_write = T, T + 3 * DAY
    now = first_write + WINDOW + DAY

    due_by_first = is_due(first_write, now, WINDOW)
    due_by_last = is_due(last_write, now, WINDOW)

    assert due_by_first is True
    assert due_by_last is False


def test_the_window_closes_after_its_last_second():
    closes = window_closes_at(T, WINDOW)

    assert closes == T + WINDOW
    assert is_due(T, closes, WINDOW) is False
    assert is_due(T, closes + 1, WINDOW) is True


@pytest.mark.parametrize("window_s", [MIN_WINDOW_S - 1, 3600, 0, -WINDOW])
def test_a_window_shorter_than_a_day_is_refused(window_s):
    with pytest.raises(InvalidWindowError):
        window_closes_at(T, window_s)
    with pytest.raises(InvalidWindowError):
        is_due(T, T + WINDOW, window_s)
    with pytest.raises(InvalidWindowError):
        classify(own_row(), window_s=window_s)


def test_a_window_of_one_day_is_allowed():
    rows = (own_row(), a_row(12, T + DAY + 1))

    result = classify(*rows, window_s=MIN_WINDOW_S)

    assert result.outcome is ACCEPTED


# --- DESIGN.md rule 5: one outcome per run ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("outcomes", "expected"),
    [
        ([ACCEPTED], ACCEPTED),
        ([UNKNOWN], UNKNOWN),
        ([EDITED], EDITED),
        ([DISCARDED], DISCARDED),
        ([ACCEPTED, UNKNOWN], UNKNOWN),
        ([ACCEPTED, EDITED], EDITED),
        ([ACCEPTED, DISCARDED], DISCARDED),
        ([UNKNOWN, EDITED], EDITED),
        ([UNKNOWN, DISCARDED], DISCARDED),
        ([EDITED, DISCARDED], DISCARDED),
        ([ACCEPTED, ACCEPTED, ACCEPTED], ACCEPTED),
        ([DISCARDED, ACCEPTED, EDITED, UNKNOWN], DISCARDED),
    ],
    ids=lambda value: "+".join(value) if isinstance(value, list) else str(value),
)
def test_a_runs_outcome_is_its_worst_write_by_precedence(outcomes, expected):
    result = run_outcome(outcomes)

    assert result is expected


def test_a_run_whose_second_write_was_deleted_is_discarded():
    first = classify(own_row())
    second = classify(own_row(), a_row(12, T + DAY, Action.DELETE, ()), presence=Presence.DELETED)

    result = run_outcome([first.outcome, second.outcome])

    assert result is DISCARDED


def test_a_run_without_writes_has_no_observed_outcome():
    with pytest.raises(RunWithoutWritesError):
        run_outcome([])


def test_the_outcome_values_are_nr_llms_strings():
    values = {outcome.value for outcome in CallOutcome}

    assert values == {"accepted_unchanged", "edited", "discarded", "unknown"}
    assert set(PRECEDENCE) == set(CallOutcome)


# --- properties ---------------------------------------------------------------------------------------------

outcomes_lists = st.lists(st.sampled_from(list(CallOutcome)), min_size=1, max_size=12)

FIELD_NAMES = ("header", "bodytext", "hidden", "tstamp", "l10n_diffsource", "pid")
field_sets = st.none() | st.frozensets(st.sampled_from(FIELD_NAMES))
# Stamps cluster around W and the window's end, where the rules change their answer.
stamps = st.one_of(
    st.integers(T - 3 * DAY, CLOSES + 3 * DAY),
    st.integers(T - 3, T + 3),
    st.integers(CLOSES - 3, CLOSES + 3),
)
row_specs = st.lists(
    st.tuples(
        stamps, st.integers(0, 9), field_sets, st.sampled_from([None, EDITOR, OTHER_EDITOR]), st.booleans()
    ),
    max_size=8,
)
ai_times = st.lists(
    st.tuples(st.integers(T - DAY, CLOSES + DAY), st.sampled_from([EDITOR, OTHER_EDITOR])), max_size=3
)
oldest_stamps = st.none() | st.integers(T - 10 * DAY, CLOSES)


def rows_from(
    specs: list[tuple[int, int, frozenset[str] | None, int | None, bool]],
) -> tuple[HistoryRow, ...]:
    return tuple(
        HistoryRow(uid=uid, tstamp=at, actiontype=code, fields=fields, channel=channel, live=live)
        for uid, (at, code, fields, channel, live) in enumerate(specs, start=1)
    )


def writes_from(specs: list[tuple[int, int]]) -> tuple[Write, ...]:
    return tuple(
        a_write(at, event_uid=600 + i, run=f"run-{i}", channel=lane) for i, (at, lane) in enumerate(specs)
    )


@given(outcomes_lists, st.randoms())
def test_run_outcome_is_order_independent_and_the_max_by_precedence(outcomes, random):
    shuffled = list(outcomes)
    random.shuffle(shuffled)

    result = run_outcome(shuffled)

    assert result is run_outcome(outcomes)
    assert result is max(outcomes, key=PRECEDENCE.index)


@given(outcomes_lists)
def test_a_run_is_accepted_unchanged_only_when_every_write_is(outcomes):
    result = run_outcome(outcomes)

    assert (result is ACCEPTED) == all(outcome is ACCEPTED for outcome in outcomes)


@given(row_specs, ai_times, st.sampled_from(list(Presence)), oldest_stamps)
def test_classify_never_returns_accepted_unchanged_without_an_evidence_row(specs, ai, presence, oldest):
    rows = rows_from(specs)

    result = classify(*rows, presence=presence, others=writes_from(ai), oldest=oldest)

    if result.outcome is ACCEPTED:
        assert any(row.tstamp <= T + 2 for row in rows)
        assert result.decided_by[0] in {row.uid for row in rows}


@given(row_specs, ai_times, oldest_stamps, st.randoms())
def test_classify_does_not_depend_on_the_order_of_the_rows(specs, ai, oldest, random):
    rows = rows_from(specs)
    shuffled = list(rows)
    random.shuffle(shuffled)

    result = classify(*shuffled, others=writes_from(ai), oldest=oldest)

    assert result == classify(*rows, others=writes_from(ai), oldest=oldest)


# A publish after the window is left out: TYPO3 13.4.16 and later move a draft's rows onto the record when
# they publish it, so the workspace rows it makes drafts of were not on the record before it
# (core.workspaces).
late_actions = st.integers(0, 9).filter(lambda code: code != Action.PUBLISH)


@given(row_specs, ai_times, st.lists(st.tuples(st.integers(CLOSES + 1, CLOSES + 30 * DAY), late_actions)))
def test_rows_after_the_window_never_change_the_answer(specs, ai, late):
    rows = rows_from(specs)
    late_rows = tuple(a_row(1000 + i, at, code) for i, (at, code) in enumerate(late))

    result = classify(*rows, *late_rows, others=writes_from(ai))

    assert result == classify(*rows, others=writes_from(ai))


@given(
    st.lists(
        st.tuples(st.integers(T - 3 * DAY, CLOSES), st.sampled_from([1, 2, 3, 5, 6, 7, 99]), field_sets)
    ),
    ai_times,
    st.integers(CLOSES + 1, CLOSES + 30 * DAY),
    st.sampled_from(GONE),
)
def test_a_record_deleted_after_the_window_reads_as_if_present(specs, ai, deleted_at, presence):
    rows = (*rows_from([(at, code, fields, None, True) for at, code, fields in specs]),)
    rows = (*rows, a_row(1000, deleted_at, Action.DELETE, ()))

    gone = classify(*rows, presence=presence, others=writes_from(ai))

    assert gone == classify(*rows, presence=Presence.PRESENT, others=writes_from(ai))


@given(row_specs, ai_times, st.sampled_from(list(Presence)), oldest_stamps)
def test_only_edited_writes_have_a_scope_and_only_unknown_ones_a_reason(specs, ai, presence, oldest):
    rows = rows_from(specs)

    result = classify(*rows, presence=presence, others=writes_from(ai), oldest=oldest)

    assert (result.edit_scope is not None) == (result.outcome is EDITED)
    assert (result.reason is not None) == (result.outcome is UNKNOWN)
    assert result.rule_version == RULE_VERSION
