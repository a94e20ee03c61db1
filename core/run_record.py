"""The run record: one entry per run segment, stored in tx_nrmcpagent_conversation.run_record (000_…).

The JSON shape is DESIGN.md's ("Chat-side JSON"). `build_entries` builds a run's entries from its segments'
structured steps, never from the model's words; core.run_record_json reads and writes the stored column,
core.record_diff compares a stored record with a rebuilt one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from core.cards import CardDecision, CardOutcome
from core.events import (
    Completeness,
    Segment,
    WriteTarget,
    identifier,
    requested_tools,
    tool_name,
    write_completeness,
    write_target,
)
from core.refused import PLAIN_DENIAL, QUESTION_TOOLS, Opening, SegmentContext, opening_of, read_segment
from core.run_status import RunStatus, is_waiting

__all__ = [
    "APPROVED_WITHOUT_OUTCOME",
    "DISPLAY_TOOLS",
    "ENDED_BY_STATUS",
    "RECORD_LIMIT",
    "UNREADABLE_RECORD",
    "CardReading",
    "Completeness",
    "Decision",
    "Ended",
    "RunRecordEntry",
    "RunStatus",
    "ToolUse",
    "Undecided",
    "UndecidedBy",
    "UndecidedKind",
    "UnreadableEntry",
    "WrittenRecord",
    "build_entries",
    "read_cards",
]

# The chat's tools that only drive its display (DOMAIN.md, "Cards, questions, tours"); the record leaves them
# out (000_…, "Decision"). An argument of build_entries, so an installation with more of them can add them.
DISPLAY_TOOLS = frozenset({"chat_set_progress", "chat_highlight_element", "chat_list_open_points"})

# 000_…, "Decision": "The row keeps the newest 200 entries."
RECORD_LIMIT = 200

# The record of a write whose target cannot be read (DESIGN.md, rule 6): the write is still listed, so the
# record does not read as "nothing was written".
UNREADABLE_RECORD = "unreadable"

# The answer recorded for an approval no card outcome names; a denial no card outcome names reads as the
# card's plain denial, "abgelehnt" (000_…, amendment, table).
APPROVED_WITHOUT_OUTCOME = "freigegeben"


class Ended(StrEnum):
    COMPLETED = "completed"
    WAITING = "waiting"
    FAILED = "failed"
    CANCELLED = "cancelled"
    UNKNOWN = "unknown"


class UndecidedKind(StrEnum):
    CARD = "card"
    QUESTION = "question"


class UndecidedBy(StrEnum):
    NEW_MESSAGE = "new_message"
    TOUR_ENDED = "tour_ended"


@dataclass(frozen=True)
class ToolUse:
    name: str
    calls: int
    failed: int


@dataclass(frozen=True)
class WrittenRecord:
    record: str  # "table:uid"
    completeness: Completeness


@dataclass(frozen=True)
class Decision:
    tool: str
    answer: str


@dataclass(frozen=True)
class Undecided:
    kind: UndecidedKind
    by: UndecidedBy


@dataclass(frozen=True)
class RunRecordEntry:
    run_uuid: str
    segment: int
    position: int  # the transcript position (message sorting) the segment's answer has or would have
    card_outcomes_before: int
    ended: Ended
    tools: tuple[ToolUse, ...] = ()
    writes: tuple[WrittenRecord, ...] = ()
    waiting: tuple[str, ...] = ()  # tool names of calls still waiting for a decision
    decision: Decision | None = None
    undecided: Undecided | None = None
    at: int = 0  # unix time the segment returned

    def to_json(self) -> dict[str, Any]:
        """The entry in the stored column's shape (DESIGN.md)."""
        return {
            "runUuid": self.run_uuid,
            "segment": self.segment,
            "position": self.position,
            "cardOutcomesBefore": self.card_outcomes_before,
            "ended": self.ended.value,
            "tools": [{"name": t.name, "calls": t.calls, "failed": t.failed} for t in self.tools],
            "writes": [{"record": w.record, "completeness": w.completeness.value} for w in self.writes],
            "waiting": [{"tool": name} for name in self.waiting],
            "decision": None
            if self.decision is None
            else {"tool": self.decision.tool, "answer": self.decision.answer},
            "undecided": None
            if self.undecided is None
            else {"kind": self.undecided.kind.value, "by": self.undecided.by.value},
            "at": self.at,
        }


