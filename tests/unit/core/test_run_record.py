"""The run record: an entry per run segment, read from its steps (000_…, "Decision" and its amendment)."""

import json
from dataclasses import replace

import pytest

from core.cards import CardDecision, CardOutcome
from core.events import split_segments
from core.notes import describe_card_outcome, describe_entry, labelled, notes_for_turn
from core.record_diff import DifferenceKind, diff
from core.refused import RefusalReading, SegmentContext, read_segment
from core.run_record import (
    DISPLAY_TOOLS,
    CardReading,
    Completeness,
    Decision,
    Ended,
    RunRecordEntry,
    ToolUse,
    Undecided,
    UndecidedBy,
    UndecidedKind,
    UnreadableEntry,
    WrittenRecord,
    build_entries,
    read_cards,
)
from core.run_record_json import dump_run_record, from_json, keep_newest, parse_run_record
from core.transcript import Role, TranscriptMessage
from tests.unit.core.events_helpers import (
    START,
    answer,
    approval,
    llm,
    refused,
    request,
    run,
    segments,
    tool,
    tool_write,
)

RUN = "5f0c6e1a-1111-4c4c-9a9a-000000000001"


def outcome(
    position: int, tool: str, decision: CardDecision, card_answer: str, at: int, run_uuid: str = RUN
) -> CardOutcome:
    return CardOutcome(position, run_uuid, tool, "pages:10073", ("title",), decision, card_answer, at)


def entry(segment: int = 0, position: int = 2, **changes) -> RunRecordEntry:
    return replace(RunRecordEntry(RUN, segment, position, 0, Ended.COMPLETED), **changes)


# --- what ran ---------------------------------------------------------------------------------------------


def test_the_tools_that_ran_are_counted_with_their_calls_and_failed_calls():
    parts = segments(
        llm(["read_page", "read_page"]),
        tool("read_page"),
        tool("read_page", error=True),
        llm(["search"]),
        tool("search"),
        llm(),
    )

    (result,) = build_entries(RUN, parts, status="completed", position=2)

    assert result.tools == (ToolUse("read_page", 2, 1), ToolUse("search", 1, 0))


# 000_…, amendment, table: "Beside a proposal or a question: a second write, a call that needs input, a
# remote call → not run (held)". The approved call is the card's own call; a call held beside it reads as held
# wherever nr-llm records its refusal: beside the proposal, or in the continuation's opening after it.
@pytest.mark.parametrize(
    "placement",
    [
        pytest.param(
            (llm(["update_page", "create_page_draft"]), refused("create_page_draft"), approval(True),
             tool("update_page"), tool_write("pages", 1, "complete"), llm()),
            id="beside the proposal",
        ),
        pytest.param(
            (llm(["update_page", "create_page_draft"]), approval(True), tool("update_page"),
             tool_write("pages", 1, "complete"), refused("create_page_draft"), llm()),
            id="in the continuation's opening, after the approved call",
        ),
    ],
)  # fmt: skip
def test_a_call_held_beside_a_proposal_is_not_run_wherever_nr_llm_records_its_refusal(placement):
    parts = segments(*placement)
    approved = outcome(2, "update_page", CardDecision.APPROVED, "Übernehmen", START + 10)

    waiting, continued = build_entries(
        RUN, parts, status="completed", position=2, positions={1: 4}, card_outcomes=(approved,)
    )

    assert waiting.waiting == ("update_page",)
    assert continued.tools == (ToolUse("update_page", 1, 0),)


def test_the_card_s_own_call_no_longer_offered_fails_and_the_call_held_beside_it_does_not():
    parts = segments(
        llm(["update_page", "create_page_draft"]),
        approval(True),
        refused("update_page"),
        refused("create_page_draft"),
        llm(),
    )

    readings = read_segment(parts[1], previous=SegmentContext("Übernehmen", "update_page"))

    assert [(r.tool, r.reading) for r in readings] == [
        ("update_page", RefusalReading.FAILURE_NOT_PERMITTED),
        ("create_page_draft", RefusalReading.HELD),
    ]


def test_a_refused_call_of_a_declined_card_gets_no_entry():
    parts = segments(llm(["update_page"]), approval(False), refused("update_page"), llm())

    (_, declined) = build_entries(RUN, parts, status="completed", position=2, positions={1: 4})

    assert declined.tools == ()


