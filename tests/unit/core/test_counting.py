"""Tallies into rates (core.counting), hand-computed."""

from __future__ import annotations

from datetime import date, timedelta

import pytest

from core.answers import (
    ClaimState,
    completed_answers,
)
from core.counting import (
    GO_ON_PATH_METRICS,
    Count,
    EditedTally,
    EditedWrite,
    FactTally,
    OpenTally,
    OutcomeTally,
    edited_tallies,
    in_grain,
    rate_counts,
)
from core.facts import Exclusion, conversation_facts
from core.go_on import GoOnPaths
from core.groups import ALL_RUNS, Group, GroupKind
from core.metrics import Metric
from core.outcomes import EditScope
from core.periods import Grain
from tests.unit.core.measure_helpers import Chat, T, a_run

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


def test_each_go_on_path_is_a_share_of_the_stored_go_on_messages_and_unreadable_ones_are_excluded() -> None:
    tallies = [
        tally(answer="", go_on="yes", go_on_paths=GoOnPaths(second_run=3, unknown=1)),
        tally(answer="", go_on="no", go_on_paths=GoOnPaths(finished_outside=2, unreadable=1)),
        tally(
            answer="", go_on="no", configuration="seo-assistant", go_on_paths=GoOnPaths(finished_outside=1)
        ),
    ]

    result = rate_counts(tallies, [], [])

    counts = result.counts
    assert counts[(Metric.GO_ON_FINISHED_OUTSIDE, WEEK, ALL_RUNS)] == Count(3, 7, 1)
    assert counts[(Metric.GO_ON_SECOND_RUN, WEEK, ALL_RUNS)] == Count(3, 7, 1)
    assert counts[(Metric.GO_ON_UNKNOWN, WEEK, ALL_RUNS)] == Count(1, 7, 1)
    seo = Group(GroupKind.CONFIGURATION, "seo-assistant")
    assert counts[(Metric.GO_ON_FINISHED_OUTSIDE, WEEK, seo)] == Count(1, 1, 0)
    assert result.exclusions[(Metric.GO_ON_UNKNOWN, Exclusion.USER_MESSAGE_UNREADABLE)] == 1


def test_a_period_without_a_stored_go_on_has_no_row_of_the_split_never_zero() -> None:
    tallies = [tally("no_claim", go_on="no", facts=4)]

    counts = rate_counts(tallies, [], []).counts

    assert not any(metric in GO_ON_PATH_METRICS.values() for metric, _, _ in counts)


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

    counts = rate_counts([], [], edited_tallies(edited)).counts

    assert counts[(Metric.EDITED_SAME_FIELDS, WEEK, ALL_RUNS)] == Count(1, 3, 1)
    assert counts[(Metric.EDITED_OTHER_FIELDS, WEEK, ALL_RUNS)] == Count(1, 3, 1)
    assert counts[(Metric.EDITED_RELEASED_ONLY, WEEK, ALL_RUNS)] == Count(1, 3, 1)
    assert counts[(Metric.EDITED_FIELDS_UNKNOWN, WEEK, ALL_RUNS)] == Count(0, 3, 1)


def test_edited_runs_alike_in_period_group_scope_and_version_are_one_tally_counting_runs_not_writes() -> None:
    edited = [
        EditedWrite(WEEK, "c", "", 1, "same_fields"),
        EditedWrite(WEEK, "c", "", 1, "same_fields"),  # two writes, one run
        EditedWrite(WEEK, "c", "", 2, "other_fields"),
        EditedWrite(WEEK, "c", "", 2, "same_fields"),  # same_fields by precedence
        EditedWrite(WEEK, "c", "", 3, "a_later_scope"),  # no scope this version knows
        EditedWrite(WEEK, "c", "", 4, "same_fields", "2026.12-1"),  # another rule version
    ]

    tallies = edited_tallies(edited)

    assert sorted(tallies, key=repr) == sorted(
        [
            EditedTally(WEEK, "c", "", EditScope.SAME_FIELDS, 2),
            EditedTally(WEEK, "c", "", None, 1),
            EditedTally(WEEK, "c", "", EditScope.SAME_FIELDS, 1, "2026.12-1"),
        ],
        key=repr,
    )


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


def test_a_skill_less_conversation_is_its_own_group_and_a_run_without_conversation_is_in_none() -> None:
    counts = rate_counts([tally("no_claim", skill=""), tally("no_claim", skill=None)], [], []).counts

    assert counts[(Metric.RUNS, WEEK, Group(GroupKind.SKILL, ""))] == Count(1, 1, 0)
    assert counts[(Metric.RUNS, WEEK, ALL_RUNS)] == Count(2, 2, 0)


def test_a_week_counts_what_its_days_count_and_only_the_periods_written_are_kept() -> None:
    monday = WEEK
    days = [monday + timedelta(days=offset) for offset in (0, 3, 6, 7, 15)]  # three in one week
    facts = [tally("wrote" if index % 2 else "nothing_saved", period=day) for index, day in enumerate(days)]
    outcomes = [OutcomeTally(day, "content-assistant", "", "edited", 2, "v1") for day in days]
    edited = [EditedTally(day, "content-assistant", "", EditScope.SAME_FIELDS, 1, "v2") for day in days]
    window_open = [OpenTally(day, "content-assistant", "", 1) for day in days]
    by_day = rate_counts(facts, outcomes, edited, window_open).counts

    first_open, listed = monday + timedelta(days=14), (monday,)  # the week of days[3] is neither
    weekly = rate_counts(
        in_grain(facts, Grain.WEEK, first_open, listed),
        in_grain(outcomes, Grain.WEEK, first_open, listed),
        in_grain(edited, Grain.WEEK, first_open, listed),
        in_grain(window_open, Grain.WEEK, first_open, listed),
    ).counts

    assert {period for _, period, _ in weekly} == {monday, monday + timedelta(days=14)}
    for metric, period, group in weekly:
        week_days = [day for day in days if period <= day < period + timedelta(days=7)]
        first, *rest = (by_day[(metric, day, group)] for day in week_days)
        assert weekly[(metric, period, group)] == sum(rest, first)
    assert weekly[(Metric.RUNS, monday, ALL_RUNS)] == Count(3, 3, 0)
    assert weekly[(Metric.EDITED_SAME_FIELDS, monday, ALL_RUNS)].rule_versions == {"v2"}
    days_kept = in_grain(facts, Grain.DAY, monday + timedelta(days=6), (monday,))
    assert [t.period for t in days_kept] == [monday, monday + timedelta(days=6), days[3], days[4]]
