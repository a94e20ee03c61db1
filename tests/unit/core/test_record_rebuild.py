"""A conversation's run record rebuilt from its runs' events, compared with the stored one, and the notes
its next turn gets (000_…)."""

from __future__ import annotations

from dataclasses import replace

from core.notes import NO_USER_MESSAGE_HELD_REASON, NO_USER_MESSAGE_REASON, OWN_TRANSCRIPT_REASON
from core.record_diff import DifferenceKind
from core.record_rebuild import next_turn_notes, rebuild_record, turn_notes
from core.run_record import (
    Completeness,
    Ended,
    RunRecordEntry,
    Undecided,
    UndecidedBy,
    UndecidedKind,
    WrittenRecord,
)
from tests.unit.core.conversations_helpers import RUN_UUID, a_run, assistant, conversation, user
from tests.unit.core.events_helpers import START, approval, llm, run, tool, tool_write

WROTE = run(llm(["update_page"]), tool("update_page"), tool_write("pages", 5, "complete"), llm())


def test_a_completed_run_is_rebuilt_as_one_entry_at_its_answer_s_position() -> None:
    loaded = conversation(
        messages=[user(0), assistant(1)], runs=[a_run()], events={RUN_UUID: WROTE}, readable=False
    )

    report = rebuild_record(loaded)

    (entry,) = report.rebuilt
    assert (entry.run_uuid, entry.segment, entry.position, entry.ended) == (RUN_UUID, 0, 1, Ended.COMPLETED)
    assert entry.writes == (WrittenRecord("pages:5", Completeness.COMPLETE),)
    assert entry.at == WROTE[-1].crdate  # when its segment returned


def test_an_unreadable_stored_record_is_not_compared() -> None:
    loaded = conversation(
        messages=[user(0), assistant(1)], runs=[a_run()], events={RUN_UUID: WROTE}, readable=False
    )

    assert rebuild_record(loaded).differences == ()


def test_a_readable_stored_record_without_the_entry_differs_by_the_rebuilt_entry() -> None:
    loaded = conversation(messages=[user(0), assistant(1)], runs=[a_run()], events={RUN_UUID: WROTE})

    report = rebuild_record(loaded)

    assert [(d.run_uuid, d.segment, d.kind) for d in report.differences] == [
        (RUN_UUID, 0, DifferenceKind.ONLY_REBUILT)
    ]


def test_the_stored_record_rebuilt_again_agrees_with_itself() -> None:
    first = rebuild_record(
        conversation(messages=[user(0), assistant(1)], runs=[a_run()], events={RUN_UUID: WROTE})
    )

    again = rebuild_record(
        conversation(
            messages=[user(0), assistant(1)], runs=[a_run()], events={RUN_UUID: WROTE}, stored=first.rebuilt
        )
    )

    assert again.differences == ()


def test_a_waiting_run_the_editor_left_with_a_new_message_leaves_its_card_undecided() -> None:
    waiting = run(llm(["update_page"]))
    loaded = conversation(
        messages=[user(0), user(1, "Lass das.")],
        times={0: START - 10, 1: START + 3_600},
        runs=[a_run("waiting_for_approval")],
        events={RUN_UUID: waiting},
    )

    (entry,) = rebuild_record(loaded).rebuilt

    assert entry.undecided == Undecided(UndecidedKind.CARD, UndecidedBy.NEW_MESSAGE)
    assert entry.position == 1  # where its answer would stand: before the first later message


def test_a_run_left_with_a_new_message_and_decided_later_in_ai_tasks_is_recorded_as_the_chat_left_it() -> (
    None
):
    # The card waited from START; the editor wrote at START + 100; the approval came an hour later (AI Tasks).
    events = run(
        llm(["update_page"]), approval(True), tool("update_page"), tool_write("pages", 5, "complete"), llm()
    )
    decided_later = tuple(replace(e, crdate=e.crdate + 3_600) if e.sequence >= 1 else e for e in events)
    loaded = conversation(
        messages=[user(0), user(1, "Lass das.")],
        times={0: START - 10, 1: START + 100},
        runs=[a_run("completed")],
        events={RUN_UUID: decided_later},
    )

    (entry,) = rebuild_record(loaded).rebuilt

    assert (entry.segment, entry.ended, entry.waiting) == (0, Ended.WAITING, ("update_page",))
    assert entry.undecided == Undecided(UndecidedKind.CARD, UndecidedBy.NEW_MESSAGE)


def test_a_decision_taken_before_the_next_message_is_the_chats_and_opens_a_segment() -> None:
    events = run(llm(["update_page"]), approval(True), tool("update_page"), llm())
    loaded = conversation(
        messages=[user(0), user(1, "Danke.")],
        times={0: START - 10, 1: START + 100},
        runs=[a_run("completed")],
        events={RUN_UUID: events},
    )

    assert [entry.segment for entry in rebuild_record(loaded).rebuilt] == [0, 1]


def test_a_waiting_run_without_a_later_message_still_waits_undecided_by_nobody() -> None:
    loaded = conversation(
        messages=[user(0)],
        times={0: START - 10},
        runs=[a_run("waiting_for_approval")],
        events={RUN_UUID: run(llm(["update_page"]))},
    )

    (entry,) = rebuild_record(loaded).rebuilt

    assert entry.ended is Ended.WAITING and entry.undecided is None
    assert entry.position == 1  # after the last message