def test_a_call_held_while_the_run_waited_is_left_out_of_the_record():
    parts = segments(
        llm(["read_page"]), tool("read_page"), llm(["update_page", "create_page"]), refused("create_page")
    )

    (waiting,) = build_entries(RUN, parts, status="waiting_for_approval", position=2)

    assert waiting.tools == (ToolUse("read_page", 1, 0),)
    assert waiting.waiting == ("update_page",)


def test_an_approved_call_no_longer_offered_is_a_failure_in_both_readings():
    parts = segments(llm(["update_page"]), approval(True), refused("update_page"), llm())

    (_, approved) = build_entries(RUN, parts, status="completed", position=2)

    assert approved.tools == (ToolUse("update_page", 1, 1),)


def test_an_answered_question_no_longer_permitted_is_left_out_of_the_record():
    parts = segments(llm(["ask_choice"]), answer(), refused("ask_choice"), llm())

    (_, answered) = build_entries(RUN, parts, status="completed", position=2)

    assert answered.tools == ()


def test_display_tools_and_questions_are_left_out_of_the_record():
    parts = segments(
        llm(
            [
                "chat_set_progress",
                "chat_highlight_element",
                "chat_list_open_points",
                "ask_choice",
                "read_page",
            ]
        ),
        tool("chat_set_progress"),
        tool("chat_highlight_element"),
        tool("chat_list_open_points"),
        tool("read_page"),
        llm(),
    )

    (result,) = build_entries(RUN, parts, status="completed", position=2)

    assert result.tools == (ToolUse("read_page", 1, 0),)


def test_the_display_tools_are_configurable():
    parts = segments(
        llm(["chat_set_progress", "tour_step"]), tool("chat_set_progress"), tool("tour_step"), llm()
    )

    (result,) = build_entries(
        RUN, parts, status="completed", position=2, display_tools=frozenset({"tour_step"})
    )

    assert result.tools == (ToolUse("chat_set_progress", 1, 0),)
    assert "tour_step" not in DISPLAY_TOOLS


# --- how a segment ended ----------------------------------------------------------------------------------


def test_a_turn_that_failed_before_nr_llm_returned_its_steps_ended_unknown():
    entries = build_entries(RUN, (), status="failed", position=2, at=START)

    assert entries == (RunRecordEntry(RUN, 0, 2, 0, Ended.UNKNOWN, at=START),)


def test_a_failed_turn_whose_provider_refused_its_first_call_returned_no_steps_and_ended_unknown():
    # nr-llm records the round's request before the provider's call, where a provider without a key fails.
    entries = build_entries(RUN, split_segments(run(request())), status="failed", position=2, at=START)

    assert entries == (RunRecordEntry(RUN, 0, 2, 0, Ended.UNKNOWN, at=START),)


@pytest.mark.parametrize(
    ("status", "ended"),
    [
        ("completed", Ended.COMPLETED),
        ("waiting_for_approval", Ended.WAITING),
        ("waiting_for_input", Ended.WAITING),
        ("failed", Ended.FAILED),
        ("cancelled", Ended.CANCELLED),
        ("running", Ended.UNKNOWN),
        ("queued", Ended.UNKNOWN),
        ("paused", Ended.UNKNOWN),
    ],
)
def test_the_last_segment_ended_as_the_run_status_says(status, ended):
    parts = segments(llm(["read_page"]), tool("read_page"))

    (result,) = build_entries(RUN, parts, status=status, position=2)

    assert result.ended is ended


def test_a_segment_followed_by_a_decision_ended_waiting():
    parts = segments(llm(["update_page"]), approval(True), tool("update_page"), llm())

    first, second = build_entries(RUN, parts, status="completed", position=2)

    assert (first.ended, second.ended) == (Ended.WAITING, Ended.COMPLETED)


# --- what was written -------------------------------------------------------------------------------------


def test_records_written_are_listed_as_table_and_uid_with_their_completeness():
    parts = segments(
        llm(["update_page"]),
        approval(True),
        tool("update_page"),
        tool_write("pages", 10073, "complete"),
        tool_write("tt_content", 512, "partial"),
        tool_write("sys_file_reference", 9),
        llm(),
    )

    (_, written) = build_entries(RUN, parts, status="completed", position=2)

    assert written.writes == (
        WrittenRecord("pages:10073", Completeness.COMPLETE),
        WrittenRecord("tt_content:512", Completeness.PARTIAL),
        WrittenRecord("sys_file_reference:9", Completeness.UNCONFIRMED),
    )


