"""Notes for a later turn: texts, placement, order, budget, the flagged answer and the page line (000_…)."""

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.cards import APPROVE_ANSWER, CardDecision, CardOutcome
from core.error_codes import Notice
from core.events import Completeness
from core.notes import (
    FLAGGED_ANSWER,
    LIST_LIMIT,
    MAX_CHARS,
    MAX_NOTES,
    MIN_CHARS,
    NOTE_LABEL,
    OWN_TRANSCRIPT_REASON,
    Note,
    NoUserMessageError,
    Placement,
    describe_card_outcome,
    describe_entry,
    is_empty_step,
    labelled,
    no_notes_reason,
    notes_for_conversation,
    notes_for_turn,
    older_notes_statement,
    page_prompt_line,
)
from core.run_record import (
    Decision,
    Ended,
    RunRecordEntry,
    ToolUse,
    Undecided,
    UndecidedBy,
    UndecidedKind,
    WrittenRecord,
)
from core.transcript import Role, TranscriptMessage, UnreadableMessage, read_message

RUN = "6f1c0a52-run-one"
OTHER_RUN = "9b7e4d13-run-two"


# --- plain-value builders ---------------------------------------------------------------------------------


def user(position: int, content: str = "Bitte prüfe die Seite.") -> TranscriptMessage:
    return TranscriptMessage(position, Role.USER, content)


def answer(
    position: int,
    run_uuid: str = RUN,
    segment: int | None = 0,
    notice: Notice | None = None,
    content: str = "Ich schlage vor …",
) -> TranscriptMessage:
    return TranscriptMessage(
        position, Role.ASSISTANT, content, notice=notice, run_uuid=run_uuid, segment=segment
    )


def entry(
    position: int,
    segment: int = 0,
    run_uuid: str = RUN,
    *,
    before: int = 0,
    ended: Ended = Ended.COMPLETED,
    tools: tuple[ToolUse, ...] = (),
    writes: tuple[WrittenRecord, ...] = (),
    waiting: tuple[str, ...] = (),
    decision: Decision | None = None,
    undecided: Undecided | None = None,
) -> RunRecordEntry:
    return RunRecordEntry(
        run_uuid=run_uuid,
        segment=segment,
        position=position,
        card_outcomes_before=before,
        ended=ended,
        tools=tools,
        writes=writes,
        waiting=waiting,
        decision=decision,
        undecided=undecided,
    )


def wrote(record: str = "pages:1", completeness: Completeness = Completeness.COMPLETE) -> RunRecordEntry:
    return entry(
        1,
        tools=(ToolUse("update_page_seo", 1, 0),),
        writes=(WrittenRecord(record, completeness),),
    )


def card(
    position: int,
    *,
    fields: tuple[str, ...] = ("seo_title",),
    decision: CardDecision = CardDecision.APPROVED,
    answer: str = APPROVE_ANSWER,
    run_uuid: str = RUN,
    at: int = 0,
) -> CardOutcome:
    return CardOutcome(position, run_uuid, "update_page_seo", "pages:1", fields, decision, answer, at)


def words(note: Note) -> str:
    """The note's text without its label."""
    head, tail = NOTE_LABEL.split("…")
    assert note.text.startswith(head)
    assert note.text.endswith(tail)
    return note.text[len(head) : len(note.text) - len(tail)]


# --- the label and the texts -------------------------------------------------------------------------------


def test_the_label_is_the_one_000_gives():
    assert NOTE_LABEL == "[Chat record — written by the chat from the run, not by the assistant: …]"
    assert labelled("x") == "[Chat record — written by the chat from the run, not by the assistant: x]"


@pytest.mark.parametrize(
    ("ended", "says"),
    [
        (Ended.COMPLETED, "The turn: completed."),
        (Ended.WAITING, "The turn: waited for a decision."),
        (Ended.FAILED, "The turn: failed."),
        (Ended.CANCELLED, "The turn: was cancelled."),
    ],
)
def test_the_note_says_how_the_segment_ended(ended, says):
    text = describe_entry(entry(1, ended=ended))

    assert text == f"{says} No tool ran. Nothing was written."


def test_a_segment_of_unknown_end_does_not_say_that_nothing_ran():
    text = describe_entry(entry(1, ended=Ended.UNKNOWN))

    assert "unknown" in text
    assert "No tool ran" not in text
    assert "Nothing was written" not in text


def test_a_continuation_is_named_by_its_segment():
    assert describe_entry(entry(3, segment=2)).startswith("Continuation 2 of the turn: ")


def test_the_note_lists_tools_with_calls_and_failed_calls():
    text = describe_entry(entry(1, tools=(ToolUse("read_page", 2, 1), ToolUse("update_page_seo", 1, 0))))

    assert "Tools that ran: read_page (2 calls, 1 failed), update_page_seo (1 call)." in text


@pytest.mark.parametrize("completeness", list(Completeness))
def test_the_note_lists_records_written_as_table_uid_with_completeness(completeness):
    text = describe_entry(wrote("tt_content:512", completeness))

    assert f"Records written: tt_content:512 ({completeness.value})." in text
    assert "Nothing was written" not in text


