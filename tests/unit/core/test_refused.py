"""Calls nr-llm refused, read for the activity list and the run record alike (000_…, amendment)."""

import pytest

from core.events import tool_name
from core.refused import (
    QUESTION_TOOLS,
    REFUSAL_RULES,
    Opening,
    Place,
    RefusalReading,
    SegmentContext,
    Shape,
    read_segment,
    rule_for,
)
from core.run_record import DISPLAY_TOOLS, build_entries
from tests.unit.core.events_helpers import answer, approval, llm, refused, segments, tool, tool_write

DECISION = RefusalReading.DECISION
NOT_PERMITTED = RefusalReading.FAILURE_NOT_PERMITTED
HELD = RefusalReading.HELD
FAILURE = RefusalReading.FAILURE
RAN = RefusalReading.RAN

NO_LONGER_PERMITTED = "nicht ausgeführt: nicht mehr freigegeben"
NOT_YET_RUN = "noch nicht ausgeführt"
FAILED = "fehlgeschlagen"

# The amendment's table, row by row: the run, the card's answer from its card outcome ("" when none names
# one), which segment and which tool step of it is read, and what the list shows and the record counts.
# fmt: off
AMENDMENT_TABLE = [
    # A declined card's calls, and a load_skill of the declined turn: the decision, named by the answer.
    pytest.param((llm(["update_page"]), approval(False), refused("update_page"), llm()),
                 "Behalten", 1, 0, DECISION, "Behalten", False, False,
                 id="a declined card's call, kept as it was"),
    pytest.param((llm(["update_page"]), approval(False), refused("update_page"), llm()),
                 "Überspringen", 1, 0, DECISION, "Überspringen", False, False,
                 id="a declined card's call, skipped"),
    pytest.param((llm(["update_page"]), approval(False), refused("update_page"), llm()),
                 "Andere Variante", 1, 0, DECISION, "Andere Variante", False, False,
                 id="a declined card's call, another variant"),
    pytest.param((llm(["update_page"]), approval(False), refused("update_page"), llm()),
                 "", 1, 0, DECISION, "abgelehnt", False, False,
                 id="a declined card's call, plain denial"),
    pytest.param((llm(["load_skill", "update_page"]), approval(False), refused("load_skill"),
                  refused("update_page"), llm()),
                 "Überspringen", 1, 0, DECISION, "Überspringen", False, False,
                 id="a load_skill of the declined turn"),
    # An approved call whose tool is no longer offered: failure (not_permitted) in the list and the record.
    pytest.param((llm(["update_page"]), approval(True), refused("update_page"), llm()),
                 "", 1, 0, NOT_PERMITTED, NO_LONGER_PERMITTED, True, True,
                 id="an approved call whose tool is no longer offered"),
    # After an approval: a question the model asked in the same turn is held; the model asks it again.
    pytest.param((llm(["update_page", "ask_choice"]), approval(True), tool("update_page"),
                  refused("ask_choice"), llm()),
                 "", 1, 1, HELD, NOT_YET_RUN, False, False,
                 id="after an approval: a question the model asked in the same turn"),
    # After an answer: the question's own tool, no longer offered: failure in the list, not in the record.
    pytest.param((llm(["ask_choice"]), answer(), refused("ask_choice"), llm()),
                 "", 1, 0, NOT_PERMITTED, NO_LONGER_PERMITTED, False, True,
                 id="after an answer: the question's own tool, no longer offered"),
    # After an answer: another call no longer offered, a second call that needs input, a write without an
    # approval: held.
    pytest.param((llm(["ask_choice", "read_page"]), answer(), tool("ask_choice"), refused("read_page"),
                  llm()),
                 "", 1, 1, HELD, NOT_YET_RUN, False, False,
                 id="after an answer: another call no longer offered"),
    pytest.param((llm(["ask_choice", "fill_form"]), answer(), tool("ask_choice"), refused("fill_form"),
                  llm()),
                 "", 1, 1, HELD, NOT_YET_RUN, False, False,
                 id="after an answer: a second call that needs input"),
    pytest.param((llm(["ask_choice", "update_page"]), answer(), tool("ask_choice"), refused("update_page"),
                  llm()),
                 "", 1, 1, HELD, NOT_YET_RUN, False, False,
                 id="after an answer: a write without an approval"),
    # Beside a proposal or a question: a second write, a call that needs input, a remote call: held.
    pytest.param((llm(["update_page", "create_page"]), refused("create_page")),
                 "", 0, 0, HELD, NOT_YET_RUN, False, False,
                 id="beside a proposal: a second write"),
    pytest.param((llm(["update_page", "ask_choice"]), refused("ask_choice")),
                 "", 0, 0, HELD, NOT_YET_RUN, False, False,
                 id="beside a proposal: a call that needs input"),
    pytest.param((llm(["ask_choice", "remote_search"]), refused("remote_search")),
                 "", 0, 0, HELD, NOT_YET_RUN, False, False,
                 id="beside a question: a remote call"),
    pytest.param((llm(["update_page"]), approval(True), tool("update_page"),
                  llm(["update_page", "create_page"]), refused("create_page")),
                 "", 1, 1, HELD, NOT_YET_RUN, False, False,
                 id="beside a proposal in a continuation"),
    # A call the invocation policy refuses, in any segment: "fehlgeschlagen"; nr-llm times it like a call
    # that ran.
    pytest.param((llm(["update_page"]), tool("update_page", ms=1.4, error=True), llm()),
                 "", 0, 0, FAILURE, FAILED, True, True,
                 id="a call the invocation policy refuses, in the turn"),
    pytest.param((llm(["update_page"]), approval(True), tool("update_page", ms=0.8, error=True), llm()),
                 "", 1, 0, FAILURE, FAILED, True, True,
                 id="a call the invocation policy refuses, in a continuation"),
]
# fmt: on


