"""Completed answers (core.answers): which message is one, its claim's verdict, and its denial."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.answers import (
    ConversationInput,
    DenialState,
    completed_answers,
    named_runs,
    verdict_from_counts,
)
from core.events import Event, EventKind, EventProblem, Problem
from core.facts import conversation_facts
from core.measured_runs import EventCounts, RunRow
from core.saved import Verdict, nothing_saved
from tests.unit.core.measure_helpers import DAY, Chat, T, a_run


def test_the_completed_answer_is_the_last_assistant_message_of_the_last_segment() -> None:
    chat = Chat()
    chat.say("user", "Prüfe die Seite", T)
    chat.say("assistant", "Ich schlage einen Titel vor.", T + 1, runUuid="run-1", segment=0)
    chat.say("assistant", "Der Titel ist gespeichert.", T + 60, runUuid="run-1", segment=1)
    run = a_run(1, events=9, openers=1, tool_writes=1, approvals=1)

    answers = completed_answers(chat.value(), {"run-1": run})

    assert [a.text.content for a in answers] == ["Der Titel ist gespeichert."]
    assert answers[0].claims


def test_a_run_that_finished_without_an_answer_in_its_last_segment_has_no_completed_answer() -> None:
    chat = Chat()
    chat.say("assistant", "Ich schlage eine neue Seite vor.", T, runUuid="run-1", segment=0)
    run = a_run(1, events=8, openers=1, approvals=1, tool_writes=1)  # approved in AI Tasks, no answer

    assert completed_answers(chat.value(), {"run-1": run}) == ()


@pytest.mark.parametrize("status", ["waiting_for_approval", "failed", "cancelled", "running"])
def test_only_a_completed_run_has_a_completed_answer(status: str) -> None:
    chat = Chat()
    chat.say("assistant", "Erledigt.", T, runUuid="run-1", segment=0)

    assert completed_answers(chat.value(), {"run-1": a_run(1, status=status, events=3)}) == ()


def test_an_answer_whose_run_is_gone_is_still_an_answer() -> None:
    chat = Chat()
    chat.say("assistant", "Erledigt.", T, runUuid="run-9", segment=0)

    answers = completed_answers(chat.value(), {})

    assert len(answers) == 1 and answers[0].run is None


def test_a_conversation_names_runs_by_its_messages_its_waiting_run_and_its_record() -> None:
    record = json.dumps([{"runUuid": "run-3", "segment": 0, "position": 0, "ended": "unknown"}])
    chat = Chat(record=record)
    chat.say("assistant", "Hallo", T, runUuid="run-1", segment=0)
    chat.approval_run_uuid = "run-2"

    assert named_runs(chat.value()) == ("run-1", "run-2", "run-3")


# --- claims: the verdict ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("counts", "problems", "verdict"),
    [
        (EventCounts(events=0), 0, Verdict.CANNOT_TELL),
        (EventCounts(events=5, tool_writes=1), 0, Verdict.WROTE),
        (EventCounts(events=5), 0, Verdict.NOTHING_SAVED),
        (EventCounts(events=5, tool_writes=1), 1, None),  # core.saved reads the stream
        (EventCounts(events=5, approvals=1), 0, None),  # an approval may have released a call
    ],
)
def test_the_counts_settle_a_verdict_only_where_they_can(
    counts: EventCounts, problems: int, verdict: Verdict | None
) -> None:
    assert verdict_from_counts(counts, problems) is verdict


_KINDS = [kind.value for kind in EventKind] + ["mystery"]


@st.composite
def streams(draw: st.DrawFn) -> list[tuple[str, bool, bool]]:
    """(kind, a flag (approved or toolIsError), payload readable) per event."""
    return draw(st.lists(st.tuples(st.sampled_from(_KINDS), st.booleans(), st.booleans()), max_size=12))


@given(streams())
def test_the_counts_never_contradict_core_saved(stream: list[tuple[str, bool, bool]]) -> None:
    events: list[Event | EventProblem] = []
    problems = 0
    for uid, (kind, flag, readable) in enumerate(stream, start=1):
        if kind == "mystery" or not readable:
            events.append(EventProblem(uid, Problem.PAYLOAD_NOT_JSON))
            problems += 1
            continue
        payload = {"approved": flag} if kind == "approval" else {"toolIsError": flag}
        events.append(Event(uid, uid, EventKind(kind), 1, 1.0, payload, T))
    counts = EventCounts(
        events=len(stream),
        tool_writes=sum(1 for kind, _, _ in stream if kind == "tool_write"),
        approvals=sum(1 for kind, _, _ in stream if kind == "approval"),
    )

    verdict = verdict_from_counts(counts, problems)

    assert verdict is None or verdict is nothing_saved(events)


# --- denials ------------------------------------------------------------------------------------------------


def _record(*entries: tuple[str, int, int, bool]) -> str:
    return json.dumps(
        [
            {
                "runUuid": run,
                "segment": segment,
                "position": position,
                "ended": "completed",
                "writes": [{"record": "pages:1", "completeness": "complete"}] if wrote else [],
            }
            for run, segment, position, wrote in entries
        ]
    )


def _denial_chat(record: str | None) -> tuple[ConversationInput, dict[str, RunRow]]:
    chat = Chat(record=record)
    chat.say("assistant", "Der Titel ist gespeichert.", T, runUuid="run-1", segment=1)
    chat.say("user", "was ist hier passiert?", T + 3 * DAY)
    chat.say(
        "assistant", "Hier wurde nichts geprüft oder geändert.", T + 3 * DAY + 5, runUuid="run-2", segment=0
    )
    runs = {
        "run-1": a_run(1, ended_at=T, events=10, openers=1, approvals=1, tool_writes=1, first_write_at=T - 5),
        "run-2": a_run(2, ended_at=T + 3 * DAY + 5, events=3),
    }
    return chat.value(), runs


def _denial_of(conversation: ConversationInput, runs: dict[str, RunRow]) -> DenialState:
    answers = completed_answers(conversation, runs)
    facts = conversation_facts(conversation, list(runs.values()), answers, {}, None)
    return next(f.denial for f in facts if f.run_uid == 2)


def test_an_answer_that_denies_a_write_the_run_record_shows_earlier_is_a_denial() -> None:
    conversation, runs = _denial_chat(_record(("run-1", 1, 0, True), ("run-2", 0, 2, False)))

    assert _denial_of(conversation, runs) is DenialState.DENIES


def test_without_an_earlier_write_an_answer_is_not_counted_for_denials() -> None:
    conversation, runs = _denial_chat(_record(("run-1", 1, 0, False), ("run-2", 0, 2, False)))

    assert _denial_of(conversation, runs) is DenialState.NO_EARLIER_WRITE


def test_a_conversation_from_before_the_run_record_is_read_from_its_runs_writes() -> None:
    conversation, runs = _denial_chat(None)

    assert _denial_of(conversation, runs) is DenialState.DENIES


def test_a_run_record_that_cannot_be_read_makes_the_denial_cannot_tell() -> None:
    conversation, runs = _denial_chat("{this is not json")

    assert _denial_of(conversation, runs) is DenialState.CANNOT_TELL


def test_a_write_in_the_answers_own_segment_is_not_an_earlier_write() -> None:
    chat = Chat(record=_record(("run-1", 0, 0, True)))
    chat.say("assistant", "Nichts wurde geändert.", T, runUuid="run-1", segment=0)
    runs = {"run-1": a_run(1, events=5, tool_writes=1)}
    answers = completed_answers(chat.value(), runs)

    facts = conversation_facts(chat.value(), list(runs.values()), answers, {1: Verdict.WROTE}, None)

    assert facts[0].denial is DenialState.NO_EARLIER_WRITE