def test_the_note_names_the_calls_still_waiting():
    text = describe_entry(entry(1, ended=Ended.WAITING, waiting=("update_page_seo", "translate_page")))

    assert text.startswith("The turn: waited for a decision on update_page_seo, translate_page.")


@pytest.mark.parametrize(
    ("answer", "says"),
    [
        ("freigegeben", "freigegeben (approved)"),
        ("Übernehmen", "Übernehmen (approved)"),
        ("Behalten", "Behalten (declined)"),
        ("abgelehnt", "abgelehnt (declined)"),
        ("Überspringen", "Überspringen (declined)"),
        ("Andere Variante", "Andere Variante (declined)"),
    ],
)
def test_the_note_states_the_decision_taken_on_a_card(answer, says):
    text = describe_entry(entry(3, segment=1, decision=Decision("update_page_seo", answer)))

    assert f"Answer on the card for update_page_seo: {says}." in text


def test_a_card_left_undecided_by_a_new_message_says_nothing_was_saved_and_a_later_decision_is_not_recorded():
    left = Undecided(UndecidedKind.CARD, UndecidedBy.NEW_MESSAGE)

    text = describe_entry(entry(1, ended=Ended.WAITING, waiting=("update_page_seo",), undecided=left))

    assert "left the card undecided and wrote a new message: nothing from it was saved in the chat." in text
    assert "may still be decided in AI Tasks; such a later decision is not recorded here." in text


def test_a_card_left_by_ending_the_tour_says_nothing_was_saved_without_ai_tasks():
    left = Undecided(UndecidedKind.CARD, UndecidedBy.TOUR_ENDED)

    text = describe_entry(entry(1, ended=Ended.WAITING, undecided=left))

    assert "left the card undecided and ended the tour: nothing from it was saved in the chat." in text
    assert "AI Tasks" not in text


def test_a_question_left_unanswered_says_nothing_from_it_was_saved():
    left = Undecided(UndecidedKind.QUESTION, UndecidedBy.NEW_MESSAGE)

    text = describe_entry(entry(1, ended=Ended.WAITING, waiting=("ask_choice",), undecided=left))

    assert "left the question unanswered and wrote a new message: nothing from it was saved" in text


@pytest.mark.parametrize(
    ("decision", "answer", "says"),
    [
        (CardDecision.APPROVED, "Übernehmen", "the editor answered Übernehmen (approved)."),
        (
            CardDecision.DECLINED,
            "Behalten",
            "the editor answered Behalten (declined); its change was not saved.",
        ),
        (
            CardDecision.DECLINED,
            "Überspringen",
            "the editor answered Überspringen (declined); its change was not",
        ),
        (CardDecision.DECLINED, "Andere Variante", "the editor answered Andere Variante (declined);"),
        (CardDecision.DECLINED, "", "the editor declined it; its change was not saved."),
    ],
)
def test_a_card_outcome_note_names_the_fields_and_the_answer(decision, answer, says):
    outcome = card(1, fields=("og_title", "og_description"), decision=decision, answer=answer)

    text = describe_card_outcome(outcome)

    assert text.startswith("Card for update_page_seo on pages:1 (fields og_title, og_description): ")
    assert says in text


def test_identifiers_are_reduced_so_nothing_closes_the_label():
    outcome = CardOutcome(
        1, RUN, "update]page", "pages:1]x", ("seo]title",), CardDecision.APPROVED, "Über]nehmen", 0
    )

    text = describe_card_outcome(outcome) + describe_entry(entry(1, tools=(ToolUse("read]page", 1, 0),)))

    assert "]" not in text


def test_a_long_list_ends_in_how_many_more_there_are():
    writes = tuple(WrittenRecord(f"tt_content:{uid}", Completeness.COMPLETE) for uid in range(1, 31))

    text = describe_entry(entry(1, writes=writes))

    assert text.count("tt_content:") == LIST_LIMIT
    assert f"and {30 - LIST_LIMIT} more." in text


@pytest.mark.parametrize(
    ("step", "empty"),
    [
        (entry(1), True),
        (entry(1, ended=Ended.FAILED), True),
        (entry(1, ended=Ended.WAITING, waiting=("update_page_seo",)), True),
        (entry(1, tools=(ToolUse("read_page", 1, 0),)), False),
        (entry(1, writes=(WrittenRecord("pages:1", Completeness.COMPLETE),)), False),
        (entry(1, decision=Decision("update_page_seo", "abgelehnt")), False),
        (entry(1, undecided=Undecided(UndecidedKind.CARD, UndecidedBy.TOUR_ENDED)), True),
    ],
)
def test_a_step_is_empty_when_nothing_ran_nothing_was_written_and_nothing_was_decided(step, empty):
    assert is_empty_step(step) is empty


# --- placement ---------------------------------------------------------------------------------------------