@pytest.mark.parametrize(
    ("steps", "card_answer", "segment", "step", "reading", "label", "in_record", "failed"),
    AMENDMENT_TABLE,
)
def test_each_row_of_the_amendments_table(
    steps, card_answer, segment, step, reading, label, in_record, failed
):
    parts = segments(*steps)

    readings = read_segment(parts[segment], previous=SegmentContext(card_answer))

    got = readings[step]
    assert (got.reading, got.label, got.in_record, got.failed) == (reading, label, in_record, failed)


def test_a_refused_call_of_a_declined_card_gets_no_entry():
    parts = segments(llm(["update_page"]), approval(False), refused("update_page"), llm())

    (reading,) = read_segment(parts[1], previous=SegmentContext("Überspringen"))

    assert reading.reading is DECISION
    assert not reading.in_record


def test_an_approved_call_no_longer_offered_asks_for_an_administrator():
    parts = segments(llm(["update_page"]), approval(True), refused("update_page"), llm())

    (reading,) = read_segment(parts[1])

    assert reading.ask_administrator


def test_a_held_call_asks_for_no_administrator():
    parts = segments(llm(["update_page", "create_page"]), refused("create_page"))

    (reading,) = read_segment(parts[0])

    assert not reading.ask_administrator


def test_a_call_that_ran_is_counted_without_a_label():
    parts = segments(llm(["read_page"]), tool("read_page", ms=40.0), llm())

    (reading,) = read_segment(parts[0])

    assert (reading.reading, reading.label, reading.in_record, reading.failed) == (RAN, "", True, False)


def test_a_question_that_ran_is_never_counted_in_the_record():
    parts = segments(llm(["ask_choice"]), answer(), tool("ask_choice"), llm())

    (reading,) = read_segment(parts[1])

    assert reading.reading is RAN
    assert not reading.in_record


def test_a_refusal_recorded_with_a_measured_duration_reads_failed_again():
    parts = segments(llm(["update_page"]), approval(False), tool("update_page", ms=0.01, error=True), llm())

    (reading,) = read_segment(parts[1])

    assert (reading.reading, reading.label, reading.in_record) == (FAILURE, FAILED, True)


def test_a_zero_duration_refusal_where_the_table_places_none_reads_failed():
    parts = segments(llm(["read_page"]), refused("read_page"), llm(["read_page"]), tool("read_page"), llm())

    readings = read_segment(parts[0])

    assert [r.reading for r in readings] == [FAILURE, RAN]


def test_after_an_answer_a_call_switched_off_while_the_question_waited_reads_not_yet_run():
    parts = segments(
        llm(["ask_choice", "update_page"]), answer(), tool("ask_choice"), refused("update_page"), llm()
    )

    readings = read_segment(parts[1])

    assert readings[1].label == NOT_YET_RUN


def test_a_tool_of_another_extension_that_asks_is_read_like_any_other_tool():
    after_approval = segments(llm(["survey_ask"]), approval(True), refused("survey_ask"), llm())
    after_answer = segments(llm(["survey_ask"]), answer(), refused("survey_ask"), llm())

    (approved_reading,) = read_segment(after_approval[1])
    (answered_reading,) = read_segment(after_answer[1])

    assert "survey_ask" not in QUESTION_TOOLS
    assert (approved_reading.reading, approved_reading.in_record) == (NOT_PERMITTED, True)
    assert answered_reading.reading is HELD


def test_every_tool_step_gets_one_reading_in_sequence_order():
    parts = segments(
        llm(["update_page", "read_page", "ask_choice"]),
        approval(True),
        tool("update_page"),
        tool_write("pages", 5),
        refused("read_page"),
        refused("ask_choice"),
        llm(["read_page"]),
        tool("read_page"),
        llm(),
    )

    readings = read_segment(parts[1])

    assert [(r.tool, r.reading) for r in readings] == [
        ("update_page", RAN),
        ("read_page", HELD),  # beside the card's own call: held, not the approved call
        ("ask_choice", HELD),
        ("read_page", RAN),
    ]
    assert [r.step.sequence for r in readings] == sorted(r.step.sequence for r in readings)


def test_the_list_and_the_record_read_the_same_steps():
    parts = segments(
        llm(["update_page", "read_page", "ask_choice"]),
        approval(True),
        tool("update_page"),
        refused("read_page"),
        refused("ask_choice"),
        llm(["update_page", "create_page"]),
        refused("create_page"),
    )
    readings = read_segment(parts[1])

    (_, entry) = build_entries("uuid-1", parts, status="waiting_for_approval", position=2)

    listed = [(r.tool, r.failed) for r in readings if r.in_record and r.tool not in DISPLAY_TOOLS]
    recorded = [(use.name, use.failed) for use in entry.tools for _ in range(use.calls)]
    assert sorted(listed) == sorted((name, failed > 0) for name, failed in recorded)


def test_every_step_finds_a_rule_and_every_reading_has_one():
    readings = {rule.reading for rule in REFUSAL_RULES}

    for shape in Shape:
        for place in Place:
            for opening in Opening:
                for asks in (False, True):
                    assert rule_for(shape, place, opening, asks) in REFUSAL_RULES
    assert readings == set(RefusalReading)


def test_a_turn_without_tool_steps_has_no_readings():
    parts = segments(llm())

    assert read_segment(parts[0]) == ()


def test_the_reading_names_the_steps_tool():
    parts = segments(llm(["mcp.search"]), tool("mcp.search"), llm())

    (reading,) = read_segment(parts[0])

    assert reading.tool == tool_name(reading.step) == "mcpsearch"
