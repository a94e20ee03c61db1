"""Calls nr-llm refused: one reading per tool step, for the activity list and the run record alike.

nr-llm records every call it refuses as a tool step with an error result, like a tool that ran and failed
(000_…, "Amendment of 2026-11-02: calls nr-llm refused"). The reading uses structure only, never the result
text: where the step stands in its segment, whether its duration is exactly 0.0 ms, whether its tool asks
the editor something, and what opened the segment. The amendment's table is `REFUSAL_RULES`; `read_segment`
reads a segment's steps with it, so the list and the record cannot disagree.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

from core.events import Event, EventKind, Segment, approved, is_refusal_shaped, tool_is_error, tool_name


class RefusalReading(StrEnum):
    DECISION = "decision"
    FAILURE_NOT_PERMITTED = "failure_not_permitted"
    HELD = "held"
    FAILURE = "failure"
    RAN = "ran"


# The tools that ask the editor something. nr-llm's only one is ask_choice; a tool of another extension that
# asks is read like any other tool until it is added here (000_…, amendment, "Consequences").
QUESTION_TOOLS = frozenset({"ask_choice"})

# What the list shows for a declined card when no card outcome names the answer (000_…, amendment, table).
PLAIN_DENIAL = "abgelehnt"


class Shape(StrEnum):
    """How nr-llm recorded the step."""

    REFUSED = "refused"  # an error with a duration of exactly 0.0 ms: not run
    TIMED_ERROR = "timed_error"  # an error with a measured duration: ran, or refused by the invocation policy
    OK = "ok"


class Place(StrEnum):
    """Where the step stands in its segment."""

    OPENING = "opening"  # a continuation's steps before its first model round: the waiting turn's calls
    BESIDE = "beside"  # after the segment's last model round: beside the proposal or question it waits on
    OTHER = "other"


class Opening(StrEnum):
    """What opened the segment."""

    TURN = "turn"
    APPROVED = "approved"
    DECLINED = "declined"
    INPUT = "input"


@dataclass(frozen=True)
class RefusalRule:
    row: str  # the amendment's row this rule reads
    shape: Shape
    place: Place | None  # None: any place
    opening: Opening | None  # None: any opening
    asks_editor: bool | None  # None: any tool
    reading: RefusalReading


# 000_…, amendment, the table "Refusal / Reading / Shown to the editor", one rule per row; the first match
# wins. nr-llm records the refusals of a waiting turn's calls with exactly 0.0 ms and times every call that
# ran, and a call the invocation policy refuses, like one that ran.
# fmt: off
REFUSAL_RULES: tuple[RefusalRule, ...] = (
    RefusalRule("A declined card's calls, and a load_skill of the declined turn",
                Shape.REFUSED, Place.OPENING, Opening.DECLINED, None, RefusalReading.DECISION),
    RefusalRule("After an approval: a question (ask_choice) the model asked in the same turn",
                Shape.REFUSED, Place.OPENING, Opening.APPROVED, True, RefusalReading.HELD),
    RefusalRule("An approved call whose tool is no longer offered (switched off, admin-only)",
                Shape.REFUSED, Place.OPENING, Opening.APPROVED, False, RefusalReading.FAILURE_NOT_PERMITTED),
    RefusalRule("After an answer: the question's own tool, no longer offered",
                Shape.REFUSED, Place.OPENING, Opening.INPUT, True, RefusalReading.FAILURE_NOT_PERMITTED),
    RefusalRule("After an answer: another call no longer offered, a second call that needs input, "
                "a write without an approval",
                Shape.REFUSED, Place.OPENING, Opening.INPUT, False, RefusalReading.HELD),
    RefusalRule("Beside a proposal or a question: a second write, a call that needs input, a remote call",
                Shape.REFUSED, Place.BESIDE, None, None, RefusalReading.HELD),
    # Not a row of the table: a 0.0 ms refusal where the table places none reads as it did before the
    # amendment, as a failure, rather than vanishing from the record.
    RefusalRule("A refusal the table does not place",
                Shape.REFUSED, None, None, None, RefusalReading.FAILURE),
    RefusalRule("A call the invocation policy refuses (not permitted, unknown, denied by a rule), "
                "in any segment",
                Shape.TIMED_ERROR, None, None, None, RefusalReading.FAILURE),
    RefusalRule("A call that ran",
                Shape.OK, None, None, None, RefusalReading.RAN),
)
# fmt: on


@dataclass(frozen=True)
class Shown:
    label: str  # "" for DECISION: the decision's answer is shown
    in_record: bool
    failed: bool
    ask_administrator: bool = False


# 000_…, amendment, the column "Shown to the editor", and the Decision: a declined card's calls get no place
# in the record, a call held back is left out of it, a call nr-llm no longer permits is a failure in both.
SHOWN: Mapping[RefusalReading, Shown] = {
    RefusalReading.DECISION: Shown("", in_record=False, failed=False),
    RefusalReading.FAILURE_NOT_PERMITTED: Shown(
        "nicht ausgeführt: nicht mehr freigegeben", in_record=True, failed=True, ask_administrator=True
    ),
    RefusalReading.HELD: Shown("noch nicht ausgeführt", in_record=False, failed=False),
    RefusalReading.FAILURE: Shown("fehlgeschlagen", in_record=True, failed=True),
    RefusalReading.RAN: Shown("", in_record=True, failed=False),
}


@dataclass(frozen=True)
class SegmentContext:
    """What the reading takes from outside the segment: the card decided before it, its answer and tool."""

    answer: str = ""  # the card outcome's answer ("Überspringen", …); "" when no card outcome names one
    card_tool: str = ""  # the tool of the call the card was about; "" when unknown (the first call is it)


NO_DECISION = SegmentContext()


@dataclass(frozen=True)
class StepReading:
    step: Event
    tool: str
    reading: RefusalReading
    label: str  # what the activity list shows beside the tool; "" for a call that ran without error
    in_record: bool  # the run record counts the call (question tools never: they ask, they do not act)
    failed: bool  # counted as a failed call where it is counted
    ask_administrator: bool  # the list asks the editor to have an administrator allow the tool again


def rule_for(shape: Shape, place: Place, opening: Opening, asks_editor: bool) -> RefusalRule:
    """The first rule of REFUSAL_RULES that matches the step's shape, place, opening and tool."""
    for rule in REFUSAL_RULES:
        if (
            rule.shape is shape
            and rule.place in (None, place)
            and rule.opening in (None, opening)
            and rule.asks_editor in (None, asks_editor)
        ):
            return rule
    raise LookupError(f"no refusal rule for {shape}, {place}, {opening}, asks_editor={asks_editor}")