# How the run's last segment ended, by the run's status; a status not listed (queued, running, one we do not
# know) has not returned, and reads as unknown.
ENDED_BY_STATUS: Mapping[str, Ended] = {
    RunStatus.WAITING_FOR_APPROVAL: Ended.WAITING,
    RunStatus.WAITING_FOR_INPUT: Ended.WAITING,
    RunStatus.COMPLETED: Ended.COMPLETED,
    RunStatus.FAILED: Ended.FAILED,
    RunStatus.CANCELLED: Ended.CANCELLED,
}

# Worse completeness wins when one segment writes a record twice: a known partial write over an unconfirmed
# one over a complete one.
_COMPLETENESS_RANK = {Completeness.COMPLETE: 0, Completeness.UNCONFIRMED: 1, Completeness.PARTIAL: 2}


@dataclass(frozen=True)
class UnreadableEntry:
    reason: str
    index: int | None = None  # the entry's place in the stored list; None: the column as a whole


@dataclass(frozen=True)
class CardReading:
    """The card a continuation's decision answered: the card's tool and the card outcome that names it."""

    segment: int  # the continuation the decision opened
    tool: str  # "" when no call names the card's tool
    outcome: CardOutcome | None  # None: no card outcome names it (a plain denial records none)

    @property
    def answer(self) -> str:
        """The card outcome's answer; "" when none names it, which read_segment shows as the plain denial."""
        return self.outcome.answer if self.outcome is not None else ""


# `position` is the transcript position of the turn's answer; `positions` gives a later segment's own, and a
# segment it does not name takes the one before it (as in build_entries).
def read_cards(
    run_uuid: str,
    segments: Sequence[Segment],
    card_outcomes: Sequence[CardOutcome],
    *,
    position: int,
    positions: Mapping[int, int] | None = None,
    display_tools: frozenset[str] = DISPLAY_TOOLS,
) -> dict[int, CardReading]:
    """Per continuation a decision opened: the card's tool and outcome, by position and tool, never by time.

    The one reading of a card's answer for the run record and the activity list alike (000_…, amendment,
    "Decision": "RefusedCalls reads one segment's steps for both … so the two cannot disagree").
    """
    named = positions or {}
    run_outcomes = [outcome for outcome in card_outcomes if outcome.run_uuid == run_uuid]
    consumed: set[int] = set()
    cards: dict[int, CardReading] = {}
    waited_on: tuple[str, ...] = ()
    shown_at = position  # the position of the segment that showed the card: the one before the decision
    for number, segment in enumerate(segments):
        opening = opening_of(segment)
        if opening in (Opening.APPROVED, Opening.DECLINED):
            tool = _card_tool(segment, waited_on, display_tools)
            outcome = _match_outcome(run_outcomes, consumed, tool, opening is Opening.APPROVED, shown_at)
            cards[segment.index] = CardReading(segment.index, tool, outcome)
        if number + 1 < len(segments):
            waited_on = _waiting_calls(segment, display_tools, opening_of(segments[number + 1]))
        shown_at = named.get(segment.index, shown_at)
    return cards