def test_a_record_written_twice_in_a_segment_is_listed_once_with_the_weaker_completeness():
    parts = segments(
        llm(["update_page", "update_page"]),
        tool("update_page"),
        tool_write("pages", 1, "complete"),
        tool("update_page"),
        tool_write("pages", 1, "partial"),
        llm(),
    )

    (result,) = build_entries(RUN, parts, status="completed", position=2)

    assert result.writes == (WrittenRecord("pages:1", Completeness.PARTIAL),)


def test_a_write_whose_target_cannot_be_read_is_still_listed():
    parts = segments(llm(["update_page"]), tool("update_page"), tool_write("pages; x", 1, "complete"), llm())

    (result,) = build_entries(RUN, parts, status="completed", position=2)

    assert result.writes == (WrittenRecord("unreadable", Completeness.COMPLETE),)


# --- waiting, decided, undecided --------------------------------------------------------------------------


# 000_…, amendment, table: "Beside a proposal or a question: a second write … → not run (held)": one card
# waits, on the first write the last model round requested.
def test_the_call_still_waiting_is_the_card_s_own_and_a_second_write_beside_it_is_held():
    parts = segments(
        llm(["read_page"]),
        tool("read_page"),
        llm(["update_page", "update_page", "chat_set_progress"]),
    )

    (result,) = build_entries(RUN, parts, status="waiting_for_approval", position=2)

    assert result.waiting == ("update_page",)


def test_a_question_asked_beside_a_card_does_not_wait_for_the_cards_decision():
    parts = segments(llm(["update_page", "ask_choice"]))

    (result,) = build_entries(RUN, parts, status="waiting_for_approval", position=2)

    assert result.waiting == ("update_page",)


def test_a_call_beside_a_question_does_not_wait_for_its_answer():
    parts = segments(llm(["ask_choice", "update_page"]), answer(), tool("ask_choice"), llm())

    (asked, _) = build_entries(RUN, parts, status="completed", position=2)

    assert asked.waiting == ("ask_choice",)


def test_a_completed_segment_has_no_waiting_calls():
    parts = segments(llm(["read_page"]), tool("read_page"), llm())

    (result,) = build_entries(RUN, parts, status="completed", position=2)

    assert result.waiting == ()


def test_a_decision_no_card_outcome_says_is_recorded_with_the_cards_tool():
    parts = segments(llm(["update_page"]), approval(True), tool("update_page"), llm())

    (_, decided) = build_entries(RUN, parts, status="completed", position=2)

    assert decided.decision == Decision("update_page", "freigegeben")


def test_a_plain_denial_without_a_card_outcome_is_recorded_as_the_decision():
    parts = segments(llm(["update_page"]), approval(False), refused("update_page"), llm())

    (_, declined) = build_entries(RUN, parts, status="completed", position=2)

    assert declined.decision == Decision("update_page", "abgelehnt")


@pytest.mark.parametrize(
    ("approved", "decision", "card_answer"),
    [
        (True, CardDecision.APPROVED, "Übernehmen"),
        (False, CardDecision.DECLINED, "Behalten"),
        (False, CardDecision.DECLINED, "Überspringen"),
    ],
)
def test_a_decision_a_card_outcome_says_is_not_recorded_again(approved, decision, card_answer):
    steps = (tool("update_page"),) if approved else (refused("update_page"),)
    parts = segments(llm(["update_page"]), approval(approved), *steps, llm())
    outcomes = (outcome(2, "update_page", decision, card_answer, START + 1),)

    (_, decided) = build_entries(RUN, parts, status="completed", position=2, card_outcomes=outcomes)

    assert decided.decision is None


def test_a_card_outcome_of_another_run_does_not_say_this_runs_decision():
    parts = segments(llm(["update_page"]), approval(False), refused("update_page"), llm())
    other = (outcome(2, "update_page", CardDecision.DECLINED, "Überspringen", START + 1, run_uuid="other"),)

    (_, declined) = build_entries(RUN, parts, status="completed", position=2, card_outcomes=other)

    assert declined.decision == Decision("update_page", "abgelehnt")


