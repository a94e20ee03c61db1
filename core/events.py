"""A typed view of a run's events (tx_nrllm_agentrun_event) and the segments they form.

Only what nr-llm's privacy filter keeps at every level is read: tool names, error flags, write targets and
their completeness, the approval's decision, and the names of the tools a request offered and a model round
requested (000_…, "Decision": "only from what nr-llm's privacy filter keeps at every level"). The database
hands over only those keys (adapters.dialect.payload.kept_payload, DESIGN.md "Privacy": tool arguments and
results are never read) and `read_event` reads them; `parse_event` reads a whole payload held in memory
(tests, the generator) and keeps the same keys. Tool arguments, tool results, message content and the
messages sent never reach a rule, and every accessor below reads its own keys only.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from enum import StrEnum
from functools import cached_property
from typing import Any

from core import json_text
from core.table_names import MAX_RECORD_UID, is_table_name


class EventKind(StrEnum):
    CONTEXT = "context"
    REQUEST = "request"
    LLM = "llm"
    TOOL = "tool"
    TOOL_WRITE = "tool_write"
    APPROVAL = "approval"
    INPUT = "input"
    DROPPED = "dropped"
    ASSEMBLED = "assembled"


class Completeness(StrEnum):
    COMPLETE = "complete"
    PARTIAL = "partial"
    UNCONFIRMED = "unconfirmed"


class Problem(StrEnum):
    PAYLOAD_NOT_JSON = "payload_not_json"
    PAYLOAD_NOT_OBJECT = "payload_not_object"
    UNKNOWN_KIND = "unknown_kind"
    MISSING_SEQUENCE = "missing_sequence"
    MISSING_DURATION = "missing_duration"
    # A column declared as a number holding text: only SQLite's loose typing lets a table keep one.
    NOT_A_NUMBER = "not_a_number"


class PayloadShape(StrEnum):
    """What a payload text is, as the database tells it without handing the text over (read_event)."""

    ABSENT = "absent"  # the column is NULL
    INVALID = "invalid"  # not JSON
    OBJECT = "object"
    ARRAY = "array"
    STRING = "string"
    INTEGER = "integer"  # a number without fraction or exponent
    FLOAT = "float"  # a number with a fraction or an exponent
    BOOLEAN = "boolean"
    NULL = "null"  # the JSON null


# A payload that is JSON but no object: the type json.loads would have made of it (parse_event's detail).
_PYTHON_TYPE = {
    PayloadShape.ARRAY: "list",
    PayloadShape.STRING: "str",
    PayloadShape.INTEGER: "int",
    PayloadShape.FLOAT: "float",
    PayloadShape.BOOLEAN: "bool",
    PayloadShape.NULL: "NoneType",
}


# The payload keys a rule may read. decidedBy and submittedBy are editor ids and stay out too (DESIGN.md,
# "Privacy"); requestedToolCalls is kept as its names only, and toolSpecs (the names of the tools a request
# offered, kept at every privacy level: DOMAIN.md) as its names only too.
KEPT_KEYS = frozenset(
    {
        "kind",
        "round",
        "durationMs",
        "finishReason",
        "requestedToolNames",
        "requestedToolCalls",
        "toolName",
        "toolIsError",
        "writeTargetTable",
        "writeTargetUid",
        "writeKind",
        "writeCompleteness",
        "approved",
        "toolSpecs",
    }
)

_NOT_IDENTIFIER = re.compile(r"[^A-Za-z0-9_]")


@dataclass(frozen=True)
class Event:
    uid: int
    sequence: int
    kind: EventKind
    round: int
    duration_ms: float | Decimal
    payload: Mapping[str, Any]
    crdate: int


@dataclass(frozen=True)
class EventProblem:
    uid: int
    problem: Problem
    detail: str = ""


@dataclass(frozen=True)
class WriteTarget:
    table: str
    uid: int

    @property
    def record(self) -> str:
        """The record as the chat names it: "table:uid"."""
        return f"{self.table}:{self.uid}"


@dataclass(frozen=True)
class UnreadableTarget:
    reason: str


def identifier(text: str) -> str:
    """The text reduced to the characters identifiers use, [A-Za-z0-9_] (000_…, "Decision")."""
    return _NOT_IDENTIFIER.sub("", text)


def parse_event(
    uid: int,
    sequence: int | None,
    kind: str,
    round: int,
    duration_ms: float | Decimal | None,
    payload_text: str | bytes | None,
    crdate: int,
) -> Event | EventProblem:
    """An event row as an Event that keeps only the readable payload keys, or the problem that stops it.

    For a payload held in memory; a query hands over the kept keys only and reads them with `read_event`.
    """
    head = _head(uid, sequence, kind)
    if isinstance(head, EventProblem):
        return head
    if payload_text is None:
        return EventProblem(uid, Problem.PAYLOAD_NOT_JSON, "NULL")
    try:
        decoded = json_text.loads(payload_text)
    except (ValueError, RecursionError) as error:
        return EventProblem(uid, Problem.PAYLOAD_NOT_JSON, type(error).__name__)
    if not isinstance(decoded, dict):
        return EventProblem(uid, Problem.PAYLOAD_NOT_OBJECT, type(decoded).__name__)
    assert sequence is not None  # _head returned a problem otherwise
    return _event(uid, sequence, head, round, duration_ms, _kept(decoded), crdate)


def read_event(
    uid: int,
    sequence: int | None,
    kind: str,
    round: int,
    duration_ms: float | Decimal | None,
    shape: str | None,
    kept_text: str | bytes | None,
    crdate: int,
) -> Event | EventProblem:
    """An event row whose payload the database reduced to the kept keys: the same Event or EventProblem
    parse_event gives for the whole payload.

    `shape` is what the payload is (a PayloadShape value, adapters.dialect.payload.payload_shape) and
    `kept_text` the JSON text of an object holding only the KEPT_KEYS the payload holds, requestedToolCalls
    reduced to its calls' names and toolSpecs to the names it lists (adapters.dialect.payload.kept_payload;
    NULL unless the payload is an object).
    """
    head = _head(uid, sequence, kind)
    if isinstance(head, EventProblem):
        return head
    try:
        known = PayloadShape(shape if shape is not None else PayloadShape.ABSENT)
    except ValueError:
        raise ValueError(f"event {uid}: no payload shape {shape!r}") from None
    if known is PayloadShape.ABSENT:
        return EventProblem(uid, Problem.PAYLOAD_NOT_JSON, "NULL")
    if known is PayloadShape.INVALID:
        return EventProblem(uid, Problem.PAYLOAD_NOT_JSON, json.JSONDecodeError.__name__)
    if known is not PayloadShape.OBJECT:
        return EventProblem(uid, Problem.PAYLOAD_NOT_OBJECT, _PYTHON_TYPE[known])
    try:
        decoded = json_text.loads(kept_text) if kept_text is not None else None
    except (ValueError, RecursionError) as error:
        # A kept value the database took for JSON and json does not (MariaDB reads "1." as a number).
        return EventProblem(uid, Problem.PAYLOAD_NOT_JSON, type(error).__name__)
    if not isinstance(decoded, dict):
        raise ValueError(f"event {uid}: the kept payload keys are not a JSON object")
    assert sequence is not None  # _head returned a problem otherwise
    # _kept again: a key the query let through by mistake still stays out, and requestedToolCalls or
    # toolSpecs that was no list (the query writes null then) goes, as parse_event drops it.
    return _event(uid, sequence, head, round, duration_ms, _kept(decoded), crdate)


def _head(uid: int, sequence: int | None, kind: str) -> EventKind | EventProblem:
    """The event's kind, or the problem its columns have before its payload is looked at."""
    if sequence is None:
        return EventProblem(uid, Problem.MISSING_SEQUENCE)
    try:
        return EventKind(kind)
    except ValueError:
        return EventProblem(uid, Problem.UNKNOWN_KIND, identifier(str(kind))[:64])