def build_entries(
    run_uuid: str,
    segments: Sequence[Segment],
    *,
    status: str,
    position: int,
    positions: Mapping[int, int] | None = None,
    card_outcomes: Sequence[CardOutcome] = (),
    left_by: UndecidedBy | None = None,
    at: int = 0,
    display_tools: frozenset[str] = DISPLAY_TOOLS,
) -> tuple[RunRecordEntry, ...]:
    """One entry per segment of a run, from its structured steps and card outcomes, never its words.

    `left_by` says how the editor left the run (a new message, the end of the tour); it records a card or
    question left undecided only when the run's last segment waited for a decision.
    """
    returned = any(segment.model_rounds for segment in segments)
    if not segments or (status == RunStatus.FAILED and not returned):
        # 000_…, "Decision": unknown when the turn failed before nr-llm returned its steps. A failed run
        # without a model round is one: nr-llm records a round's context and request before the provider's
        # call, which is where a provider without a key fails.
        return (
            RunRecordEntry(
                run_uuid, 0, position, _outcomes_before(card_outcomes, at, ()), Ended.UNKNOWN, at=at
            ),
        )
    named = positions or {}
    cards = read_cards(
        run_uuid, segments, card_outcomes, position=position, positions=named, display_tools=display_tools
    )
    entries: list[RunRecordEntry] = []
    current_position = position
    for number, segment in enumerate(segments):
        last = number == len(segments) - 1
        opening = opening_of(segment)
        card = cards.get(segment.index)
        previous = SegmentContext(card.answer, card.tool) if card is not None else SegmentContext()
        readings = read_segment(segment, previous=previous)
        waits_for = opening_of(segments[number + 1]) if not last else _WAITS_FOR_BY_STATUS.get(status)
        waiting = _waiting_calls(segment, display_tools, waits_for)
        left = last and left_by is not None and _waited_for_a_decision(status, waiting)
        ended = Ended.WAITING if not last or left else ENDED_BY_STATUS.get(status, Ended.UNKNOWN)
        decision = None
        if card is not None and card.outcome is None:
            answer = APPROVED_WITHOUT_OUTCOME if opening is Opening.APPROVED else PLAIN_DENIAL
            decision = Decision(card.tool, answer)
        undecided = None
        if left and left_by is not None:
            undecided = Undecided(_undecided_kind(status, waiting), left_by)
        returned_at = segment.returned_at or at
        current_position = named.get(segment.index, current_position)
        later = [cards[later.index].outcome for later in segments[number + 1 :] if later.index in cards]
        entries.append(
            RunRecordEntry(
                run_uuid=run_uuid,
                segment=segment.index,
                position=current_position,
                card_outcomes_before=_outcomes_before(card_outcomes, returned_at, later),
                ended=ended,
                tools=_tool_uses(
                    (reading.tool, reading.failed)
                    for reading in readings
                    if reading.in_record and reading.tool not in display_tools
                ),
                writes=_written(segment),
                waiting=waiting if ended is Ended.WAITING else (),
                decision=decision,
                undecided=undecided,
                at=returned_at,
            )
        )
    return tuple(entries)


def _waited_for_a_decision(status: str, waiting: Sequence[str]) -> bool:
    # 000_…, "Decision": a card or question the editor left undecided. A waiting run's status says it waits
    # (its calls need not be named: the request may not list them). A cancelled run waited only when a call
    # was still pending in its last segment (DOMAIN.md, tours: a tour's × cancels a waiting run); a run
    # cancelled while it ran left nothing undecided.
    if is_waiting(status):
        return True
    return status == RunStatus.CANCELLED and bool(waiting)


def _outcomes_before(
    card_outcomes: Sequence[CardOutcome], at: int, later: Sequence[CardOutcome | None]
) -> int:
    # "How many card outcomes existed before it" (000_…, "Decision"): the outcomes recorded no later than the
    # segment returned, in the order they happened. The outcomes of the cards this segment and the run's later
    # segments showed were recorded after the segment returned, so they never count for it, even when stamped
    # in the same second: their notes follow the entry.
    after = [outcome for outcome in later if outcome is not None]
    return sum(1 for outcome in card_outcomes if outcome.at <= at and not any(outcome is o for o in after))


def _card_tool(segment: Segment, waited_on: Sequence[str], display_tools: frozenset[str]) -> str:
    # The card is about the call the previous segment waited on; failing that, the first call its decision
    # released. Display tools and questions are never what a card decides.
    skipped = display_tools | QUESTION_TOOLS
    for name in waited_on:
        if name not in skipped:
            return name
    for step in segment.opening_steps:
        name = tool_name(step)
        if name not in skipped:
            return name
    return ""


