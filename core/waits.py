"""A "go on" while an approval waits (001_…, "Decision"): when a run waited, and what the editor sent then.

A run waited for an approval from its last event before each approval event up to that event, and from its
last event on while it waits now; a conversation counts "yes" when a whole user message was a "go on" phrase
(core.claims) sent inside such a wait.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum

from core.answers import ConversationInput, StoredMessage
from core.claims import is_go_on
from core.events import EventKind
from core.run_status import RunStatus
from core.transcript import Role, TranscriptMessage


class GoOnState(StrEnum):
    NONE = ""  # not the run the conversation is counted at
    NO = "no"
    YES = "yes"
    CANNOT_TELL = "cannot_tell"


@dataclass(frozen=True)
class Step:
    """An event as the wait reading needs it: columns only, no payload."""

    uid: int
    sequence: int
    kind: str
    crdate: int


@dataclass(frozen=True)
class Wait:
    start: int
    end: int | None  # None: still waiting


def approval_waits(steps: Sequence[Step], status: str) -> tuple[Wait, ...]:
    """A run waited for an approval from its last event before each approval event up to that event, and
    from its last event on while its status is waiting_for_approval."""
    ordered = sorted(steps, key=lambda step: (step.sequence, step.uid))
    waits: list[Wait] = []
    for previous, step in zip(ordered, ordered[1:], strict=False):
        if step.kind == EventKind.APPROVAL:
            waits.append(Wait(previous.crdate, step.crdate))
    if status == RunStatus.WAITING_FOR_APPROVAL and ordered:
        waits.append(Wait(ordered[-1].crdate, None))
    return tuple(waits)


def needs_waits(conversation: ConversationInput) -> bool:
    """Waits are read only where they can change the count: a "go on" phrase or an unreadable user message."""
    for message in conversation.messages:
        read = message.read
        if isinstance(read, TranscriptMessage):
            if read.role is Role.USER and is_go_on(read.content):
                return True
        elif message.role == Role.USER.value:
            return True
    return False


class GoOnTest(StrEnum):
    """A question GO_ON_DECISION asks of a conversation's user messages sent while an approval waited."""

    SAID = "said"  # a whole user message was a "go on" phrase (core.claims.is_go_on)
    UNREADABLE = "unreadable"  # a user message cannot be read: it may have been one
    OTHERWISE = "otherwise"


# 001_…, "Decision", in the order it decides: a "go on" sent inside a wait is a yes, whatever else was sent;
# else a user message inside a wait that cannot be read leaves it open.
GO_ON_DECISION: tuple[tuple[GoOnTest, GoOnState], ...] = (
    (GoOnTest.SAID, GoOnState.YES),
    (GoOnTest.UNREADABLE, GoOnState.CANNOT_TELL),
    (GoOnTest.OTHERWISE, GoOnState.NO),
)


def go_on_test_holds(test: GoOnTest, conversation: ConversationInput, waits: Sequence[Wait]) -> bool:
    """Whether a GO_ON_DECISION test holds of the user messages sent inside one of the waits
    (adapters.measure_batch.facts compiles the same tests)."""

    if test is GoOnTest.OTHERWISE:
        return True

    def asked(message: StoredMessage) -> bool:
        read = message.read
        if isinstance(read, TranscriptMessage):
            return test is GoOnTest.SAID and read.role is Role.USER and is_go_on(read.content)
        return test is GoOnTest.UNREADABLE and message.role == Role.USER.value

    def inside(at: int) -> bool:
        return any(wait.start <= at and (wait.end is None or at <= wait.end) for wait in waits)

    return any(asked(message) and inside(message.crdate) for message in conversation.messages)


def go_on_state(conversation: ConversationInput, waits: Iterable[Wait] | None) -> GoOnState:
    """Yes: a whole user message was a "go on" phrase, sent while an approval waited (GO_ON_DECISION); no
    waits read (needs_waits), no."""
    if waits is None:
        return GoOnState.NO
    windows = tuple(waits)
    return next(state for test, state in GO_ON_DECISION if go_on_test_holds(test, conversation, windows))