_RULES: Mapping[tuple[Shape, Place, Opening, bool], RefusalRule] = {
    (shape, place, opening, asks): rule_for(shape, place, opening, asks)
    for shape in Shape
    for place in Place
    for opening in Opening
    for asks in (False, True)
}


def opening_of(segment: Segment) -> Opening:
    """What opened the segment: the turn itself, an approval (approved or declined) or an input."""
    opener = segment.opened_by
    if opener is None:
        return Opening.TURN
    if opener.kind is EventKind.INPUT:
        return Opening.INPUT
    return Opening.APPROVED if approved(opener) else Opening.DECLINED


def shape_of(step: Event) -> Shape:
    """A step is refused when it is an error of exactly 0.0 ms, a timed error otherwise, else ok."""
    if is_refusal_shaped(step):
        return Shape.REFUSED
    return Shape.TIMED_ERROR if tool_is_error(step) else Shape.OK


def read_segment(segment: Segment, *, previous: SegmentContext = NO_DECISION) -> tuple[StepReading, ...]:
    """One reading per tool step of the segment, by REFUSAL_RULES, from structure only."""
    opening = opening_of(segment)
    events = segment.events
    first_round = next((i for i, event in enumerate(events) if event.kind is EventKind.LLM), len(events))
    last_round = next((i for i in range(len(events) - 1, -1, -1) if events[i].kind is EventKind.LLM), None)
    answer = previous.answer or PLAIN_DENIAL
    readings: list[StepReading] = []
    card_call_seen = False
    for i, step in enumerate(events):
        if step.kind is not EventKind.TOOL:
            continue
        tool = tool_name(step)
        asks = tool in QUESTION_TOOLS
        if opening is not Opening.TURN and i < first_round:
            place = Place.OPENING
            if opening is Opening.APPROVED and not asks:
                # 000_…, amendment, table: the approved call is the card's own call; a call held beside the
                # proposal may be refused here too, after it, and reads as held, wherever nr-llm records it.
                own = not card_call_seen and previous.card_tool in ("", tool)
                card_call_seen = card_call_seen or own
                place = Place.OPENING if own else Place.BESIDE
        elif last_round is not None and i > last_round:
            place = Place.BESIDE
        else:
            place = Place.OTHER
        reading = _RULES[(shape_of(step), place, opening, asks)].reading
        shown = SHOWN[reading]
        readings.append(
            StepReading(
                step=step,
                tool=tool,
                reading=reading,
                label=answer if reading is RefusalReading.DECISION else shown.label,
                in_record=shown.in_record and not asks,
                failed=shown.failed,
                ask_administrator=shown.ask_administrator,
            )
        )
    return tuple(readings)
