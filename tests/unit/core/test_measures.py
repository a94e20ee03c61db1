"""What measure-rates counts (core.measures): periods, completed answers, claims, denials, "go on", rates."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.events import Event, EventKind, EventProblem, Problem
from core.measures import (
    ALL_RUNS,
    COUNTS,
    DEFINITIONS,
    METRICS,
    RATES,
    RATES_VERSION,
    STORED_SINCE,
    AnswerState,
    ClaimState,
    ConversationInput,
    Count,
    DenialState,
    EditedWrite,
    EventCounts,
    Exclusion,
    FactTally,
    GoOnState,
    Grain,
    Group,
    GroupKind,
    Metric,
    OpenTally,
    OutcomeTally,
    RunRow,
    Step,
    Wait,
    approval_waits,
    comparison_periods,
    completed_answers,
    conversation_facts,
    conversation_input,
    go_on_state,
    groups_of,
    named_runs,
    open_from,
    orphan_fact,
    parse_group,
    period_start,
    rate_counts,
    run_end,
    shown,
    stored_message,
    verdict_from_counts,
)
from core.saved import Verdict, nothing_saved

DAY = 86_400
T = int(datetime(2026, 10, 14, 12, 0, tzinfo=UTC).timestamp())  # a Wednesday


def unix(text: str) -> int:
    return int(datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp())


# --- a conversation as values ------------------------------------------------------------------------------


class Chat:
    """A conversation's stored messages and runs, as the job hands them to core."""

    def __init__(self, skill: str = "seo-check", record: str | None = None) -> None:
        self.skill = skill
        self.record = record
        self.messages: list[tuple[int, int, str, int, str | None]] = []
        self.approval_run_uuid = ""

    def say(self, role: str, content: str, at: int, **extra: object) -> int:
        sorting = len(self.messages)
        payload = json.dumps({"role": role, "content": content, **extra})
        self.messages.append((100 + sorting, sorting, role, at, payload))
        return sorting

    def broken(self, role: str, at: int) -> None:
        sorting = len(self.messages)
        self.messages.append((100 + sorting, sorting, role, at, "{not json"))

    def value(self) -> ConversationInput:
        stored = [stored_message(*m) for m in self.messages]
        return conversation_input(7, self.skill, self.approval_run_uuid, self.record, stored)


def a_run(uid: int, *, status: str = "completed", ended_at: int = T, **counts: int) -> RunRow:
    return RunRow(uid, f"run-{uid}", status, "content-assistant", ended_at, EventCounts(**counts))


# --- periods -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("moment", "grain", "start"),
    [
        ("2026-10-12T00:00:00", Grain.WEEK, date(2026, 10, 12)),  # a Monday starts its week
        ("2026-10-11T23:59:59", Grain.WEEK, date(2026, 10, 5)),  # Sunday night is the week before
        ("2026-10-18T23:59:59", Grain.WEEK, date(2026, 10, 12)),
        ("2026-01-01T10:00:00", Grain.WEEK, date(2025, 12, 29)),  # ISO week 1 starts in the old year
        ("2026-10-11T23:59:59", Grain.DAY, date(2026, 10, 11)),
        ("2026-10-12T00:00:00", Grain.DAY, date(2026, 10, 12)),
    ],
)
def test_a_period_is_the_utc_day_or_the_iso_week_from_monday(moment: str, grain: Grain, start: date) -> None:
    assert period_start(unix(moment), grain) == start


def test_a_run_that_has_not_finished_ends_at_its_last_update() -> None:
    assert run_end(finished_at=0, tstamp=500, started_at=100, crdate=100) == 500
    assert run_end(finished_at=400, tstamp=500, started_at=100, crdate=100) == 400


def test_every_period_from_the_first_run_still_inside_its_window_is_open() -> None:
    now = unix("2026-11-04T12:00:00")  # a Wednesday

    first = open_from(now, 7 * DAY, earliest_open_end=unix("2026-10-29T08:00:00"), grain=Grain.WEEK)

    assert first == date(2026, 10, 26)
    assert open_from(now, 7 * DAY, None, Grain.WEEK) == date(2026, 11, 2)  # the current period is open
    assert open_from(now, 7 * DAY, unix("2026-10-29T08:00:00"), Grain.DAY) == date(2026, 10, 29)
    # A run ending at now − window exactly may still change: a write at that second is not due yet.
    assert open_from(now, 7 * DAY, now - 7 * DAY, Grain.DAY) == date(2026, 10, 28)


