"""JSON nested deeper than Python's json reads is unreadable, like any text that is not JSON: one problem for
its row, and the rest read on."""

from __future__ import annotations

from core import conversation as stored
from core.answers import stored_message
from core.cards import parse_card_outcomes
from core.events import EventProblem, Problem, parse_event
from core.run_record_json import parse_run_record
from core.transcript import UnreadableMessage

# Well-formed JSON: an array in an array … a hundred thousand deep, inside an object.
DEEP = '{"role": "user", "content": ' + "[" * 100_000 + "]" * 100_000 + "}"


def test_a_message_nested_too_deeply_is_one_problem_and_the_next_message_is_read() -> None:
    rows = [
        stored.StoredMessage(0, DEEP, 100),
        stored.StoredMessage(1, '{"role": "user", "content": "weiter"}', 200),
    ]

    messages, times, problems = stored.read_messages(rows)

    assert [message.position for message in messages] == [1]
    assert problems == ("message 0: payload is not JSON",)
    assert times == {0: 100, 1: 200}


def test_a_message_row_nested_too_deeply_is_an_unreadable_message() -> None:
    row = stored_message(7, 0, "user", 100, DEEP)

    assert isinstance(row.read, UnreadableMessage)


def test_a_run_record_nested_too_deeply_is_not_json() -> None:
    entries, unreadable = parse_run_record("[" + DEEP + "]")

    assert entries == ()
    assert [problem.reason for problem in unreadable] == ["not JSON"]


def test_card_outcomes_nested_too_deeply_are_not_json() -> None:
    outcomes, unreadable = parse_card_outcomes("[" + DEEP + "]")

    assert outcomes == ()
    assert [problem.reason for problem in unreadable] == ["not JSON (nested deeper than it can be read)"]


def test_a_view_context_nested_too_deeply_is_not_json() -> None:
    assert stored.read_view_context(DEEP) == ({}, ("view_context: not JSON",))


def test_an_event_payload_nested_too_deeply_is_not_json() -> None:
    problem = parse_event(1, 0, "llm", 1, 10.0, DEEP, 100)

    assert isinstance(problem, EventProblem)
    assert problem.problem is Problem.PAYLOAD_NOT_JSON
