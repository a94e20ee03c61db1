"""A run segment as the builder plants it: the tools it called, the records it wrote, what it waited for and
how it ended, and the run-record entry the chat stores for it (001_…, "The run record")."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

_WORSE = {"complete": 0, "unconfirmed": 1, "partial": 2}  # core.run_record: the worse completeness wins


@dataclass
class Segment:
    index: int
    opened_by: str  # "turn", "approval", "input"
    tools: dict[str, list[int]] = field(default_factory=dict)  # name -> [calls, failed]
    writes: list[tuple[str, str]] = field(default_factory=list)
    waiting: list[str] = field(default_factory=list)
    decision: tuple[str, str] | None = None
    undecided: tuple[str, str] | None = None
    ended: str = "unknown"
    process_start: int | None = None  # when the process that runs it started; None: stamped as it writes
    position: int = 0
    card_outcomes_before: int = 0
    at: int = 0
    has_answer: bool = False
    answered: tuple[int, str | None] | None = None  # its last assistant message: (crdate, notice)

    def record_write(self, record: str, completeness: str) -> None:
        """The chat lists a record once per segment: written twice, the worse completeness stands."""
        for index, (written, known) in enumerate(self.writes):
            if written == record:
                if _WORSE[completeness] > _WORSE[known]:
                    self.writes[index] = (record, completeness)
                return
        self.writes.append((record, completeness))

    def count(self, tool: str, *, failed: bool) -> None:
        calls = self.tools.setdefault(tool, [0, 0])
        calls[0] += 1
        calls[1] += int(failed)

    def entry(self, run_uuid: str) -> dict[str, Any]:
        return {
            "runUuid": run_uuid,
            "segment": self.index,
            "position": self.position,
            "cardOutcomesBefore": self.card_outcomes_before,
            "ended": self.ended,
            "tools": [{"name": n, "calls": c, "failed": f} for n, (c, f) in sorted(self.tools.items())],
            "writes": [{"record": r, "completeness": c} for r, c in self.writes],
            "waiting": [{"tool": t} for t in self.waiting],
            "decision": None
            if self.decision is None
            else {"tool": self.decision[0], "answer": self.decision[1]},
            "undecided": None
            if self.undecided is None
            else {"kind": self.undecided[0], "by": self.undecided[1]},
            "at": self.at,
        }
