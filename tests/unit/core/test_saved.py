"""Whether a turn saved anything, read from the run's persisted event stream (001_…, "Decision")."""

import pytest

from core.events import EventProblem, Problem
from core.refused import QUESTION_TOOLS
from core.run_record import DISPLAY_TOOLS
from core.saved import Verdict, nothing_saved, written_records
from tests.unit.core.events_helpers import answer, approval, llm, refused, request, run, tool, tool_write


def test_a_turn_with_a_tool_write_wrote():
    events = run(llm(["update_page"]), tool("update_page"), tool_write("pages", 10073, "complete"), llm())

    assert nothing_saved(events) is Verdict.WROTE


def test_a_turn_that_called_no_tool_saved_nothing():
    events = run(llm())

    assert nothing_saved(events) is Verdict.NOTHING_SAVED


def test_a_turn_that_only_read_saved_nothing():
    events = run(llm(["read_page"]), tool("read_page"), llm())

    assert nothing_saved(events) is Verdict.NOTHING_SAVED


def test_a_write_at_the_first_approval_counts_for_the_answer_after_the_second():
    events = run(
        llm(["update_page"]),
        approval(True),
        tool("update_page"),
        tool_write("pages", 10073, "complete"),
        llm(["update_page"]),
        approval(False),
        refused("update_page"),
        llm(),
    )

    assert nothing_saved(events) is Verdict.WROTE


def test_a_call_run_without_error_directly_after_an_approval_counts_as_a_write():
    events = run(llm(["remote_update"]), approval(True), tool("remote_update"), llm())

    assert nothing_saved(events) is Verdict.WROTE


@pytest.mark.parametrize(
    "after_the_approval",
    [
        pytest.param((tool("remote_update", error=True),), id="the approved call failed"),
        pytest.param((refused("remote_update"),), id="the approved call was no longer permitted"),
        pytest.param((llm(["read_page"]), tool("read_page")), id="a call after the next model round"),
        pytest.param((request(), llm(["read_page"]), tool("read_page")), id="a call after the next request"),
    ],
)
def test_a_call_that_is_not_an_approved_call_run_without_error_is_no_write(after_the_approval):
    events = run(llm(["remote_update"]), approval(True), *after_the_approval, llm())

    assert nothing_saved(events) is Verdict.NOTHING_SAVED


def test_a_tool_that_runs_after_a_failed_approved_call_does_not_make_the_run_a_writer():
    events = run(
        llm(["remote_update"]),
        approval(True),
        tool("remote_update", error=True),
        tool("read_page"),
        llm(),
    )

    assert nothing_saved(events) is Verdict.NOTHING_SAVED


def test_a_tool_that_runs_after_a_successful_approved_call_changes_nothing():
    events = run(
        llm(["remote_update"]),
        approval(True),
        tool("remote_update"),
        tool("read_page", error=True),
        llm(),
    )

    assert nothing_saved(events) is Verdict.WROTE


@pytest.mark.parametrize(
    ("approved_call", "verdict"),
    [
        pytest.param(tool("remote_update"), Verdict.WROTE, id="the approved call ran"),
        pytest.param(tool("remote_update", error=True), Verdict.NOTHING_SAVED, id="the approved call failed"),
    ],
)
@pytest.mark.parametrize("refused_tool", ["ask_choice", "update_page", "remote_update"])
def test_a_refusal_before_the_approved_call_is_skipped(refused_tool, approved_call, verdict):
    events = run(llm(["remote_update"]), approval(True), refused(refused_tool), approved_call, llm())

    assert nothing_saved(events) is verdict


@pytest.mark.parametrize("display_tool", sorted(DISPLAY_TOOLS))
@pytest.mark.parametrize(
    ("approved_call", "verdict"),
    [
        pytest.param((tool("remote_update"),), Verdict.WROTE, id="the approved call ran"),
        pytest.param(
            (tool("remote_update", error=True),), Verdict.NOTHING_SAVED, id="the approved call failed"
        ),
        pytest.param((), Verdict.NOTHING_SAVED, id="no call after it"),
    ],
)
def test_a_display_tool_after_the_approval_is_not_the_approved_call(display_tool, approved_call, verdict):
    events = run(llm(["remote_update"]), approval(True), tool(display_tool), *approved_call, llm())

    assert nothing_saved(events) is verdict