def test_a_note_goes_into_the_assistant_message_of_its_segment():
    messages = [user(0), answer(1, segment=0), user(2), answer(3, segment=1), user(4)]
    # The entry's position is stale; run and segment name the answer.
    stale = entry(7, segment=1, tools=(ToolUse("read_page", 1, 0),))

    result = notes_for_turn(messages, [stale], [])

    assert [(note.placement, note.position) for note in result.notes] == [(Placement.ASSISTANT, 3)]


def test_a_segment_that_joined_its_text_to_an_earlier_answer_is_noted_in_that_answer():
    messages = [user(0), answer(1, segment=0), user(2)]

    result = notes_for_turn(messages, [entry(1, segment=0), entry(1, segment=1), entry(1, segment=2)], [])

    assert {(note.placement, note.position) for note in result.notes} == {(Placement.ASSISTANT, 1)}
    assert len(result.notes) == 3


def test_a_segment_without_an_answer_before_its_runs_next_answer_gets_a_synthetic_answer_before_it():
    # The turn waited for a card (no answer); the approval's segment answered at the turn's position.
    messages = [user(0), answer(1, segment=1), user(2)]
    waited = entry(1, segment=0, ended=Ended.WAITING, waiting=("update_page",))

    result = notes_for_turn(
        messages, [waited, entry(1, segment=1, tools=(ToolUse("update_page", 1, 0),))], []
    )

    assert [(note.placement, note.position) for note in result.notes] == [
        (Placement.SYNTHETIC_ASSISTANT, 1),
        (Placement.ASSISTANT, 1),
    ]


def test_an_answer_stored_before_messages_carried_a_run_takes_the_notes_of_its_position():
    messages = [user(0), answer(1, run_uuid="", segment=None), user(2)]

    result = notes_for_turn(messages, [entry(1)], [card(1)])

    assert [(note.placement, note.position) for note in result.notes] == [(Placement.ASSISTANT, 1)] * 2


def test_an_answer_naming_its_segment_but_no_run_takes_that_segments_notes():
    messages = [user(0), answer(1, run_uuid="", segment=0), user(2)]

    result = notes_for_turn(messages, [entry(1, segment=0, tools=(ToolUse("read_page", 1, 0),))], [])

    assert [(note.placement, note.position) for note in result.notes] == [(Placement.ASSISTANT, 1)]


def test_a_segment_without_an_answer_gets_a_synthetic_assistant_message_between_the_user_messages():
    # The turn at 1 failed; the editor wrote a new message, which took position 1.
    messages = [user(0), user(1), answer(2, run_uuid=OTHER_RUN)]
    failed = entry(1, ended=Ended.FAILED, tools=(ToolUse("read_page", 1, 1),))

    result = notes_for_turn([*messages, user(3)], [failed], [])

    assert [(note.placement, note.position) for note in result.notes] == [(Placement.SYNTHETIC_ASSISTANT, 1)]


def test_a_segment_whose_position_holds_another_runs_answer_gets_a_synthetic_answer_before_it():
    messages = [user(0), answer(1, run_uuid=OTHER_RUN), user(2)]

    result = notes_for_turn(messages, [entry(1, run_uuid=RUN, tools=(ToolUse("read_page", 1, 0),))], [])

    assert [(note.placement, note.position) for note in result.notes] == [(Placement.SYNTHETIC_ASSISTANT, 1)]


def test_a_note_that_would_close_the_transcript_goes_into_the_user_message():
    # The record of a failed segment, read again by a retry of the same user message.
    messages = [user(0), answer(1), user(2)]
    failed = entry(3, run_uuid=OTHER_RUN, ended=Ended.FAILED, tools=(ToolUse("read_page", 1, 1),))

    result = notes_for_turn(messages, [failed], [])

    assert [(note.placement, note.position) for note in result.notes] == [(Placement.USER, 2)]
    assert result.notes[0].text.startswith(
        "[Chat record — written by the chat from the run, not by the assistant:"
    )


def test_a_note_that_would_open_the_transcript_goes_into_the_first_user_message():
    messages = [user(4), answer(5, run_uuid=OTHER_RUN), user(6)]

    result = notes_for_turn(messages, [entry(2, tools=(ToolUse("read_page", 1, 0),))], [])

    assert [(note.placement, note.position) for note in result.notes] == [(Placement.USER, 4)]


def test_notes_without_a_user_message_to_hold_them_are_refused():
    with pytest.raises(NoUserMessageError):
        notes_for_turn([], [wrote()], [])


def test_a_turn_without_record_or_cards_gets_no_notes():
    assert notes_for_turn([user(0)], [], []) == notes_for_turn([], [], [])