def test_a_comparison_on_a_monday_sums_n_weeks_each_side() -> None:
    sides = comparison_periods(date(2026, 10, 12), 2, Grain.WEEK)

    assert sides.before == (date(2026, 9, 28), date(2026, 10, 5))
    assert sides.after == (date(2026, 10, 12), date(2026, 10, 19))
    assert sides.straddling is None


def test_the_week_that_holds_a_midweek_date_is_on_neither_side() -> None:
    sides = comparison_periods(date(2026, 10, 14), 1, Grain.WEEK)

    assert sides.before == (date(2026, 10, 5),)
    assert sides.after == (date(2026, 10, 19),)
    assert sides.straddling == date(2026, 10, 12)


def test_a_comparison_by_day_is_exact_to_the_day() -> None:
    sides = comparison_periods(date(2026, 10, 14), 1, Grain.DAY)

    assert sides.before[0] == date(2026, 10, 7) and sides.before[-1] == date(2026, 10, 13)
    assert sides.after[0] == date(2026, 10, 14) and len(sides.after) == 7


# --- completed answers -------------------------------------------------------------------------------------


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


# --- "go on" while an approval waits -----------------------------------------------------------------------


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


def test_a_conversation_is_counted_once_for_go_on_at_its_first_waiting_run() -> None:
    chat = Chat()
    chat.say("user", "weiter", T + 100)
    first = a_run(1, status="waiting_for_approval", ended_at=T, events=3)
    second = a_run(2, ended_at=T + 200, events=9, approvals=1, tool_writes=1)
    waits = {1: (Wait(T, None),), 2: (Wait(T + 150, T + 190),)}

    facts = conversation_facts(chat.value(), [first, second], (), {}, waits)

    assert [(f.run_uid, f.go_on) for f in facts] == [(1, GoOnState.YES), (2, GoOnState.NONE)]


# --- facts: what cannot be read is excluded, never a zero ---------------------------------------------------


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


# --- aggregation: hand-computed -----------------------------------------------------------------------------

WEEK = date(2026, 10, 12)


def tally(
    claim: str = "", *, answer: str = "read", facts: int = 1, runs: int = 1, **fields: object
) -> FactTally:
    values: dict[str, object] = {
        "period": WEEK,
        "configuration": "content-assistant",
        "skill": "",
        "answer": answer,
        "notice": False,
        "claim": claim,
        "denial": "",
        "go_on": "",
        "problems": "",
        "runs": runs,
        "facts": facts,
    }
    values.update(fields)
    return FactTally(**values)  # type: ignore[arg-type]


def test_claimed_unwritten_counts_unwritten_claims_over_answers_and_excludes_what_cannot_tell() -> None:
    tallies = [
        tally("nothing_saved", facts=2, runs=2),
        tally("no_claim", facts=5, runs=5),
        tally("wrote", facts=3, runs=3, notice=True),
        tally("cannot_tell", facts=1, runs=1, problems="events_unreadable"),
        tally(answer="unreadable", facts=1, runs=0, problems="message_unreadable"),
    ]

    counts = rate_counts(tallies, [], []).counts

    assert counts[(Metric.CLAIMED_UNWRITTEN_RATE, WEEK, ALL_RUNS)] == Count(2, 10, 2)
    assert counts[(Metric.NOTHING_SAVED_RATE, WEEK, ALL_RUNS)] == Count(3, 11, 1)
    assert counts[(Metric.RUNS, WEEK, ALL_RUNS)] == Count(11, 11, 0)


def test_exclusions_are_noted_by_reason() -> None:
    tallies = [
        tally("cannot_tell", problems="events_unreadable"),
        tally(answer="unreadable", runs=0, problems="message_unreadable"),
    ]

    exclusions = rate_counts(tallies, [], []).exclusions

    assert exclusions[(Metric.CLAIMED_UNWRITTEN_RATE, Exclusion.EVENTS_UNREADABLE)] == 1
    assert exclusions[(Metric.CLAIMED_UNWRITTEN_RATE, Exclusion.MESSAGE_UNREADABLE)] == 1
    assert exclusions[(Metric.DENIAL_RATE, Exclusion.MESSAGE_UNREADABLE)] == 1


