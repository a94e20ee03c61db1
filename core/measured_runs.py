"""A run as measure-rates reads it: its row's columns and what the database counted of its events."""

from __future__ import annotations

from dataclasses import dataclass

from core.run_status import RunStatus
from core.time import LATEST_STAMP


@dataclass(frozen=True)
class EventCounts:
    """What the database counted of a run's events (kind, sequence and crdate columns; payloads unread)."""

    events: int = 0
    tool_writes: int = 0
    approvals: int = 0
    openers: int = 0  # approval and input events: the run has openers + 1 segments
    first_write_at: int | None = None
    first_write_sequence: int | None = None
    last_opener_sequence: int | None = None


@dataclass(frozen=True)
class RunRow:
    uid: int
    uuid: str
    status: str
    configuration: str
    ended_at: int
    counts: EventCounts = EventCounts()
    started_at: int = 0  # started_at, else crdate; 0: not known

    @property
    def waited_for_approval(self) -> bool:
        """The run waited for an approval: it has an approval event or waits for one now."""
        return self.counts.approvals > 0 or self.status == RunStatus.WAITING_FOR_APPROVAL


# When a run ended: the first of these columns that holds a time (above 0, below LATEST_STAMP).
RUN_END_COLUMNS = ("finished_at", "tstamp", "started_at", "crdate")
# When a run started: the first of these columns that is set (not 0), else the last.
RUN_START_COLUMNS = ("started_at", "crdate")


def run_end(finished_at: int, tstamp: int, started_at: int, crdate: int) -> int:
    """When a run ended: finished_at; for a run not finished (waiting, cancelled), its last update. A column
    that is not set (0), or holds a stamp past LATEST_STAMP, is passed over."""
    values = {"finished_at": finished_at, "tstamp": tstamp, "started_at": started_at, "crdate": crdate}
    for value in (values[name] for name in RUN_END_COLUMNS):
        if 0 < value < LATEST_STAMP:
            return value
    return 0


def run_start(started_at: int, crdate: int) -> int:
    """When a run started: started_at, else (0: not set) its crdate."""
    values = {"started_at": started_at, "crdate": crdate}
    *first, last = RUN_START_COLUMNS
    return next((values[name] for name in first if values[name] != 0), values[last])