def test_notes_at_the_same_position_keep_the_order_in_which_they_happened():
    # A tour: the turn proposes card 0, each continuation writes and proposes the next card, all joined into
    # the answer at 1; outcomes are decided between the segments.
    messages = [user(0), answer(1), user(2)]
    entries = [
        entry(1, segment=0, before=0, ended=Ended.WAITING),
        entry(
            1,
            segment=1,
            before=1,
            ended=Ended.WAITING,
            writes=(WrittenRecord("pages:1", Completeness.COMPLETE),),
        ),
        entry(1, segment=2, before=2, writes=(WrittenRecord("pages:1", Completeness.COMPLETE),)),
    ]
    outcomes = [card(1, fields=("seo_title",)), card(1, fields=("og_image",))]

    result = notes_for_turn(messages, list(reversed(entries)), outcomes)

    order = [words(note).split(":")[0] for note in result.notes]
    assert order == [
        "The turn",
        "Card for update_page_seo on pages",
        "Continuation 1 of the turn",
        "Card for update_page_seo on pages",
        "Continuation 2 of the turn",
    ]
    assert "seo_title" in words(result.notes[1])
    assert "og_image" in words(result.notes[3])


def test_notes_come_in_transcript_order_with_a_synthetic_answer_before_the_message_at_its_position():
    messages = [user(0), answer(1), user(2), answer(3, run_uuid=OTHER_RUN), user(4)]
    entries = [
        entry(5, run_uuid="third-run", tools=(ToolUse("read_page", 1, 0),)),
        entry(3, run_uuid="second-run", tools=(ToolUse("read_page", 1, 0),)),
        wrote(),
    ]

    result = notes_for_turn(messages, entries, [card(3, run_uuid=OTHER_RUN)])

    assert [(note.placement, note.position) for note in result.notes] == [
        (Placement.ASSISTANT, 1),
        (Placement.SYNTHETIC_ASSISTANT, 3),
        (Placement.ASSISTANT, 3),
        (Placement.USER, 4),
    ]


def test_card_outcomes_of_a_conversation_without_run_record_still_become_notes():
    messages = [
        user(0),
        answer(1, run_uuid="", segment=None),
        user(2),
        answer(3, run_uuid="", segment=None),
        user(4),
    ]
    outcomes = [card(1, fields=("seo_title",)), card(3, fields=("og_title",), decision=CardDecision.DECLINED)]

    result = notes_for_turn(messages, [], outcomes)

    assert [(note.placement, note.position) for note in result.notes] == [
        (Placement.ASSISTANT, 1),
        (Placement.ASSISTANT, 3),
    ]
    assert "(fields seo_title): the editor answered Übernehmen (approved)." in result.notes[0].text
    assert "(fields og_title)" in result.notes[1].text
    assert "its change was not saved" in result.notes[1].text


def test_the_flagged_answer_note_is_scoped_to_its_step():
    summary = "Zusammenfassung: Seitentitel und OpenGraph-Titel sind gespeichert."
    messages = [
        user(0),
        answer(1),
        user(2),
        answer(3, OTHER_RUN, notice=Notice.NOTHING_SAVED, content=summary),
    ]

    result = notes_for_turn([*messages, user(4)], [wrote(), entry(3, run_uuid=OTHER_RUN)], [card(1)])

    flagged = result.notes[-1]
    assert (flagged.placement, flagged.position) == (Placement.ASSISTANT, 3)
    assert words(flagged) == FLAGGED_ANSWER
    assert "wrote no record" in FLAGGED_ANSWER
    assert "in this step was not saved" in FLAGGED_ANSWER
    assert "What earlier steps saved is in the chat records." in FLAGGED_ANSWER
    assert "Nothing it describes as done was saved" not in FLAGGED_ANSWER
    # The record of the earlier step still says what it saved.
    assert "Records written: pages:1 (complete)." in result.notes[0].text


def test_an_answer_without_the_notice_gets_no_flagged_note():
    messages = [user(0), answer(1, notice=Notice.RUN_FINISHED_OUTSIDE), user(2)]

    assert notes_for_turn(messages, [], []).notes == ()


# --- the budget --------------------------------------------------------------------------------------------


def tour(segments: int) -> tuple[list[TranscriptMessage], list[RunRecordEntry]]:
    """A transcript of `segments` answers, each with a segment that wrote pages:1."""
    messages: list[TranscriptMessage] = []
    entries: list[RunRecordEntry] = []
    for number in range(segments):
        messages += [user(2 * number), answer(2 * number + 1, run_uuid=f"run-{number}")]
        entries.append(
            entry(
                2 * number + 1,
                run_uuid=f"run-{number}",
                tools=(ToolUse("update_page_seo", 1, 0),),
                writes=(WrittenRecord("pages:1", Completeness.COMPLETE),),
            )
        )
    messages.append(user(2 * segments))
    return messages, entries


def test_nothing_is_dropped_within_the_budget():
    messages, entries = tour(10)

    result = notes_for_turn(messages, entries, [])

    assert (len(result.notes), result.dropped_count, result.dropped_chars) == (10, 0, 0)
    assert not any("Older notes exist" in note.text for note in result.notes)


def test_notes_of_steps_where_nothing_happened_are_dropped_first():
    messages, writing = tour(30)
    empty = [entry(2 * number + 1, segment=1, run_uuid=f"run-{number}") for number in range(30)]

    result = notes_for_turn(messages, [*writing, *empty], [])

    texts = [words(note) for note in result.notes]
    assert sum("Records written: pages:1" in text for text in texts) == 30
    assert result.dropped_count > 0
    empty_text = describe_entry(empty[0])
    assert result.dropped_chars == result.dropped_count * len(labelled(empty_text))


