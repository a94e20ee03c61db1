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
    Segment,
    WriteTarget,
    approved,
    is_refusal_shaped,
    split_segments,
    tool_is_error,
    tool_name,
    write_target,
)
from core.refused import QUESTION_TOOLS, opening_of
from core.run_record import DISPLAY_TOOLS, card_waited_on

# A tool step of these tools is never the approved call: they only drive the chat's display or ask the editor
# (000_…, "Decision"), and the approval-bound calls are the write-declared ones (nr-llm ADR-134).
NOT_AN_APPROVED_CALL = DISPLAY_TOOLS | QUESTION_TOOLS


class Verdict(StrEnum):
    WROTE = "wrote"
    NOTHING_SAVED = "nothing_saved"
    CANNOT_TELL = "cannot_tell"


def approved_call(segment: Segment, card_tool: str = "") -> Event | None:
    """The call an approval with approved = true released: the first of its segment's opening steps (before
    the first model round) that is no refusal (0.0 ms, is_refusal_shaped), no display tool and no question.

    `card_tool` is the call the card was about, where the segment before waited on one: then only a step of
    that tool is it (000_…, amendment: the approved call is the card's own call), and none is when each of
    them was refused, whatever ran beside. A segment without a step of that tool is read as if none were
    named.
    """
    if segment.opened_by is None or not approved(segment.opened_by):
        return None
    steps = [step for step in segment.opening_steps if tool_name(step) not in NOT_AN_APPROVED_CALL]
    own = [step for step in steps if tool_name(step) == card_tool] if card_tool else []
    return next((step for step in own or steps if not is_refusal_shaped(step)), None)


def nothing_saved(turn_events: Sequence[Event | EventProblem] | None) -> Verdict:
    """WROTE on a tool_write or on an approved call run without error; CANNOT_TELL on an unreadable stream."""
    # 001_…, "Decision": a stream that cannot be read yields no notice rather than a guessed one. A run that
    # answered has at least one model round, so an empty stream is one that was not recorded.
    if not turn_events or any(isinstance(event, EventProblem) for event in turn_events):
        return Verdict.CANNOT_TELL
    events = [event for event in turn_events if isinstance(event, Event)]
    if any(event.kind is EventKind.TOOL_WRITE for event in events):
        return Verdict.WROTE
    segments = split_segments(events)
    for before, segment in zip((None, *segments), segments, strict=False):
        # 001_…, "Decision": "a call that executed without error directly after an approval with
        # approved = true": the approved call itself, since a remote tool whose write needed approval leaves
        # no write target. A call after it, or after its failure, is no write.
        card_tool = "" if before is None else card_waited_on(before, opening_of(segment))
        call = approved_call(segment, card_tool)
        if call is not None and not tool_is_error(call):
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