@pytest.mark.parametrize("question_tool", sorted(QUESTION_TOOLS))
def test_a_question_after_the_approval_is_not_the_approved_call(question_tool):
    events = run(llm(["remote_update"]), approval(True), tool(question_tool), llm())

    assert nothing_saved(events) is Verdict.NOTHING_SAVED


def test_the_cards_own_call_refused_as_no_longer_permitted_is_no_write_though_a_call_beside_it_ran():
    events = run(
        llm(["remote_update", "get_page"]), approval(True), refused("remote_update"), tool("get_page"), llm()
    )

    assert nothing_saved(events) is Verdict.NOTHING_SAVED


def test_where_the_segment_before_names_no_call_the_first_call_that_ran_after_the_approval_is_the_one():
    events = run(llm(), approval(True), refused("remote_update"), tool("get_page"), llm())

    assert nothing_saved(events) is Verdict.WROTE


def test_a_refused_step_without_a_tool_name_is_not_taken_for_the_cards_own_call():
    nameless = refused("remote_update")
    del nameless.payload["toolName"]
    events = run(llm(), approval(True), nameless, tool("remote_update"), llm())

    assert nothing_saved(events) is Verdict.WROTE


def test_a_card_whose_call_left_no_step_is_read_by_the_first_call_that_ran():
    events = run(llm(["remote_update"]), approval(True), tool("remote_change"), llm())

    assert nothing_saved(events) is Verdict.WROTE


def test_each_approval_with_approved_true_has_its_own_approved_call():
    events = run(
        llm(["remote_update"]),
        approval(True),
        tool("remote_update", error=True),
        llm(["remote_update"]),
        approval(True),
        tool("remote_update"),
        llm(),
    )

    assert nothing_saved(events) is Verdict.WROTE


def test_a_tool_write_counts_even_after_a_failed_approved_call():
    events = run(
        llm(["update_page"]),
        approval(True),
        tool("update_page", error=True),
        tool("update_page"),
        tool_write("pages", 10073, "complete"),
        llm(),
    )

    assert nothing_saved(events) is Verdict.WROTE


def test_a_call_after_a_declined_approval_is_no_write():
    events = run(llm(["remote_update"]), approval(False), tool("remote_update"), llm())

    assert nothing_saved(events) is Verdict.NOTHING_SAVED


def test_a_call_after_an_answer_is_no_write():
    events = run(llm(["ask_choice"]), answer(), tool("ask_choice"), llm())

    assert nothing_saved(events) is Verdict.NOTHING_SAVED


def test_the_stream_is_read_in_sequence_order():
    events = run(llm(["remote_update"]), approval(True), tool("remote_update"), llm())

    assert nothing_saved(tuple(reversed(events))) is Verdict.WROTE


@pytest.mark.parametrize(
    "stream",
    [
        pytest.param(None, id="no stream"),
        pytest.param((), id="an empty stream"),
        pytest.param((*run(llm()), EventProblem(9, Problem.PAYLOAD_NOT_JSON)), id="an unreadable row"),
    ],
)
def test_an_unreadable_stream_yields_no_notice(stream):
    assert nothing_saved(stream) is Verdict.CANNOT_TELL


def test_an_unreadable_row_hides_no_write_it_could_have_held():
    events = (*run(llm(["update_page"]), tool("update_page"), llm()), EventProblem(4, Problem.UNKNOWN_KIND))

    assert nothing_saved(events) is Verdict.CANNOT_TELL


def test_written_records_name_each_record_once_in_the_order_written():
    events = run(
        llm(["update_page"]),
        tool("update_page"),
        tool_write("pages", 10073, "complete"),
        tool_write("tt_content", 5),
        tool_write("pages", 10073, "partial"),
        llm(),
    )

    assert written_records(events) == ("pages:10073", "tt_content:5")


def test_written_records_leave_out_targets_that_cannot_be_read_and_rows_with_problems():
    events = (*run(tool_write("pages", 0), tool_write("pages", 7)), EventProblem(9, Problem.PAYLOAD_NOT_JSON))

    assert written_records(events) == ("pages:7",)


def test_a_run_that_wrote_nothing_names_no_records():
    assert written_records(run(llm(["read_page"]), tool("read_page"), llm())) == ()