def test_the_oldest_notes_are_dropped_after_the_empty_ones():
    messages, entries = tour(45)

    result = notes_for_turn(messages, entries, [])

    assert result.dropped_count == 45 - len(result.notes)
    assert [note.position for note in result.notes] == [
        2 * number + 1 for number in range(result.dropped_count, 45)
    ]


def test_the_first_note_says_older_notes_exist_when_something_was_dropped():
    messages, entries = tour(45)

    result = notes_for_turn(messages, entries, [])

    statement = older_notes_statement(result.dropped_count)
    assert words(result.notes[0]).startswith(statement + " The turn: completed.")
    assert "cannot be read in this turn" in statement
    assert sum("Older notes exist" in note.text for note in result.notes) == 1


def test_the_older_notes_statement_counts_against_the_budget():
    messages, entries = tour(45)

    result = notes_for_turn(messages, entries, [])

    assert len(result.notes) <= MAX_NOTES
    assert sum(len(note.text) for note in result.notes) <= MAX_CHARS


def test_a_statement_that_would_not_fit_drops_one_more_note():
    messages, entries = tour(3)
    one = len(labelled(describe_entry(entries[0])))
    # Room for two notes, not for two notes and the statement.
    budget = 2 * one + len(older_notes_statement(1)) // 2

    result = notes_for_turn(messages, entries, [], max_chars=max(budget, MIN_CHARS))

    assert result.dropped_count == 2
    assert len(result.notes) == 1


def test_a_note_too_long_for_the_budget_leaves_the_statement_on_its_own():
    writes = tuple(WrittenRecord(f"tt_content:{uid}", Completeness.PARTIAL) for uid in range(1, 13))
    messages = [user(0), answer(1), user(2)]

    result = notes_for_turn(messages, [entry(1, writes=writes)], [], max_chars=MIN_CHARS)

    assert result.dropped_count == 1
    assert [words(note) for note in result.notes] == [older_notes_statement(1)]
    assert (result.notes[0].placement, result.notes[0].position) == (Placement.ASSISTANT, 1)


# The budget at the seed's own numbers, not the module's constants (000_…, "The record goes to the turn it
# belongs to": "At most 40 notes and 6000 characters are sent."). A note's length is its full text, label
# included; `sized` pads a note to an exact length with its tool's name.
SHORTEST_NOTE = len(labelled(describe_entry(entry(1, tools=(ToolUse("t", 1, 0),)))))


def sized(position: int, length: int) -> RunRecordEntry:
    name = "t" * (length - SHORTEST_NOTE + 1)
    return entry(position, run_uuid=f"run-{position}", tools=(ToolUse(name, 1, 0),))


def tour_of(lengths: list[int]) -> tuple[list[TranscriptMessage], list[RunRecordEntry]]:
    """A transcript of one answer per length, each with a segment whose note is exactly that long."""
    messages: list[TranscriptMessage] = []
    entries: list[RunRecordEntry] = []
    for number, length in enumerate(lengths):
        messages += [user(2 * number), answer(2 * number + 1, run_uuid=f"run-{2 * number + 1}")]
        entries.append(sized(2 * number + 1, length))
    messages.append(user(2 * len(lengths)))
    return messages, entries


def test_forty_notes_are_sent_whole():
    messages, entries = tour_of([141] * 40)

    result = notes_for_turn(messages, entries, [])

    assert (len(result.notes), result.dropped_count) == (40, 0)


def test_the_forty_first_note_is_left_out_and_the_first_note_says_one_older_note_exists():
    messages, entries = tour_of([141] * 41)

    result = notes_for_turn(messages, entries, [])

    assert (len(result.notes), result.dropped_count) == (40, 1)
    assert result.notes[0].position == 3  # the oldest note went
    assert words(result.notes[0]).startswith(
        "Older notes exist and cannot be read in this turn (1 note left out); "
        "a step without a note here is not a step in which nothing happened. The turn: completed."
    )


def test_notes_of_exactly_6000_characters_are_sent_whole():
    messages, entries = tour_of([150] * 40)

    result = notes_for_turn(messages, entries, [])

    assert sum(len(note.text) for note in result.notes) == 6000
    assert (len(result.notes), result.dropped_count) == (40, 0)


def test_notes_of_6001_characters_lose_the_oldest_and_say_so():
    messages, entries = tour_of([151] + [150] * 39)

    result = notes_for_turn(messages, entries, [])

    assert (len(result.notes), result.dropped_count, result.dropped_chars) == (39, 1, 151)
    assert words(result.notes[0]).startswith("Older notes exist and cannot be read in this turn (1 note")


def test_the_older_notes_note_may_fill_the_6000_characters_exactly():
    statement = len(older_notes_statement(1)) + 1  # it opens the first kept note, followed by a space
    kept, spare = divmod(6000 - statement, 40)
    messages, entries = tour_of([141] + [kept + 1] * spare + [kept] * (40 - spare))

    result = notes_for_turn(messages, entries, [])

    assert (len(result.notes), result.dropped_count) == (40, 1)
    assert sum(len(note.text) for note in result.notes) == 6000


