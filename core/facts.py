"""The facts of measure-rates: one per run, and one per answer no run stands behind (001_…, 000_…, 003_…).

A conversation's stored messages, the runs it names (with counts of their events) and its run record give one
`Fact` per run — its completed answer, whether that answer carries the nothingSaved notice, claims a change
the run never made or denies earlier work, whether the editor said "go on" while an approval waited, and
what followed each such stored "go on" (core.go_on, counted at the run that waited) — and
one per answer whose run cannot be found or whose message cannot be read, so that such an answer is counted
as excluded, never as a zero. The facts are what tx_runrecord_measure_fact stores; be_user and editor ids are
no part of them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import date
from enum import StrEnum

from core.answers import (
    Answer,
    AnswerState,
    ClaimState,
    ConversationInput,
    DenialState,
    claim_state,
    denial_state,
    earlier_write,
    verdict_from_record,
)
from core.error_codes import Notice
from core.go_on import GoOnPaths, go_on_paths
from core.measured_runs import RunRow
from core.periods import Grain, period_start
from core.saved import Verdict
from core.transcript import Role, UnreadableMessage
from core.waits import GoOnState, Wait, go_on_state

# Raise whenever a rule here changes what a fact says: the job rebuilds every fact when the version it
# stored differs, instead of mixing facts of two rule sets in one rate.
# 2: the claim rule as 001_… words it (core.claims) and the approved call itself as the write (core.saved).
# 3: what followed each stored "go on" while an approval waited (go_on_paths, core.go_on).
# 4: a run without a stream is judged by its stored run record (001_…: "its result's steps are the evidence
#    then", core.answers.verdict_from_record).
# 5: the approved call is a step of the card's own tool where the segment before waited on it (core.saved);
#    claim words written with combining marks are the composed words, a denial is read within its clause
#    (core.claims); a message's time is its createdAt (core.message_time).
MEASURE_VERSION = 5


class Exclusion(StrEnum):
    """Why something that could have fed a metric was excluded from it."""

    MESSAGE_UNREADABLE = "message_unreadable"
    EVENTS_UNREADABLE = "events_unreadable"
    NO_EVENTS = "no_events"
    RUN_MISSING = "run_missing"
    RUN_RECORD_UNREADABLE = "run_record_unreadable"
    USER_MESSAGE_UNREADABLE = "user_message_unreadable"
    OUTCOME_UNREADABLE = "outcome_unreadable"
    EDIT_SCOPE_MISSING = "edit_scope_missing"


@dataclass(frozen=True)
class Fact:
    """A row of tx_runrecord_measure_fact: a run (run_uid > 0), or an answer no run stands behind."""

    run_uid: int
    message_uid: int
    conversation_uid: int
    configuration: str | None  # None: not known (an answer without its run)
    skill: str | None  # None: no conversation names the run
    ended_at: int
    runs: int  # 1 for a run, 0 for an answer without its run
    answer: AnswerState = AnswerState.NONE
    notice: bool = False
    claim: ClaimState = ClaimState.NONE
    denial: DenialState = DenialState.NONE
    go_on: GoOnState = GoOnState.NONE
    problems: tuple[Exclusion, ...] = ()
    go_on_paths: GoOnPaths = GoOnPaths()  # the stored "go on" messages sent while this run waited, by path

    def period(self, grain: Grain) -> date:
        """The period of the run's end."""
        return period_start(self.ended_at, grain)


def orphan_fact(run: RunRow) -> Fact:
    """A run no conversation names: counted in all and its configuration, never in a skill."""
    return Fact(run.uid, 0, 0, run.configuration, None, run.ended_at, 1)


def _answer_fields(
    conversation: ConversationInput, answer: Answer, verdict: Verdict | None, runs: Sequence[RunRow]
) -> tuple[ClaimState, DenialState, list[Exclusion]]:
    if answer.run is None or answer.run.counts.events == 0:
        verdict = verdict_from_record(conversation, answer)
    claim = claim_state(answer, verdict)
    denial = denial_state(answer, earlier_write(conversation, answer, runs))
    problems: list[Exclusion] = []
    if answer.run is None:
        problems.append(Exclusion.RUN_MISSING)
    if claim is ClaimState.CANNOT_TELL:
        no_events = answer.run is None or answer.run.counts.events == 0
        problems.append(Exclusion.NO_EVENTS if no_events else Exclusion.EVENTS_UNREADABLE)
    if denial is DenialState.CANNOT_TELL:
        problems.append(Exclusion.RUN_RECORD_UNREADABLE)
    return claim, denial, problems


def conversation_facts(
    conversation: ConversationInput,
    runs: Sequence[RunRow],
    answers: Sequence[Answer],
    verdicts: Mapping[int, Verdict],
    waits: Mapping[int, Sequence[Wait]] | None,
) -> tuple[Fact, ...]:
    """The facts of a conversation: one per run it names and finds, one per answer without its run, one per
    assistant message that cannot be read (counted where it could have been a completed answer)."""
    skill = conversation.skill
    by_run = {answer.run.uid: answer for answer in answers if answer.run is not None}
    waiting = [run for run in runs if run.waited_for_approval]
    counted_at = min(waiting, key=lambda run: (run.ended_at, run.uid)).uid if waiting else None
    go_on = GoOnState.NONE
    if counted_at is not None:
        all_waits = None if waits is None else [wait for run_waits in waits.values() for wait in run_waits]
        go_on = go_on_state(conversation, all_waits)
    paths = go_on_paths(conversation, runs, waits)
    facts: list[Fact] = []
    for run in runs:
        answer = by_run.get(run.uid)
        state, notice = AnswerState.NONE, False
        claim, denial = ClaimState.NONE, DenialState.NONE
        problems: list[Exclusion] = []
        if answer is not None:
            state, notice = AnswerState.READ, answer.text.notice is Notice.NOTHING_SAVED
            claim, denial, problems = _answer_fields(conversation, answer, verdicts.get(run.uid), runs)
        run_go_on = go_on if run.uid == counted_at else GoOnState.NONE
        if run_go_on is GoOnState.CANNOT_TELL:
            problems.append(Exclusion.USER_MESSAGE_UNREADABLE)
        facts.append(
            Fact(
                run.uid,
                0,
                conversation.uid,
                run.configuration,
                skill,
                run.ended_at,
                1,
                state,
                notice,
                claim,
                denial,
                run_go_on,
                tuple(problems),
                paths.get(run.uid, GoOnPaths()),
            )
        )
    for answer in answers:
        if answer.run is None:
            message = answer.message
            claim, denial, problems = _answer_fields(conversation, answer, Verdict.CANNOT_TELL, runs)
            notice = answer.text.notice is Notice.NOTHING_SAVED
            facts.append(
                Fact(
                    0,
                    message.uid,
                    conversation.uid,
                    None,
                    skill,
                    message.crdate,
                    0,
                    AnswerState.READ,
                    notice,
                    claim,
                    denial,
                    GoOnState.NONE,
                    tuple(problems),
                )
            )
    for message in conversation.messages:
        if isinstance(message.read, UnreadableMessage) and message.role == Role.ASSISTANT.value:
            unreadable = Fact(0, message.uid, conversation.uid, None, skill, message.crdate, 0)
            facts.append(
                replace(unreadable, answer=AnswerState.UNREADABLE, problems=(Exclusion.MESSAGE_UNREADABLE,))
            )
    return tuple(facts)