def test_denials_count_only_answers_after_an_earlier_write() -> None:
    tallies = [
        tally("no_claim", denial="denies", facts=1),
        tally("no_claim", denial="does_not_deny", facts=3),
        tally("no_claim", denial="no_earlier_write", facts=6),
        tally("no_claim", denial="cannot_tell", facts=1),
    ]

    counts = rate_counts(tallies, [], []).counts

    assert counts[(Metric.DENIAL_RATE, WEEK, ALL_RUNS)] == Count(1, 4, 1)


def test_go_on_counts_conversations_with_a_waiting_approval() -> None:
    tallies = [
        tally(answer="", go_on="yes", facts=2),
        tally(answer="", go_on="no", facts=5),
        tally(answer="", go_on="cannot_tell", facts=1),
        tally(answer="", go_on="", facts=9),
    ]

    counts = rate_counts(tallies, [], []).counts

    assert counts[(Metric.GO_ON_WHILE_WAITING, WEEK, ALL_RUNS)] == Count(2, 7, 1)


@pytest.mark.parametrize(
    ("claim", "notice", "counted"),
    [
        ("nothing_saved", True, Count(1, 1, 0)),  # both say nothingSaved
        ("no_claim", False, Count(1, 1, 0)),  # neither does
        ("wrote", False, Count(1, 1, 0)),  # a claim the run made: no notice, rightly
        ("nothing_saved", False, Count(0, 1, 0)),  # recomputed nothingSaved, the chat stored none
        ("no_claim", True, Count(0, 1, 0)),  # the chat flagged an answer core's words do not claim with
        ("wrote", True, Count(0, 1, 0)),  # the chat flagged an answer whose run wrote
        ("cannot_tell", False, Count(0, 0, 1)),
        ("cannot_tell", True, Count(0, 0, 1)),
    ],
)
def test_an_answer_agrees_with_the_chats_notice_when_the_recomputation_says_the_same(
    claim: str, notice: bool, counted: Count
) -> None:
    problems = "events_unreadable" if claim == "cannot_tell" else ""
    tallies = [tally(claim, notice=notice, since_first_notice=True, problems=problems)]

    counts = rate_counts(tallies, [], []).counts

    assert counts[(Metric.NOTICE_AGREEMENT, WEEK, ALL_RUNS)] == counted


def test_an_answer_before_the_first_stored_notice_is_not_counted_for_notice_agreement() -> None:
    tallies = [
        tally("nothing_saved", facts=4, since_first_notice=False),  # back-filled: the chat stored none yet
        tally(answer="unreadable", runs=0, problems="message_unreadable", since_first_notice=False),
    ]

    result = rate_counts(tallies, [], [])

    assert (Metric.NOTICE_AGREEMENT, WEEK, ALL_RUNS) not in result.counts
    assert result.counts[(Metric.CLAIMED_UNWRITTEN_RATE, WEEK, ALL_RUNS)] == Count(4, 4, 1)
    assert not any(metric is Metric.NOTICE_AGREEMENT for metric, _ in result.exclusions)


def test_an_answer_whose_recomputation_cannot_tell_is_excluded_from_notice_agreement_by_its_reason() -> None:
    tallies = [
        tally("nothing_saved", notice=True, facts=3, since_first_notice=True),
        tally("cannot_tell", notice=True, problems="events_unreadable", since_first_notice=True),
        tally("cannot_tell", runs=0, problems="run_missing", since_first_notice=True),
        tally(answer="unreadable", runs=0, problems="message_unreadable", since_first_notice=True),
    ]

    result = rate_counts(tallies, [], [])

    assert result.counts[(Metric.NOTICE_AGREEMENT, WEEK, ALL_RUNS)] == Count(3, 3, 3)
    assert result.exclusions[(Metric.NOTICE_AGREEMENT, Exclusion.EVENTS_UNREADABLE)] == 1
    assert result.exclusions[(Metric.NOTICE_AGREEMENT, Exclusion.RUN_MISSING)] == 1
    assert result.exclusions[(Metric.NOTICE_AGREEMENT, Exclusion.MESSAGE_UNREADABLE)] == 1