def test_the_older_notes_note_states_how_many_notes_were_left_out():
    messages, entries = tour_of([141] * 43)

    result = notes_for_turn(messages, entries, [])

    assert result.dropped_count == 3
    assert words(result.notes[0]).startswith(
        "Older notes exist and cannot be read in this turn (3 notes left out);"
    )


# 000_…: "notes of steps in which nothing ran, nothing was written and nothing was decided are left out
# first, then the oldest". A card left undecided is nothing decided.
def test_a_step_that_left_its_card_undecided_is_left_out_before_an_older_step_in_which_a_tool_ran():
    messages = [user(0), answer(1), user(2), answer(3, segment=1), user(4)]
    ran = entry(1, tools=(ToolUse("get_page", 1, 0),))
    left = entry(
        3,
        segment=1,
        ended=Ended.WAITING,
        waiting=("update_page_seo",),
        undecided=Undecided(UndecidedKind.CARD, UndecidedBy.NEW_MESSAGE),
    )

    result = notes_for_turn(messages, [ran, left], [], max_notes=1)

    assert result.dropped_count == 1
    assert [note.position for note in result.notes] == [1]
    assert "get_page (1 call)" in words(result.notes[0])


@pytest.mark.parametrize(("max_notes", "max_chars"), [(0, MAX_CHARS), (MAX_NOTES, MIN_CHARS - 1)])
def test_a_budget_that_cannot_hold_the_statement_is_refused(max_notes, max_chars):
    with pytest.raises(ValueError, match="budget"):
        notes_for_turn([user(0)], [wrote()], [], max_notes=max_notes, max_chars=max_chars)


# --- the demo: conversation 1 ---------------------------------------------------------------------------

SEO_FIELDS = ("seo_title", "og_image", "og_title", "og_description", "twitter_title", "twitter_description")


def test_the_seo_tour_of_the_demo_gives_was_ist_hier_passiert_the_facts():
    # 000_…, "Context": one run saved six fields of one page through six approved cards; three days later
    # the editor asked "was ist hier passiert?". The tour's text is one answer at 1; a closing answer at 3.
    messages = [
        user(0, "Starte die SEO-Tour für diese Seite."),
        answer(1, segment=0, content="Ich schlage … vor"),
        user(2, "weiter"),
        answer(3, segment=7, content="Die Tour ist abgeschlossen."),
        user(4, "was ist hier passiert?"),
    ]
    proposing = entry(1, segment=0, before=0, ended=Ended.WAITING, waiting=("update_page_seo",))
    saving = [
        entry(
            1,
            segment=number,
            before=number,
            ended=Ended.WAITING if number < 6 else Ended.COMPLETED,
            tools=(ToolUse("update_page_seo", 1, 0),),
            writes=(WrittenRecord("pages:1", Completeness.COMPLETE),),
            waiting=("update_page_seo",) if number < 6 else (),
        )
        for number in range(1, 7)
    ]
    outcomes = [card(1, fields=(field,), at=number) for number, field in enumerate(SEO_FIELDS)]

    result = notes_for_turn(messages, [proposing, *saving], outcomes)

    texts = [words(note) for note in result.notes]
    written = re.findall(r"Records written: (\S+) \((\w+)\)", " ".join(texts))
    assert written == [("pages:1", "complete")] * 6
    approved = [text for text in texts if text.endswith("the editor answered Übernehmen (approved).")]
    assert len(approved) == 6
    assert [re.search(r"\(fields (\w+)\)", text).group(1) for text in approved] == list(SEO_FIELDS)
    assert result.dropped_count == 0
    assert all((note.placement, note.position) == (Placement.ASSISTANT, 1) for note in result.notes)
    # About 2,500 characters for a tour of eight segments and six cards (000_…, "Consequences").
    assert 1500 < sum(len(note.text) for note in result.notes) < MAX_CHARS


# --- budget properties -------------------------------------------------------------------------------------

RUNS = ("run-a", "run-b", "run-c")

tool_uses = st.lists(
    st.builds(
        ToolUse, st.sampled_from(("read_page", "update_page_seo")), st.integers(1, 3), st.integers(0, 1)
    ),
    max_size=2,
    unique_by=lambda tool: tool.name,
)
written_records = st.lists(
    st.builds(
        WrittenRecord, st.sampled_from(("pages:1", "tt_content:7")), st.sampled_from(list(Completeness))
    ),
    max_size=2,
    unique_by=lambda written: written.record,
)