def _event(
    uid: int,
    sequence: int,
    kind: EventKind,
    round: int,
    duration_ms: float | Decimal | None,
    payload: dict[str, Any],
    crdate: int,
) -> Event | EventProblem:
    # The payload's durationMs first: the duration_ms column is decimal(10,2) and rounds a timed call of
    # 0.004 ms to 0.00, which would read as a refusal (000_…, amendment: "a call that ran is timed"). The
    # column stands in only when the payload holds no duration.
    duration = _duration(payload.get("durationMs"))
    if duration is None:
        duration = duration_ms
    if duration is None:
        return EventProblem(uid, Problem.MISSING_DURATION)
    return Event(uid, sequence, kind, round, duration, payload, crdate)


def _duration(value: object) -> float | Decimal | None:
    """A payload's durationMs as a duration: a finite number, else None (absent, null, text, NaN)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, Decimal):
        return value if value.is_finite() else None
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    return None


def _kept(decoded: Mapping[str, Any]) -> dict[str, Any]:
    payload = {key: value for key, value in decoded.items() if key in KEPT_KEYS}
    calls = payload.get("requestedToolCalls")
    if isinstance(calls, list):
        payload["requestedToolCalls"] = [
            {"name": call.get("name")} for call in calls if isinstance(call, Mapping)
        ]
    elif "requestedToolCalls" in payload:
        del payload["requestedToolCalls"]
    specs = payload.get("toolSpecs")
    if isinstance(specs, list):
        payload["toolSpecs"] = [name for name in specs if isinstance(name, str)]
    elif "toolSpecs" in payload:
        del payload["toolSpecs"]
    return payload


def tool_name(event: Event) -> str:
    """A tool or tool_write step's tool name, reduced to identifier characters; "" when it names none."""
    name = event.payload.get("toolName")
    return identifier(name) if isinstance(name, str) else ""


def tool_is_error(event: Event) -> bool:
    """A tool step failed when its toolIsError flag is true; an absent flag reads as no error."""
    return event.payload.get("toolIsError") is True


def is_refusal_shaped(event: Event) -> bool:
    """A step nr-llm refused without running it is an error of exactly 0.0 ms (000_…, amendment)."""
    return tool_is_error(event) and event.duration_ms == 0