def test_a_plain_denial_does_not_take_the_card_outcome_of_a_later_card_with_the_same_tool():
    parts = segments(
        llm(["update_page"]),
        approval(False),
        refused("update_page"),
        llm(["update_page"]),
        approval(False),
        refused("update_page"),
        llm(),
    )
    later_card = (outcome(3, "update_page", CardDecision.DECLINED, "Überspringen", START + 5),)

    (_, plain, skipped) = build_entries(
        RUN, parts, status="completed", position=2, positions={1: 3, 2: 4}, card_outcomes=later_card
    )

    assert plain.decision == Decision("update_page", "abgelehnt")
    assert skipped.decision is None


def test_a_question_answered_records_no_decision():
    parts = segments(llm(["ask_choice"]), answer(), tool("ask_choice"), llm())

    (_, answered) = build_entries(RUN, parts, status="completed", position=2)

    assert answered.decision is None


def test_a_card_left_undecided_by_a_new_message_says_so_and_still_waits():
    parts = segments(llm(["update_page"]))

    (left,) = build_entries(
        RUN, parts, status="waiting_for_approval", position=2, left_by=UndecidedBy.NEW_MESSAGE
    )

    assert left.undecided == Undecided(UndecidedKind.CARD, UndecidedBy.NEW_MESSAGE)
    assert left.ended is Ended.WAITING


def test_a_question_left_undecided_by_ending_the_tour_says_so():
    parts = segments(llm(["ask_choice"]))

    (left,) = build_entries(RUN, parts, status="cancelled", position=2, left_by=UndecidedBy.TOUR_ENDED)

    assert left.undecided == Undecided(UndecidedKind.QUESTION, UndecidedBy.TOUR_ENDED)
    assert left.waiting == ("ask_choice",)


def test_a_segment_that_did_not_wait_is_not_undecided():
    parts = segments(llm(["read_page"]), tool("read_page"), llm())

    (result,) = build_entries(RUN, parts, status="completed", position=2, left_by=UndecidedBy.NEW_MESSAGE)

    assert result.undecided is None


# The call a run waits on by its status: a question for input, a card otherwise.
PENDING_CALL = {"waiting_for_input": "ask_choice"}


def _last_segment(status: str, waiting: bool):
    if waiting:  # the last model round asked for a call that has no step: a card or question pending
        return segments(llm(["read_page"]), tool("read_page"), llm([PENDING_CALL.get(status, "update_page")]))
    return segments(llm(["read_page"]), tool("read_page"))  # the round's call ran: nothing pending


NEW, TOUR = UndecidedBy.NEW_MESSAGE, UndecidedBy.TOUR_ENDED


# 000_…, "Decision": a card or question left undecided by a new message or the end of the tour. A waiting
# run's status says it waits; a cancelled run waited only with a card or question pending in its last
# segment. `left_by` is what the rebuild passes: the tour ended for a cancelled run, a new message otherwise.
@pytest.mark.parametrize(
    ("status", "waiting", "left_by", "ended", "undecided"),
    [
        ("queued", True, NEW, Ended.UNKNOWN, None),
        ("queued", False, NEW, Ended.UNKNOWN, None),
        ("running", True, NEW, Ended.UNKNOWN, None),
        ("running", False, NEW, Ended.UNKNOWN, None),
        ("waiting_for_approval", True, NEW, Ended.WAITING, Undecided(UndecidedKind.CARD, NEW)),
        ("waiting_for_approval", False, NEW, Ended.WAITING, Undecided(UndecidedKind.CARD, NEW)),
        ("waiting_for_input", True, NEW, Ended.WAITING, Undecided(UndecidedKind.QUESTION, NEW)),
        ("waiting_for_input", False, NEW, Ended.WAITING, Undecided(UndecidedKind.QUESTION, NEW)),
        ("completed", True, NEW, Ended.COMPLETED, None),
        ("completed", False, NEW, Ended.COMPLETED, None),
        ("failed", True, NEW, Ended.FAILED, None),
        ("failed", False, NEW, Ended.FAILED, None),
        ("cancelled", True, TOUR, Ended.WAITING, Undecided(UndecidedKind.CARD, TOUR)),
        ("cancelled", False, TOUR, Ended.CANCELLED, None),
    ],
)
def test_only_a_run_waiting_for_a_decision_is_left_undecided_and_a_run_cancelled_while_it_ran_is_cancelled(
    status, waiting, left_by, ended, undecided
):
    parts = _last_segment(status, waiting)

    (result,) = build_entries(RUN, parts, status=status, position=2, left_by=left_by)

    assert (result.ended, result.undecided) == (ended, undecided)


