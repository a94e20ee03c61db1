"""The facts of measure-rates (core.facts): what cannot be read is excluded, never a zero."""

from __future__ import annotations

from core.answers import (
    AnswerState,
    ClaimState,
    completed_answers,
)
from core.facts import Exclusion, conversation_facts, orphan_fact
from core.groups import ALL_RUNS, Group, GroupKind, groups_of
from core.saved import Verdict
from tests.unit.core.measure_helpers import Chat, T, a_run


def test_an_assistant_message_that_cannot_be_read_is_a_fact_of_its_own_excluded_from_answers() -> None:
    chat = Chat()
    chat.broken("assistant", T)

    facts = conversation_facts(chat.value(), [], (), {}, None)

    assert len(facts) == 1
    assert facts[0].answer is AnswerState.UNREADABLE and facts[0].runs == 0
    assert facts[0].problems == (Exclusion.MESSAGE_UNREADABLE,)


def test_a_claim_whose_run_events_cannot_be_read_is_cannot_tell_with_its_reason() -> None:
    chat = Chat()
    chat.say("assistant", "Erledigt, gespeichert.", T, runUuid="run-1", segment=0)
    run = a_run(1, events=4)
    answers = completed_answers(chat.value(), {"run-1": run})

    facts = conversation_facts(chat.value(), [run], answers, {1: Verdict.CANNOT_TELL}, None)

    assert facts[0].claim is ClaimState.CANNOT_TELL
    assert facts[0].problems == (Exclusion.EVENTS_UNREADABLE,)


def test_an_answer_whose_run_is_gone_is_counted_without_configuration_and_its_claim_cannot_tell() -> None:
    chat = Chat()
    chat.say("assistant", "Erledigt.", T, runUuid="run-9", segment=0)
    answers = completed_answers(chat.value(), {})

    facts = conversation_facts(chat.value(), [], answers, {}, None)

    assert facts[0].run_uid == 0 and facts[0].configuration is None and facts[0].skill == "seo-check"
    assert facts[0].claim is ClaimState.CANNOT_TELL
    assert Exclusion.RUN_MISSING in facts[0].problems


def test_a_run_no_conversation_names_counts_in_all_and_its_configuration_never_in_a_skill() -> None:
    fact = orphan_fact(a_run(5))

    assert fact.skill is None
    assert groups_of(fact.configuration, fact.skill) == (
        ALL_RUNS,
        Group(GroupKind.CONFIGURATION, "content-assistant"),
    )