def test_a_cancelled_run_that_waited_was_left_by_the_end_of_its_tour() -> None:
    tour = run(llm(["chat_set_progress"]), tool("chat_set_progress"), llm(["ask_choice"]))
    loaded = conversation(
        messages=[user(0)], times={0: START - 10}, runs=[a_run("cancelled")], events={RUN_UUID: tour}
    )

    (entry,) = rebuild_record(loaded).rebuilt

    assert entry.undecided == Undecided(UndecidedKind.QUESTION, UndecidedBy.TOUR_ENDED)


def test_a_cancelled_tour_run_that_waited_on_a_card_with_a_question_beside_it_left_the_card() -> None:
    tour = run(llm(["chat_set_progress"]), tool("chat_set_progress"), llm(["update_page_seo", "ask_choice"]))
    loaded = conversation(
        messages=[user(0)], times={0: START - 10}, runs=[a_run("cancelled")], events={RUN_UUID: tour}
    )

    (entry,) = rebuild_record(loaded).rebuilt

    assert entry.waiting == ("update_page_seo",)
    assert entry.undecided == Undecided(UndecidedKind.CARD, UndecidedBy.TOUR_ENDED)


# 000_…, "Decision": "a card or question the editor left undecided, by writing a new message or ending the
# tour"; "The run of an ordinary chat is not cancelled". A cancelled run of no tour did not wait on a card.
def test_a_cancelled_run_of_an_ordinary_chat_left_no_card_undecided_and_ended_cancelled() -> None:
    cancelled = run(llm(["get_page"]))
    loaded = conversation(
        messages=[user(0)], times={0: START - 10}, runs=[a_run("cancelled")], events={RUN_UUID: cancelled}
    )

    (entry,) = rebuild_record(loaded).rebuilt

    assert (entry.ended, entry.waiting, entry.undecided) == (Ended.CANCELLED, (), None)


def test_the_last_page_is_named_only_when_it_may_be_seen() -> None:
    loaded = conversation(messages=[user(0)], view_context={"pageId": 0, "lastPageId": 42})

    visible = next_turn_notes(loaded, own_transcript_skills=(), last_page_visible=True)
    gone = next_turn_notes(loaded, own_transcript_skills=(), last_page_visible=False)

    assert "page 42" in visible.page_line
    assert "42" not in gone.page_line


def test_a_selected_page_is_named_whatever_the_last_page() -> None:
    loaded = conversation(messages=[user(0)], view_context={"pageId": 3, "lastPageId": 42})

    report = next_turn_notes(loaded, own_transcript_skills=(), last_page_visible=False)

    assert report.page_line == "The selected page is page 3."


def test_a_skill_that_keeps_its_own_transcript_gets_no_notes() -> None:
    loaded = conversation(messages=[user(0), assistant(1)], skill="alt-text")

    report = next_turn_notes(loaded, own_transcript_skills=("alt-text",), last_page_visible=False)

    assert report.notes.notes == ()
    assert report.notes.no_notes_reason == OWN_TRANSCRIPT_REASON.format(skill="alt-text")


TOUR = "5f0c6e1a-2222-4c4c-9a9a-000000000002"


def _entry(run_uuid: str, position: int, *, wrote: bool = False) -> RunRecordEntry:
    written = (WrittenRecord("pages:1", Completeness.COMPLETE),) if wrote else ()
    return RunRecordEntry(run_uuid, 0, position, 0, Ended.COMPLETED, writes=written)


def test_a_turn_is_given_the_notes_of_the_steps_before_its_user_message_and_none_of_its_own() -> None:
    loaded = conversation(
        messages=[user(0), assistant(1, run_uuid=TOUR), user(2), assistant(3)],
        stored=[_entry(TOUR, 1, wrote=True), _entry(RUN_UUID, 3)],
        runs=[a_run(uuid=TOUR, uid=1), a_run(uid=2)],
    )

    given = turn_notes(loaded, 3, own_transcript_skills=())

    assert given is not None and given.opened_at == 2
    (note,) = given.notes.notes
    assert "Records written: pages:1 (complete)." in note.text and note.position == 1


def test_the_first_turn_of_a_conversation_is_given_no_notes() -> None:
    loaded = conversation(messages=[user(0), assistant(1)], stored=[_entry(RUN_UUID, 1, wrote=True)])

    given = turn_notes(loaded, 1, own_transcript_skills=())

    assert given is not None and given.notes.notes == ()


def test_an_answer_no_user_message_comes_before_has_no_turn() -> None:
    loaded = conversation(messages=[assistant(0), user(1)])

    assert turn_notes(loaded, 0, own_transcript_skills=()) is None


def test_notes_without_a_user_message_read_are_none_with_the_reason_that_one_could_not_be_read() -> None:
    loaded = conversation(
        messages=[assistant(1)],
        stored=[_entry(TOUR, 0, wrote=True)],
        problems=["message 0: payload is not JSON"],
        unread_messages=1,
    )

    report = next_turn_notes(loaded, own_transcript_skills=(), last_page_visible=False)

    assert report.notes.notes == ()
    assert report.notes.no_notes_reason == NO_USER_MESSAGE_REASON


def test_notes_of_a_conversation_that_holds_no_user_message_say_so_not_that_one_could_not_be_read() -> None:
    # A message read whose time is not a number is a problem of the conversation, and still a message read.
    loaded = conversation(
        messages=[assistant(1)],
        stored=[_entry(TOUR, 0, wrote=True)],
        problems=["message 1: crdate is not a number"],
    )

    report = next_turn_notes(loaded, own_transcript_skills=(), last_page_visible=False)

    assert report.notes.notes == ()
    assert report.notes.no_notes_reason == NO_USER_MESSAGE_HELD_REASON