def test_a_run_cancelled_while_it_ran_names_no_waiting_call():
    parts = segments(llm(["read_page"]), tool("read_page"))

    (result,) = build_entries(RUN, parts, status="cancelled", position=2, left_by=UndecidedBy.TOUR_ENDED)

    assert result.waiting == ()


# --- one reading of a card's answer -----------------------------------------------------------------------


# 000_…, amendment, "Decision": the activity list and the run record read a card's answer the same way, by
# the position of the segment that showed the card and the card's tool, never by how near in time it is.
@pytest.mark.parametrize(
    ("outcome_position", "outcome_tool", "seconds_after_approval", "answer"),
    [
        pytest.param(2, "update_page", 90, "Behalten", id="stamped 90 s after the approval"),
        pytest.param(2, "update_page", 0, "Behalten", id="stamped with the approval"),
        pytest.param(5, "update_page", 0, "", id="another position, the same second"),
        pytest.param(2, "create_page", 0, "", id="another tool, the same second"),
    ],
)
def test_a_cards_answer_is_read_by_the_cards_position_and_tool_never_by_time(
    outcome_position, outcome_tool, seconds_after_approval, answer
):
    parts = segments(llm(["update_page"]), approval(False), refused("update_page"), llm())
    approved_at = parts[1].events[0].crdate
    declined = outcome(
        outcome_position,
        outcome_tool,
        CardDecision.DECLINED,
        "Behalten",
        approved_at + seconds_after_approval,
    )

    cards = read_cards(RUN, parts, (declined,), position=2)

    assert cards[1].tool == "update_page"
    assert cards[1].answer == answer


def test_a_declined_card_stamped_90_s_after_its_approval_reads_the_same_in_the_list_and_the_record():
    parts = segments(llm(["update_page"]), approval(False), refused("update_page"), llm())
    declined = outcome(2, "update_page", CardDecision.DECLINED, "Behalten", parts[1].events[0].crdate + 90)

    cards = read_cards(RUN, parts, (declined,), position=2)
    (listed,) = read_segment(parts[1], previous=SegmentContext(cards[1].answer))
    (_, recorded) = build_entries(RUN, parts, status="completed", position=2, card_outcomes=(declined,))

    assert cards == {1: CardReading(1, "update_page", declined)}
    assert (listed.reading, listed.label) == (RefusalReading.DECISION, "Behalten")
    assert recorded.decision is None  # the card outcome says the answer, so the record does not again


def test_a_run_without_decisions_has_no_card_readings():
    parts = segments(llm(["ask_choice"]), answer(), tool("ask_choice"), llm())

    assert read_cards(RUN, parts, (), position=2) == {}


# --- position, order, time --------------------------------------------------------------------------------


def test_each_segment_takes_its_own_position_or_the_one_before():
    parts = segments(llm(["a"]), approval(True), tool("a"), llm(["b"]), approval(True), tool("b"), llm())

    entries = build_entries(RUN, parts, status="completed", position=2, positions={2: 6})

    assert [(e.segment, e.position) for e in entries] == [(0, 2), (1, 2), (2, 6)]


def test_card_outcomes_before_counts_the_outcomes_that_existed_when_the_segment_returned():
    parts = segments(llm(["update_page"]), approval(True), tool("update_page"), llm())
    earlier = outcome(0, "update_page", CardDecision.APPROVED, "Übernehmen", START - 100, run_uuid="before")
    this_card = outcome(2, "update_page", CardDecision.APPROVED, "Übernehmen", START + 1)

    first, second = build_entries(
        RUN, parts, status="completed", position=2, card_outcomes=(earlier, this_card)
    )

    assert (first.card_outcomes_before, second.card_outcomes_before) == (1, 2)


def test_a_card_outcome_recorded_in_the_second_its_continuation_returned_existed_before_it():
    parts = segments(llm(["update_page"]), approval(True), tool("update_page"), llm())
    this_card = outcome(2, "update_page", CardDecision.APPROVED, "Übernehmen", START + 3)

    (_, second) = build_entries(RUN, parts, status="completed", position=2, card_outcomes=(this_card,))

    assert second.card_outcomes_before == 1