def test_notice_agreement_is_counted_per_period_and_group_like_every_metric() -> None:
    later = WEEK + timedelta(days=7)
    tallies = [
        tally("no_claim", notice=True, since_first_notice=True),
        tally("nothing_saved", notice=True, facts=2, since_first_notice=True, configuration="seo-assistant"),
        tally("no_claim", facts=5, since_first_notice=True, period=later),
    ]

    counts = rate_counts(tallies, [], []).counts

    seo = Group(GroupKind.CONFIGURATION, "seo-assistant")
    assert counts[(Metric.NOTICE_AGREEMENT, WEEK, ALL_RUNS)] == Count(2, 3, 0)
    assert counts[(Metric.NOTICE_AGREEMENT, WEEK, seo)] == Count(2, 2, 0)
    assert counts[(Metric.NOTICE_AGREEMENT, WEEK, Group(GroupKind.SKILL, ""))] == Count(2, 3, 0)
    assert counts[(Metric.NOTICE_AGREEMENT, later, ALL_RUNS)] == Count(5, 5, 0)


def test_an_answer_the_chat_flagged_without_a_claim_word_of_core_disagrees_with_the_recomputation() -> None:
    chat = Chat()
    chat.say("assistant", "Fertig, die Seite ist jetzt live.", T, runUuid="run-1", notice="nothingSaved")
    run = a_run(1, events=3)
    answers = completed_answers(chat.value(), {"run-1": run})
    (fact,) = conversation_facts(chat.value(), [run], answers, {}, None)
    stored = tally(fact.claim.value, notice=fact.notice, since_first_notice=True)

    counts = rate_counts([stored], [], []).counts

    assert fact.notice and fact.claim is ClaimState.NO_CLAIM
    assert counts[(Metric.NOTICE_AGREEMENT, WEEK, ALL_RUNS)] == Count(0, 1, 0)
    assert counts[(Metric.NOTHING_SAVED_RATE, WEEK, ALL_RUNS)] == Count(1, 1, 0)
    assert counts[(Metric.CLAIMED_UNWRITTEN_RATE, WEEK, ALL_RUNS)] == Count(0, 1, 0)


def test_outcome_rates_leave_unknown_out_of_the_denominator_and_report_its_share() -> None:
    outcomes = [
        OutcomeTally(WEEK, "seo-assistant", "seo-check", "edited", 3),
        OutcomeTally(WEEK, "seo-assistant", "seo-check", "accepted_unchanged", 6),
        OutcomeTally(WEEK, "seo-assistant", "seo-check", "discarded", 1),
        OutcomeTally(WEEK, "seo-assistant", "seo-check", "unknown", 2),
        OutcomeTally(WEEK, "seo-assistant", "seo-check", "approved??", 1),  # no rule writes this
    ]

    counts = rate_counts([], outcomes, []).counts
    seo = Group(GroupKind.CONFIGURATION, "seo-assistant")

    assert counts[(Metric.EDITED_RATE, WEEK, seo)] == Count(3, 10, 3)
    assert counts[(Metric.DISCARDED_RATE, WEEK, ALL_RUNS)] == Count(1, 10, 3)
    assert counts[(Metric.ACCEPTED_UNCHANGED_RATE, WEEK, ALL_RUNS)] == Count(6, 10, 3)
    assert counts[(Metric.UNKNOWN_SHARE, WEEK, Group(GroupKind.SKILL, "seo-check"))] == Count(2, 12, 1)


def test_an_edited_run_takes_the_first_scope_of_its_edited_writes_by_precedence() -> None:
    edited = [
        EditedWrite(WEEK, "c", "", 1, "released_only"),
        EditedWrite(WEEK, "c", "", 1, "same_fields"),  # run 1: same_fields wins
        EditedWrite(WEEK, "c", "", 2, "released_only"),
        EditedWrite(WEEK, "c", "", 2, "other_fields"),  # run 2: other_fields over released_only
        EditedWrite(WEEK, "c", "", 3, "released_only"),
        EditedWrite(WEEK, "c", "", 4, None),  # an EDITED run without an EDITED write: excluded
    ]

    counts = rate_counts([], [], edited).counts

    assert counts[(Metric.EDITED_SAME_FIELDS, WEEK, ALL_RUNS)] == Count(1, 3, 1)
    assert counts[(Metric.EDITED_OTHER_FIELDS, WEEK, ALL_RUNS)] == Count(1, 3, 1)
    assert counts[(Metric.EDITED_RELEASED_ONLY, WEEK, ALL_RUNS)] == Count(1, 3, 1)
    assert counts[(Metric.EDITED_FIELDS_UNKNOWN, WEEK, ALL_RUNS)] == Count(0, 3, 1)


