"""A "go on" while an approval waits (core.waits)."""

from __future__ import annotations

import pytest

from core.facts import conversation_facts
from core.waits import GoOnState, Step, Wait, approval_waits, go_on_state
from tests.unit.core.measure_helpers import Chat, T, a_run


def test_an_approval_waits_from_the_event_before_it_up_to_it_and_a_waiting_run_waits_on() -> None:
    steps = [Step(1, 0, "llm", T), Step(2, 1, "approval", T + 300), Step(3, 2, "llm", T + 400)]

    assert approval_waits(steps, "completed") == (Wait(T, T + 300),)
    assert approval_waits(steps, "waiting_for_approval") == (Wait(T, T + 300), Wait(T + 400, None))


@pytest.mark.parametrize(
    ("message", "at", "state"),
    [
        ("weiter", T + 100, GoOnState.YES),
        ("habe alles freigegeben", T + 100, GoOnState.YES),
        ("weiter", T + 500, GoOnState.NO),  # the approval was decided before
        ("weiter mit der nächsten Seite bitte", T + 100, GoOnState.NO),  # a longer sentence is a request
    ],
)
def test_go_on_counts_only_a_whole_phrase_sent_while_an_approval_waited(
    message: str, at: int, state: GoOnState
) -> None:
    chat = Chat()
    chat.say("user", message, at)

    assert go_on_state(chat.value(), [Wait(T, T + 300)]) is state


def test_an_unreadable_user_message_while_an_approval_waited_makes_go_on_cannot_tell() -> None:
    chat = Chat()
    chat.broken("user", T + 100)

    assert go_on_state(chat.value(), [Wait(T, T + 300)]) is GoOnState.CANNOT_TELL


@pytest.mark.parametrize("broken_first", [True, False], ids=["unreadable first", "go on first"])
def test_a_go_on_while_an_approval_waited_is_yes_beside_an_unreadable_user_message(
    broken_first: bool,
) -> None:
    chat = Chat()
    if broken_first:
        chat.broken("user", T + 100)
    chat.say("user", "weiter", T + 150)
    if not broken_first:
        chat.broken("user", T + 200)

    state = go_on_state(chat.value(), [Wait(T, T + 300)])

    assert state is GoOnState.YES


def test_a_conversation_is_counted_once_for_go_on_at_its_first_waiting_run() -> None:
    chat = Chat()
    chat.say("user", "weiter", T + 100)
    first = a_run(1, status="waiting_for_approval", ended_at=T, events=3)
    second = a_run(2, ended_at=T + 200, events=9, approvals=1, tool_writes=1)
    waits = {1: (Wait(T, None),), 2: (Wait(T + 150, T + 190),)}

    facts = conversation_facts(chat.value(), [first, second], (), {}, waits)

    assert [(f.run_uid, f.go_on) for f in facts] == [(1, GoOnState.YES), (2, GoOnState.NONE)]