@st.composite
def conversations(draw):
    answers = draw(st.integers(0, 12))
    messages = []
    for number in range(answers):
        messages.append(user(2 * number))
        notice = draw(st.sampled_from((None, None, Notice.NOTHING_SAVED)))
        messages.append(answer(2 * number + 1, draw(st.sampled_from(RUNS)), draw(st.integers(0, 2)), notice))
    messages.append(user(2 * answers))
    positions = st.integers(0, 2 * answers + 2)
    entry_count = draw(st.integers(0, 90))
    entries = draw(
        st.lists(
            st.builds(
                entry,
                positions,
                st.integers(0, 3),
                st.sampled_from(RUNS),
                before=st.integers(0, 20),
                ended=st.sampled_from(list(Ended)),
                tools=tool_uses.map(tuple),
                writes=written_records.map(tuple),
                decision=st.none() | st.builds(Decision, st.just("update_page_seo"), st.just("freigegeben")),
                undecided=st.none()
                | st.builds(
                    Undecided, st.sampled_from(list(UndecidedKind)), st.sampled_from(list(UndecidedBy))
                ),
            ),
            min_size=entry_count,
            max_size=entry_count,
        )
    )
    outcomes = draw(
        st.lists(
            st.builds(
                card,
                positions,
                fields=st.sampled_from(SEO_FIELDS).map(lambda field: (field,)),
                decision=st.sampled_from(list(CardDecision)),
                run_uuid=st.sampled_from(RUNS),
            ),
            max_size=30,
        )
    )
    return messages, entries, outcomes


# Each budget property draws this many conversations of up to 90 entries; drawing them is most of its time.
PROPERTY_EXAMPLES = 50

# The seed's budget half of the time, any budget that can hold the statement otherwise.
budgets = st.just((MAX_NOTES, MAX_CHARS)) | st.tuples(
    st.integers(1, MAX_NOTES), st.integers(MIN_CHARS, MAX_CHARS)
)


def important_texts(messages, entries, outcomes):
    """Each candidate note's words, and whether it records something (a write, a run, a decision)."""
    kinds = {describe_entry(step): not is_empty_step(step) for step in entries}
    kinds |= {describe_card_outcome(outcome): True for outcome in outcomes}
    if any(message.notice is Notice.NOTHING_SAVED for message in messages):
        kinds[FLAGGED_ANSWER] = True
    return kinds


def without_statement(result):
    texts = [words(note) for note in result.notes]
    if result.dropped_count:
        statement = older_notes_statement(result.dropped_count)
        texts[0] = texts[0].removeprefix(statement).lstrip()
    return [text for text in texts if text]


@settings(max_examples=PROPERTY_EXAMPLES, deadline=None)
@given(conversations(), budgets)
def test_the_budget_is_never_exceeded(conversation, budget):
    messages, entries, outcomes = conversation
    max_notes, max_chars = budget

    result = notes_for_turn(messages, entries, outcomes, max_notes=max_notes, max_chars=max_chars)

    assert len(result.notes) <= max_notes <= MAX_NOTES
    assert sum(len(note.text) for note in result.notes) <= max_chars <= MAX_CHARS


@settings(max_examples=PROPERTY_EXAMPLES, deadline=None)
@given(conversations(), budgets)
def test_a_note_that_records_something_is_never_dropped_while_an_empty_step_is_kept(conversation, budget):
    messages, entries, outcomes = conversation
    kinds = important_texts(messages, entries, outcomes)
    flagged = sum(message.notice is Notice.NOTHING_SAVED for message in messages)
    recording = sum(not is_empty_step(step) for step in entries) + len(outcomes) + flagged

    result = notes_for_turn(messages, entries, outcomes, max_notes=budget[0], max_chars=budget[1])

    kept = without_statement(result)
    if any(not kinds[text] for text in kept):
        assert sum(kinds[text] for text in kept) == recording


@settings(max_examples=PROPERTY_EXAMPLES, deadline=None)
@given(conversations(), budgets)
def test_the_older_notes_statement_appears_exactly_when_something_was_dropped(conversation, budget):
    messages, entries, outcomes = conversation
    flagged = sum(message.notice is Notice.NOTHING_SAVED for message in messages)

    result = notes_for_turn(messages, entries, outcomes, max_notes=budget[0], max_chars=budget[1])

    statements = [note for note in result.notes if "Older notes exist and cannot be read" in note.text]
    assert len(statements) == (1 if result.dropped_count else 0)
    if statements:
        assert statements[0] is result.notes[0]
    assert len(without_statement(result)) + result.dropped_count == len(entries) + len(outcomes) + flagged


@settings(max_examples=PROPERTY_EXAMPLES, deadline=None)
@given(conversations(), budgets)
def test_notes_come_in_transcript_order(conversation, budget):
    messages, entries, outcomes = conversation

    result = notes_for_turn(messages, entries, outcomes, max_notes=budget[0], max_chars=budget[1])

    keys = [(note.position, note.placement is not Placement.SYNTHETIC_ASSISTANT) for note in result.notes]
    assert keys == sorted(keys)
    held = {(message.position, message.role) for message in messages}
    for note in result.notes:
        if note.placement is Placement.ASSISTANT:
            assert (note.position, Role.ASSISTANT) in held
        elif note.placement is Placement.USER:
            assert (note.position, Role.USER) in held
        else:
            assert min(m.position for m in messages) < note.position <= max(m.position for m in messages)


# --- the page line -----------------------------------------------------------------------------------------