def write_target(event: Event) -> WriteTarget | UnreadableTarget:
    """A tool_write step's target; unreadable unless the table matches [A-Za-z0-9_]{1,64} and the uid lies
    in 1…MAX_RECORD_UID."""
    table = event.payload.get("writeTargetTable")
    uid = event.payload.get("writeTargetUid")
    if not isinstance(table, str):
        return UnreadableTarget("table missing")
    # Matched as stored, not reduced first: a reduced "pages;x" would name another table (DESIGN.md, rule 6).
    if not is_table_name(table):
        return UnreadableTarget("table malformed")
    if uid is None:
        return UnreadableTarget("uid missing")
    if not isinstance(uid, int) or isinstance(uid, bool) or not 1 <= uid <= MAX_RECORD_UID:
        return UnreadableTarget("uid malformed")
    return WriteTarget(table, uid)


def write_completeness(event: Event) -> Completeness:
    """A tool_write step's writeCompleteness (complete or partial); unconfirmed when absent or unknown."""
    value = event.payload.get("writeCompleteness")
    if value == Completeness.COMPLETE.value:
        return Completeness.COMPLETE
    if value == Completeness.PARTIAL.value:
        return Completeness.PARTIAL
    return Completeness.UNCONFIRMED


def approved(event: Event) -> bool:
    """An approval event approves only when its approved flag is exactly true."""
    return event.kind is EventKind.APPROVAL and event.payload.get("approved") is True


def requested_tools(event: Event) -> tuple[str, ...]:
    """The tools an llm round requested: requestedToolCalls[].name, else requestedToolNames (default)."""
    calls = event.payload.get("requestedToolCalls")
    if isinstance(calls, list):
        names = [call.get("name") for call in calls if isinstance(call, Mapping)]
    else:
        listed = event.payload.get("requestedToolNames")
        names = listed if isinstance(listed, list) else []
    return tuple(identifier(name) for name in names if isinstance(name, str))


def offered_tools(event: Event) -> tuple[str, ...] | None:
    """The tools a request offered the model (toolSpecs, names reduced to identifier characters); None when
    the event records no list of them."""
    specs = event.payload.get("toolSpecs") if event.kind is EventKind.REQUEST else None
    if not isinstance(specs, list):
        return None
    return tuple(identifier(name) for name in specs if isinstance(name, str))


@dataclass(frozen=True)
class Segment:
    """A run segment: the turn itself (index 0), or a continuation opened by an approval or input event."""

    index: int
    events: tuple[Event, ...]

    @property
    def opened_by(self) -> Event | None:
        """The approval or input event that opened a continuation; None for the turn itself."""
        first = self.events[0] if self.events else None
        return first if first is not None and first.kind in OPENERS else None

    @cached_property
    def tool_steps(self) -> tuple[Event, ...]:
        """The segment's tool steps in sequence order."""
        return tuple(event for event in self.events if event.kind is EventKind.TOOL)

    @cached_property
    def model_rounds(self) -> tuple[Event, ...]:
        """The segment's llm events in sequence order."""
        return tuple(event for event in self.events if event.kind is EventKind.LLM)

    @cached_property
    def opening_steps(self) -> tuple[Event, ...]:
        """A continuation's tool steps before its first llm round: the calls of the turn that waited."""
        if self.opened_by is None:
            return ()
        steps: list[Event] = []
        for event in self.events:
            if event.kind is EventKind.LLM:
                break
            if event.kind is EventKind.TOOL:
                steps.append(event)
        return tuple(steps)

    @cached_property
    def last_round_steps(self) -> tuple[Event, ...]:
        """The tool steps after the segment's last llm round (empty when the segment has no llm round)."""
        last = max((i for i, event in enumerate(self.events) if event.kind is EventKind.LLM), default=None)
        if last is None:
            return ()
        return tuple(event for event in self.events[last + 1 :] if event.kind is EventKind.TOOL)

    @cached_property
    def writes(self) -> tuple[Event, ...]:
        """The segment's tool_write events in sequence order."""
        return tuple(event for event in self.events if event.kind is EventKind.TOOL_WRITE)

    @property
    def returned_at(self) -> int:
        """When the segment returned: the crdate of its newest event, 0 without events."""
        return max((event.crdate for event in self.events), default=0)


# The events that open a continuation: a run has one segment more than it has of these.
OPENERS = frozenset({EventKind.APPROVAL, EventKind.INPUT})


def in_order(events: Iterable[Event]) -> tuple[Event, ...]:
    """The events in sequence order (uid breaks a tie)."""
    return tuple(sorted(events, key=lambda event: (event.sequence, event.uid)))


def split_segments(events: Sequence[Event]) -> tuple[Segment, ...]:
    """Events in sequence order, split at each approval and input event, which opens the new segment."""
    segments: list[Segment] = []
    current: list[Event] = []
    index = 0
    for event in in_order(events):
        if event.kind in OPENERS:
            if current:
                segments.append(Segment(index, tuple(current)))
            index += 1
            current = [event]
        else:
            current.append(event)
    if current:
        segments.append(Segment(index, tuple(current)))
    return tuple(segments)