def _match_outcome(
    outcomes: Sequence[CardOutcome], consumed: set[int], tool: str, approved: bool, position: int
) -> CardOutcome | None:
    # A card outcome stands at the position of the segment that showed the card, so the first one of the
    # run at that position, not yet matched, with the same decision and tool, is this card's. None there
    # means none was stored: a card declined with a plain denial has no outcome (000_…, "Decision").
    wanted = CardDecision.APPROVED if approved else CardDecision.DECLINED
    for number, outcome in enumerate(outcomes):
        if number in consumed or outcome.decision is not wanted or outcome.position != position:
            continue
        if tool and identifier(outcome.tool) != tool:
            continue
        consumed.add(number)
        return outcome
    return None


# What a run waits for, by its status (DOMAIN.md): a card (an approval) or an answer (an input).
_WAITS_FOR_BY_STATUS: Mapping[str, Opening] = {
    RunStatus.WAITING_FOR_APPROVAL: Opening.APPROVED,
    RunStatus.WAITING_FOR_INPUT: Opening.INPUT,
}


def card_waited_on(segment: Segment, decided: Opening, display_tools: frozenset[str] = DISPLAY_TOOLS) -> str:
    """The call a card decided in the next segment (opened `decided`) was about, as this segment waited on it;
    "" when it names none (the request may not list its calls) or a question opened the next."""
    if decided not in (Opening.APPROVED, Opening.DECLINED):
        return ""
    return next(iter(_waiting_calls(segment, display_tools, decided)), "")


def _waiting_calls(
    segment: Segment, display_tools: frozenset[str], waits_for: Opening | None
) -> tuple[str, ...]:
    # The calls the last model round requested that have no step after it: the step of a call that ran or
    # was held back in that round says the call is not waiting. A question asked beside a card does not
    # wait for the card's decision, nor a call beside a question for its answer: nr-llm holds them back
    # (000_…, amendment, table), so only the calls the decision is about are waiting.
    rounds = segment.model_rounds
    if not rounds:
        return ()
    stepped: dict[str, int] = {}
    for step in segment.last_round_steps:
        name = tool_name(step)
        stepped[name] = stepped.get(name, 0) + 1
    waiting: list[str] = []
    for name in requested_tools(rounds[-1]):
        if stepped.get(name, 0) > 0:
            stepped[name] -= 1
        elif name not in display_tools:
            waiting.append(name)
    # One card or one question waits: a second write or a second call that needs input beside it is held
    # (000_…, amendment, table: "Beside a proposal or a question: a second write, a call that needs input").
    questions = tuple(name for name in waiting if name in QUESTION_TOOLS)
    cards = tuple(name for name in waiting if name not in QUESTION_TOOLS)
    if waits_for is Opening.INPUT:
        return questions[:1]
    if waits_for in (Opening.APPROVED, Opening.DECLINED):
        return cards[:1]
    # Whatever ended the run (a tour's ×): a card waited where the round asked for a write, a question is held
    # beside it (000_…, amendment, table: "After an approval: a question … not run (held)").
    return cards[:1] or questions[:1]


def _undecided_kind(status: str, waiting: Sequence[str]) -> UndecidedKind:
    if status == RunStatus.WAITING_FOR_INPUT:
        return UndecidedKind.QUESTION
    if status == RunStatus.WAITING_FOR_APPROVAL:
        return UndecidedKind.CARD
    # A cancelled run no longer says what it waited for; a question call among the waiting ones says it.
    return UndecidedKind.QUESTION if any(name in QUESTION_TOOLS for name in waiting) else UndecidedKind.CARD


def _tool_uses(calls: Iterable[tuple[str, bool]]) -> tuple[ToolUse, ...]:
    counts: dict[str, tuple[int, int]] = {}
    for name, failed in calls:
        total, failures = counts.get(name, (0, 0))
        counts[name] = (total + 1, failures + int(failed))
    return tuple(ToolUse(name, total, failures) for name, (total, failures) in counts.items())


def _written(segment: Segment) -> tuple[WrittenRecord, ...]:
    records: dict[str, Completeness] = {}
    for event in segment.writes:
        target = write_target(event)
        record = target.record if isinstance(target, WriteTarget) else UNREADABLE_RECORD
        completeness = write_completeness(event)
        known = records.get(record)
        if known is None or _COMPLETENESS_RANK[completeness] > _COMPLETENESS_RANK[known]:
            records[record] = completeness
    return tuple(WrittenRecord(record, completeness) for record, completeness in records.items())