def test_a_turn_with_a_page_gets_the_selected_page_line():
    assert page_prompt_line(42, 7, reader_may_see_last_page=True) == "The selected page is page 42."


def test_a_turn_without_a_page_names_the_last_page_the_user_may_see():
    line = page_prompt_line(0, 7, reader_may_see_last_page=True)

    assert line.startswith("No page is selected now.")
    assert "The page last selected in this conversation was page 7." in line
    assert "The transcript and the chat records say which pages earlier steps worked on." in line
    assert line.endswith("Ask before new work on a page the user does not refer to.")


def test_a_turn_without_a_page_does_not_name_a_last_page_the_user_may_not_see():
    line = page_prompt_line(0, 7, reader_may_see_last_page=False)

    assert "7" not in line
    assert "A page was selected earlier in this conversation." in line
    assert line.endswith("Ask before new work on a page the user does not refer to.")


@pytest.mark.parametrize("last_page_id", [None, 0])
def test_a_conversation_without_a_last_page_says_no_page_is_selected(last_page_id):
    assert page_prompt_line(0, last_page_id, reader_may_see_last_page=True) == "No page is selected."


# --- the stored message payload ----------------------------------------------------------------------------


def test_a_stored_payload_reads_as_a_message_with_its_run_segment_and_notice():
    payload = {
        "role": "assistant",
        "content": [{"type": "text", "text": "Gespeichert."}, {"type": "image"}],
        "notice": "nothingSaved",
        "runUuid": RUN,
        "segment": 2,
        "createdAt": "2026-11-02T10:00:00+00:00",
        "somethingNew": True,
    }

    assert read_message(5, payload) == TranscriptMessage(
        5, Role.ASSISTANT, "Gespeichert.", Notice.NOTHING_SAVED, (), RUN, 2
    )


def test_an_unknown_notice_reads_as_none_and_noticeargs_are_kept():
    message = read_message(
        1, {"role": "assistant", "content": "x", "notice": "later", "noticeArgs": ["pages:9"]}
    )

    assert isinstance(message, TranscriptMessage)
    assert (message.notice, message.notice_args, message.run_uuid, message.segment) == (
        None,
        ("pages:9",),
        "",
        None,
    )


@pytest.mark.parametrize(
    ("stored", "records"),
    [
        (["pages:10073", "tt_content:10077"], ("pages:10073", "tt_content:10077")),  # as the chat stores them
        ("pages:10073,tt_content:10077", ("pages:10073", "tt_content:10077")),  # a text of them
        ([7, "pages:10073", None, ""], ("pages:10073",)),
        ({"pages": 10073}, ()),
        (None, ()),
    ],
    ids=["list", "text", "list with other values", "object", "none"],
)
def test_the_records_a_run_finished_outside_notice_names_are_read_from_the_chats_list(
    stored: object, records: tuple[str, ...]
) -> None:
    payload = {"role": "assistant", "content": "x", "notice": "runFinishedOutside", "noticeArgs": stored}

    message = read_message(1, payload)

    assert isinstance(message, TranscriptMessage)
    assert message.notice_args == records


def test_a_tool_messages_result_is_never_kept_from_its_payload():
    message = read_message(4, {"role": "tool", "content": "SECRET RESULT", "runUuid": RUN})

    assert message == TranscriptMessage(4, Role.TOOL, "", run_uuid=RUN)


@pytest.mark.parametrize("payload", [[], {"role": "system", "content": "x"}, {"content": "x"}])
def test_a_payload_without_a_known_role_is_unreadable(payload):
    assert isinstance(read_message(3, payload), UnreadableMessage)


# --- a conversation whose transcript is its own (000_…, "Consequences") ------------------------------------

OWN = frozenset({"missing_alt_text"})


def test_a_conversation_whose_skill_replaces_the_transcript_gets_no_notes_and_says_why():
    messages = [user(0), answer(1), user(2)]

    result = notes_for_conversation("missing_alt_text", OWN, messages, [wrote()], [card(1)])

    assert (result.notes, result.dropped_count, result.dropped_chars) == ((), 0, 0)
    assert result.no_notes_reason == OWN_TRANSCRIPT_REASON.format(skill="missing_alt_text")
    assert "confirms the write" in result.no_notes_reason


@pytest.mark.parametrize("skill", ["", "seo-check", "missing_alt_text_v2", "Missing_Alt_Text"])
def test_a_conversation_of_any_other_skill_gets_the_notes_of_its_record(skill):
    messages = [user(0), answer(1), user(2)]

    result = notes_for_conversation(skill, OWN, messages, [wrote()], [card(1)])

    assert result == notes_for_turn(messages, [wrote()], [card(1)])
    assert len(result.notes) == 2 and result.no_notes_reason is None


def test_no_skill_keeps_its_own_transcript_when_none_is_configured():
    assert no_notes_reason("missing_alt_text", frozenset()) is None


def test_the_reason_names_the_skill_reduced_to_the_characters_skill_identifiers_use():
    reason = no_notes_reason(" alt]text ", frozenset({"alt]text"}))

    assert reason == OWN_TRANSCRIPT_REASON.format(skill="alttext")