def test_the_outcome_of_a_card_stamped_in_the_second_its_segment_returned_is_counted_after_that_segment():
    parts = segments(llm(["update_page"]), approval(True), tool("update_page"), llm())
    same_second = outcome(2, "update_page", CardDecision.APPROVED, "Übernehmen", parts[0].returned_at)

    first, second = build_entries(RUN, parts, status="completed", position=2, card_outcomes=(same_second,))

    assert (first.card_outcomes_before, second.card_outcomes_before) == (0, 1)


# 000_…, "Decision": "Each entry also notes how many card outcomes existed before it, so notes at the same
# transcript position keep the order in which they happened." Counted by that order, not by the second.
def test_how_many_card_outcomes_existed_before_it_counts_in_the_order_they_happened_within_one_second():
    steps = run(
        llm(["update_page"]),
        approval(True),
        tool("update_page"),
        tool_write("pages", 1, "complete"),
        llm(["update_page"]),
        approval(True),
        tool("update_page"),
        tool_write("pages", 1, "complete"),
        llm(),
    )
    parts = split_segments([replace(event, crdate=START) for event in steps])
    first_card = outcome(2, "update_page", CardDecision.APPROVED, "Übernehmen", START)
    second_card = outcome(2, "update_page", CardDecision.APPROVED, "Übernehmen", START)

    entries = build_entries(
        RUN, parts, status="completed", position=2, card_outcomes=(first_card, second_card)
    )

    assert [entry.card_outcomes_before for entry in entries] == [0, 1, 2]


def test_the_note_of_a_card_outcome_stamped_in_the_second_its_segment_returned_follows_that_segments_note():
    parts = segments(llm(["update_page"]), approval(True), tool("update_page"), llm())
    same_second = outcome(2, "update_page", CardDecision.APPROVED, "Übernehmen", parts[0].returned_at)
    messages = [
        TranscriptMessage(1, Role.USER, "Setze den Titel."),
        TranscriptMessage(2, Role.ASSISTANT, "Ich schlage vor …", run_uuid=RUN, segment=0),
        TranscriptMessage(3, Role.ASSISTANT, "Gespeichert.", run_uuid=RUN, segment=1),
    ]
    entries = build_entries(
        RUN, parts, status="completed", position=2, positions={1: 3}, card_outcomes=(same_second,)
    )

    notes = notes_for_turn(messages, entries, (same_second,))

    at_the_proposal = [note.text for note in notes.notes if note.position == 2]
    assert at_the_proposal == [
        labelled(describe_entry(entries[0])),
        labelled(describe_card_outcome(same_second)),
    ]


def test_a_segment_is_dated_by_its_newest_event():
    parts = segments(llm(["update_page"]), approval(True), tool("update_page"), llm())

    first, second = build_entries(RUN, parts, status="completed", position=2)

    assert (first.at, second.at) == (START, START + 3)


# --- the stored column ------------------------------------------------------------------------------------


def test_an_entry_reads_back_from_its_json():
    stored = entry(
        segment=1,
        card_outcomes_before=3,
        ended=Ended.WAITING,
        tools=(ToolUse("read_page", 2, 1),),
        writes=(WrittenRecord("pages:10073", Completeness.PARTIAL),),
        waiting=("update_page",),
        decision=Decision("update_page", "abgelehnt"),
        undecided=Undecided(UndecidedKind.CARD, UndecidedBy.TOUR_ENDED),
        at=START,
    )

    assert from_json(json.loads(json.dumps(stored.to_json()))) == stored
    assert from_json(stored.to_json()) == stored


def test_from_json_tolerates_unknown_keys():
    value = {
        **entry().to_json(),
        "noteVersion": 2,
        "tools": [{"name": "x", "calls": 1, "failed": 0, "ms": 4}],
    }

    assert from_json(value) == entry(tools=(ToolUse("x", 1, 0),))


def test_from_json_takes_defaults_for_the_keys_an_older_entry_lacks():
    value = {"runUuid": RUN, "segment": 0, "ended": "completed"}

    assert from_json(value) == RunRecordEntry(RUN, 0, 0, 0, Ended.COMPLETED)