def test_a_period_without_data_is_absent_never_zero() -> None:
    tallies = [tally(answer="", facts=1, runs=1)]  # a run without an answer, no waiting approval

    rows = rate_counts(tallies, [], []).rows()

    assert [key[0] for key, _ in rows] == [Metric.RUNS] * 3  # all, configuration and skill: runs only


def test_runs_inside_their_window_are_a_count_per_group_beside_the_rates() -> None:
    window_open = [
        OpenTally(WEEK, "seo-assistant", "seo-check", 3),
        OpenTally(WEEK, "content-assistant", None, 2),  # a run no conversation names: no skill group
    ]

    counts = rate_counts([], [], [], window_open).counts

    assert counts[(Metric.WINDOW_OPEN, WEEK, ALL_RUNS)] == Count(5, 5, 0)
    assert counts[(Metric.WINDOW_OPEN, WEEK, Group(GroupKind.CONFIGURATION, "seo-assistant"))] == Count(
        3, 3, 0
    )
    assert counts[(Metric.WINDOW_OPEN, WEEK, Group(GroupKind.SKILL, "seo-check"))] == Count(3, 3, 0)
    assert (Metric.WINDOW_OPEN, WEEK, Group(GroupKind.SKILL, "")) not in counts
    assert {group.kind for _, _, group in counts} == {GroupKind.ALL, GroupKind.CONFIGURATION, GroupKind.SKILL}


def test_a_period_without_a_run_inside_its_window_has_no_window_open_row_not_a_zero() -> None:
    rows = rate_counts([tally("no_claim")], [], [], [OpenTally(WEEK, "c", "", 0)]).rows()

    assert Metric.WINDOW_OPEN not in {key[0] for key, _ in rows}


def test_the_counts_are_no_rates_and_every_metric_is_one_or_the_other() -> None:
    assert set(COUNTS) == {Metric.RUNS, Metric.WINDOW_OPEN}
    assert set(COUNTS) | set(RATES) == set(Metric) and not set(COUNTS) & set(RATES)
    assert [definition.metric for definition in METRICS] == list(DEFINITIONS)
    assert set(DEFINITIONS) == set(Metric)
    for metric in COUNTS:
        assert DEFINITIONS[metric].denominator == "the same (a count, not a rate)"


def test_a_metric_is_stored_since_a_rates_version_no_newer_than_the_current_one() -> None:
    assert STORED_SINCE[Metric.WINDOW_OPEN] == 2
    assert STORED_SINCE[Metric.NOTICE_AGREEMENT] == 3
    assert all(1 <= version <= RATES_VERSION for version in STORED_SINCE.values())


def test_a_skill_less_conversation_is_its_own_group_and_a_run_without_conversation_is_in_none() -> None:
    counts = rate_counts([tally("no_claim", skill=""), tally("no_claim", skill=None)], [], []).counts

    assert counts[(Metric.RUNS, WEEK, Group(GroupKind.SKILL, ""))] == Count(1, 1, 0)
    assert counts[(Metric.RUNS, WEEK, ALL_RUNS)] == Count(2, 2, 0)


# --- groups -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "group"),
    [
        ("all", ALL_RUNS),
        ("configuration:seo-assistant", Group(GroupKind.CONFIGURATION, "seo-assistant")),
        ("skill:seo-check", Group(GroupKind.SKILL, "seo-check")),
        ("skill:none", Group(GroupKind.SKILL, "")),
        ("editor:90001", None),
        ("be_user:1", None),
        ("seo-check", None),
    ],
)
def test_a_group_is_all_a_configuration_or_a_skill_never_an_editor(text: str, group: Group | None) -> None:
    assert parse_group(text) == group


def test_a_configuration_or_skill_below_five_runs_is_too_few_to_show_but_all_runs_always_show() -> None:
    assert not shown(Group(GroupKind.CONFIGURATION, "x"), 4)
    assert shown(Group(GroupKind.CONFIGURATION, "x"), 5)
    assert shown(ALL_RUNS, 1)
