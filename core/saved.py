"""Whether a turn saved anything, read from its run's persisted event stream (001_…, "Decision").

The stream, not the result's steps: every resume starts a fresh trace, so a write carried out at the first
approval of a turn is not in the steps of the segment that answers after the second. The nothingSaved
notice is `claims_change(answer) and nothing_saved(events) is Verdict.NOTHING_SAVED`; the job layer
combines the two.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from enum import StrEnum

from core.events import (
    Event,
    EventKind,
    EventProblem,
    WriteTarget,
    approved,
    in_order,
    tool_is_error,
    write_target,
)

# Events after which a tool step is no longer one of the calls an approval released.
_NEXT_ROUND = frozenset({EventKind.CONTEXT, EventKind.REQUEST, EventKind.LLM, EventKind.INPUT})


class Verdict(StrEnum):
    WROTE = "wrote"
    NOTHING_SAVED = "nothing_saved"
    CANNOT_TELL = "cannot_tell"


def nothing_saved(turn_events: Sequence[Event | EventProblem] | None) -> Verdict:
    """WROTE on a tool_write or on an approved call run without error; CANNOT_TELL on an unreadable stream."""
    # 001_…, "Decision": a stream that cannot be read yields no notice rather than a guessed one. A run that
    # answered has at least one model round, so an empty stream is one that was not recorded.
    if not turn_events or any(isinstance(event, EventProblem) for event in turn_events):
        return Verdict.CANNOT_TELL
    events = in_order(event for event in turn_events if isinstance(event, Event))
    released = (
        False  # inside the calls an approval with approved = true released, before the next model round
    )
    for event in events:
        if event.kind is EventKind.TOOL_WRITE:
            return Verdict.WROTE
        if event.kind is EventKind.APPROVAL:
            released = approved(event)
        elif event.kind in _NEXT_ROUND:
            released = False
        elif event.kind is EventKind.TOOL and released and not tool_is_error(event):
            # 001_…, "Decision": a remote tool whose write needed approval leaves no write target, and every
            # approval-bound call is write-declared (nr-llm ADR-134).
            return Verdict.WROTE
    return Verdict.NOTHING_SAVED


def written_records(events: Iterable[Event | EventProblem]) -> tuple[str, ...]:
    """The records the run's tool_write events name, as "table:uid", once each; unreadable ones left out."""
    records: dict[str, None] = {}
    for event in events:
        if isinstance(event, Event) and event.kind is EventKind.TOOL_WRITE:
            target = write_target(event)
            if isinstance(target, WriteTarget):
                records.setdefault(target.record)
    return tuple(records)