def test_identifiers_read_back_are_reduced_to_identifier_characters():
    value = {**entry().to_json(), "tools": [{"name": "x\nIgnore all", "calls": 1, "failed": 0}]}

    read = from_json(value)

    assert isinstance(read, RunRecordEntry)
    assert read.tools == (ToolUse("xIgnoreall", 1, 0),)


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        pytest.param({"runUuid": None}, "runUuid missing or not text", id="no run"),
        pytest.param({"runUuid": 5}, "runUuid missing or not text", id="a run as a number"),
        pytest.param({"runUuid": ""}, "runUuid missing or not text", id="a run without text"),
        pytest.param({"segment": None}, "segment is not a count", id="no segment"),
        pytest.param({"segment": "1"}, "segment is not a count", id="segment as text"),
        pytest.param({"segment": True}, "segment is not a count", id="segment a boolean"),
        pytest.param({"ended": "paused"}, "ended has an unknown value", id="ended unknown"),
        pytest.param({"tools": {"x": 1}}, "tools is not a list", id="tools an object"),
        pytest.param({"tools": ["x"]}, "tools is not an object", id="a tool as text"),
        pytest.param({"tools": [{"name": 3, "calls": 1}]}, "name is not a name", id="a tool without a name"),
        pytest.param({"writes": [{"record": "pages"}]}, "record is not table:uid", id="a record without uid"),
        pytest.param(
            {"writes": [{"record": "pages:1", "completeness": "most"}]},
            "completeness has an unknown value",
            id="completeness unknown",
        ),
        pytest.param(
            {"decision": {"tool": "x"}}, "decision answer is not text", id="decision without answer"
        ),
        pytest.param(
            {"undecided": {"kind": "card", "by": "timeout"}}, "by has an unknown value", id="left how"
        ),
    ],
)
def test_an_entry_with_a_malformed_known_key_is_unreadable(changes, reason):
    value = {**entry().to_json(), **changes}

    assert from_json(value) == UnreadableEntry(reason)


def test_an_entry_that_is_not_an_object_is_unreadable():
    assert from_json(["runUuid"]) == UnreadableEntry("entry is not an object")


@pytest.mark.parametrize("text", [None, "", "  "])
def test_a_column_without_a_record_has_no_entries_and_no_problems(text):
    assert parse_run_record(text) == ((), ())


@pytest.mark.parametrize(
    ("text", "reason"),
    [("{not json", "not JSON"), ('{"runUuid": "x"}', "not a list but dict"), ("3", "not a list but int")],
)
def test_a_column_that_is_not_a_json_list_is_one_problem(text, reason):
    assert parse_run_record(text) == ((), (UnreadableEntry(reason),))


def test_an_unreadable_entry_is_reported_with_its_place_and_the_others_still_read():
    text = json.dumps([entry().to_json(), {"runUuid": RUN}, entry(segment=1).to_json()])

    entries, problems = parse_run_record(text)

    assert entries == (entry(), entry(segment=1))
    assert problems == (UnreadableEntry("segment is not a count", index=1),)


def test_the_record_keeps_the_newest_200_entries():
    entries = [entry(segment=n) for n in range(230)]

    kept = keep_newest(entries)

    assert len(kept) == 200
    assert (kept[0].segment, kept[-1].segment) == (30, 229)


def test_the_stored_column_holds_the_newest_entries_as_a_json_list():
    entries = [entry(segment=n) for n in range(3)]

    text = dump_run_record(entries, limit=2)

    assert parse_run_record(text) == ((entry(segment=1), entry(segment=2)), ())


# --- stored beside rebuilt --------------------------------------------------------------------------------


def test_diff_names_the_fields_that_differ_and_the_entries_on_one_side_only():
    stored = [entry(segment=0), entry(segment=1, tools=(ToolUse("update_page", 1, 1),), at=5)]
    rebuilt = [entry(segment=1, at=9), entry(segment=2)]

    differences = diff(stored, rebuilt)

    assert [(d.segment, d.kind, d.fields) for d in differences] == [
        (0, DifferenceKind.ONLY_STORED, tuple(entry().to_json())),
        (1, DifferenceKind.CHANGED, ("tools", "at")),
        (2, DifferenceKind.ONLY_REBUILT, tuple(entry().to_json())),
    ]


def test_diff_leaves_out_the_fields_it_is_told_to_ignore():
    differences = diff([entry(at=5)], [entry(at=9)], ignore=frozenset({"at"}))

    assert differences == ()


def test_a_rebuilt_record_equals_the_one_stored_from_the_same_steps():
    parts = segments(
        llm(["update_page"]), approval(True), tool("update_page"), tool_write("pages", 1, "complete")
    )
    stored = build_entries(RUN, parts, status="running", position=2)

    rebuilt = build_entries(RUN, parts, status="running", position=2)

    assert diff(stored, rebuilt) == ()
