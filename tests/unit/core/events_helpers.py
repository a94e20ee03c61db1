"""A compact way to write a run's events: run(llm(tools=[...]), approval(True), tool(...), tool_write(...)).

Payloads are written as nr-llm stores them at the default privacy level (DOMAIN.md): the tools a model round
requested as requestedToolNames, no arguments, no results. `llm(..., calls=True)` writes requestedToolCalls
the way the full level does, arguments included.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from core.events import Event, EventKind, Segment, split_segments

START = 1_767_225_600  # 2026-01-01T00:00:00Z; each event is one second after the one before


@dataclass(frozen=True)
class Step:
    kind: EventKind
    payload: dict[str, Any] = field(default_factory=dict)
    ms: float = 0.0


def llm(tools: Sequence[str] = (), *, calls: bool = False, ms: float = 850.0) -> Step:
    """A model round requesting `tools` (none: the answer)."""
    if calls:
        requested: dict[str, Any] = {
            "requestedToolCalls": [
                {"id": f"call_{n}", "name": name, "arguments": {"title": "Über uns"}}
                for n, name in enumerate(tools)
            ]
        }
    else:
        requested = {"requestedToolNames": list(tools)}
    return Step(EventKind.LLM, {"finishReason": "tool_calls" if tools else "stop", **requested}, ms)


def tool(name: str, *, ms: float = 12.5, error: bool = False) -> Step:
    """A tool step that ran (timed), failed when `error`."""
    return Step(EventKind.TOOL, {"toolName": name, "toolIsError": error}, ms)


def refused(name: str) -> Step:
    """A call nr-llm refused without running it: an error of exactly 0.0 ms."""
    return tool(name, ms=0.0, error=True)


def tool_write(table: Any, uid: Any, completeness: str | None = None, *, name: str = "update_page") -> Step:
    """The write a builtin writer leaves right after its tool step; no completeness key when None."""
    payload: dict[str, Any] = {"toolName": name, "writeTargetTable": table, "writeTargetUid": uid}
    if completeness is not None:
        payload["writeCompleteness"] = completeness
    return Step(EventKind.TOOL_WRITE, payload, 0.0)


def approval(approved: bool) -> Step:
    """A decision on a card; it opens a new segment."""
    return Step(EventKind.APPROVAL, {"approved": approved, "decidedBy": 7})


def answer() -> Step:
    """An answer to a question (an input event); it opens a new segment."""
    return Step(EventKind.INPUT, {"submittedBy": 7})


def request(offered: Sequence[str] = ("update_page",)) -> Step:
    """The request sent before a model round, offering the model `offered` (toolSpecs: names only)."""
    return Step(EventKind.REQUEST, {"toolSpecs": list(offered)})


def run(*steps: Step, first_uid: int = 1, start: int = START) -> tuple[Event, ...]:
    """The steps as a run's events: sequence and uid in order, llm rounds numbered, one second apart."""
    events: list[Event] = []
    current_round = 0
    for number, step in enumerate(steps):
        if step.kind is EventKind.LLM:
            current_round += 1
        event_round = 0 if step.kind in (EventKind.APPROVAL, EventKind.INPUT) else current_round
        payload = {"kind": step.kind.value, "round": event_round, "durationMs": step.ms, **step.payload}
        events.append(
            Event(first_uid + number, number, step.kind, event_round, step.ms, payload, start + number)
        )
    return tuple(events)


def segments(*steps: Step) -> tuple[Segment, ...]:
    """The run's segments."""
    return split_segments(run(*steps))


def rows(events: Iterable[Event]) -> list[tuple[int, int, str, int, float, str, int]]:
    """The events as event rows: uid, sequence, kind, round, duration_ms, payload text, crdate."""
    return [
        (
            e.uid,
            e.sequence,
            e.kind.value,
            e.round,
            float(e.duration_ms),
            json.dumps(dict(e.payload)),
            e.crdate,
        )
        for e in events
    ]
