"""The run record: one entry per run segment, stored in tx_nrmcpagent_conversation.run_record (000_…).

The JSON shape is DESIGN.md's ("Chat-side JSON"); `RunRecordEntry.from_json` tolerates keys it does not know
and reports what it cannot read as `UnreadableEntry`.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any


class Ended(StrEnum):
    COMPLETED = "completed"
    WAITING = "waiting"
    FAILED = "failed"
    CANCELLED = "cancelled"
    UNKNOWN = "unknown"


class Completeness(StrEnum):
    COMPLETE = "complete"
    PARTIAL = "partial"
    UNCONFIRMED = "unconfirmed"


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
