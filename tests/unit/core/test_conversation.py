"""A conversation's columns read into core's values: what can be read is kept, the rest named in a line."""

from __future__ import annotations

import json

import pytest

from core.cards import CardDecision, CardOutcome
from core.conversation import (
    StoredMessage,
    event_problem,
    read_card_outcomes,
    read_messages,
    read_run,
    read_stored_record,
    read_view_context,
    runs_named,
)
from core.events import EventProblem, PayloadShape, Problem
from core.run_record import Ended, RunRecordEntry
from core.transcript import Role
from tests.unit.core.conversations_helpers import assistant, conversation, user


def _payload(**values: object) -> str:
    return json.dumps(values)


def test_a_message_that_is_not_json_or_has_no_role_is_named_and_the_others_are_read() -> None:
    rows = [
        StoredMessage(0, _payload(role="user", content="Hallo"), 100),
        StoredMessage(1, "{not json", 101),
        StoredMessage(2, _payload(content="ohne Rolle"), 102),
        StoredMessage(3, None, 103),
    ]

    messages, times, problems = read_messages(rows)

    assert [(m.position, m.role, m.content) for m in messages] == [(0, Role.USER, "Hallo")]
    assert times == {0: 100, 1: 101, 2: 102, 3: 103}
    assert problems == (
        "message 1: payload is not JSON",
        "message 2: role is not user, assistant or tool",
        "message 3: payload is not JSON",
    )


def test_a_payload_the_database_read_is_named_by_what_it_is_and_read_from_its_kept_keys() -> None:
    # adapters.conversations hands over what the payload is and, for an object, its kept keys only.
    rows = [
        StoredMessage(0, _payload(role="user", content="Hallo"), 100, shape=PayloadShape.OBJECT),
        StoredMessage(1, None, 101, shape=PayloadShape.INVALID),
        StoredMessage(2, None, 102, shape=PayloadShape.ABSENT),
        StoredMessage(3, None, 103, shape=PayloadShape.ARRAY),
        StoredMessage(4, None, 104, shape=PayloadShape.NULL),
    ]

    messages, times, problems = read_messages(rows)

    assert [(m.position, m.role, m.content) for m in messages] == [(0, Role.USER, "Hallo")]
    assert times == {0: 100, 1: 101, 2: 102, 3: 103, 4: 104}
    assert problems == (
        "message 1: payload is not JSON",
        "message 2: payload is not JSON",
        "message 3: payload is not an object",
        "message 4: payload is not an object",
    )


def test_a_message_whose_sorting_is_no_number_is_named_by_uid_one_whose_crdate_is_none_is_read() -> None:
    # SQLite keeps a text or a blob in an INTEGER column; the other engines refuse one.
    rows = [
        StoredMessage("z", _payload(role="user", content="Hallo"), 100, uid=7),
        StoredMessage(1, _payload(role="user", content="weiter"), b"12", uid=8),
        StoredMessage(2, _payload(role="user", content="danke"), 102, uid=9),
    ]

    messages, times, problems = read_messages(rows)

    assert [(m.position, m.content) for m in messages] == [(1, "weiter"), (2, "danke")]
    assert times == {2: 102}
    assert problems == ("message uid 7: sorting is not a number", "message 1: crdate is not a number")


def test_a_runs_time_that_is_no_number_is_named_and_read_as_unknown() -> None:
    run, problems = read_run(3, "uuid-3", "completed", "c", "abc", 200)

    assert (run.started_at, run.finished_at) == (0, 200)
    assert problems == ("run uuid-3: started_at is not a number",)
    assert read_run(4, "uuid-4", "completed", "c", 100, 200)[1] == ()


@pytest.mark.parametrize(
    ("text", "readable", "problem"),
    [
        (None, False, None),
        ("", False, None),
        ("[]", True, None),
        ("{not json", False, "run_record: not JSON"),
        ('{"runUuid": "x"}', False, "run_record: not a list but dict"),
        ("[17]", True, "run_record entry 0"),
    ],
)
def test_the_stored_record_is_readable_when_it_is_there_and_only_single_entries_fail(
    text: str | None, readable: bool, problem: str | None
) -> None:
    _, is_readable, problems = read_stored_record(text)

    assert is_readable is readable
    if problem is None:
        assert problems == ()
    else:
        assert len(problems) == 1 and problems[0].startswith(problem)


def test_card_outcomes_that_are_not_json_are_named_as_the_column() -> None:
    outcomes, problems = read_card_outcomes("{not json")

    assert outcomes == ()
    assert len(problems) == 1 and problems[0].startswith("card_outcomes: not JSON")


@pytest.mark.parametrize(
    ("text", "context", "problems"),
    [
        ("", {}, ()),
        ('{"pageId": 3, "lastPageId": 9}', {"pageId": 3, "lastPageId": 9}, ()),
        ("[1, 2]", {}, ()),
        ("{not json", {}, ("view_context: not JSON",)),
    ],
)
def test_a_view_context_is_an_object_or_nothing(text: str, context: dict, problems: tuple) -> None:
    assert read_view_context(text) == (context, problems)


def test_the_runs_named_are_those_of_the_record_the_messages_the_cards_and_the_waiting_run() -> None:
    stored = [RunRecordEntry("run-a", 0, 1, 0, Ended.COMPLETED)]
    messages = [user(0), assistant(1, run_uuid="run-b"), user(2)]
    outcomes = [CardOutcome(1, "run-c", "update_page", "pages:1", (), CardDecision.APPROVED, "Ja", 0)]

    named = runs_named(stored, messages, outcomes, "run-d")

    assert named == ["run-a", "run-b", "run-c", "run-d"]


def test_an_unreadable_event_is_named_by_its_uid_its_run_and_its_problem() -> None:
    problem = EventProblem(41, Problem.PAYLOAD_NOT_JSON)

    assert event_problem("run-a", problem) == "event 41 of run run-a: payload_not_json"


@pytest.mark.parametrize(
    ("context", "page", "last_page"),
    [({}, 0, 0), ({"pageId": 3, "lastPageId": 9}, 3, 9), ({"pageId": "3", "lastPageId": True}, 0, 0)],
)
def test_the_pages_of_a_view_context_are_positive_integers_or_none(
    context: dict, page: int, last_page: int
) -> None:
    loaded = conversation(view_context=context)

    assert (loaded.page_id, loaded.last_page_id) == (page, last_page)
