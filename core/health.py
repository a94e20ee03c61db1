"""The health of an installation's chat as watch-conversations reads it: stuck conversations, the history
horizon against the window, and AI writes still waiting for their observed outcome.

Plain values in, plain values out; the job gathers them with SELECTs and stores one health row.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from core.formatting import count, plural
from core.time import DAY_S, iso_utc
from core.window import check_window, window_cutoff

# DOMAIN.md, the chat's statuses: a turn claims its conversation with one of these while it runs.
CLAIMED_STATUSES: tuple[str, ...] = ("processing", "locked", "tool_loop")

# 001_…, "Stuck conversations": ai-chat:cleanup fails a claimed conversation whose tstamp is more than five
# minutes old ("Timed out after 5 minutes"). One still claimed after that means the cleanup has not run.
CLEANUP_TIMEOUT_S = 300

# The derivation runs once a night, so a run whose window closed less than a day ago may simply not have met
# a run of it yet; only past that is a pending run overdue.
OVERDUE_GRACE_S = DAY_S

# A health message names at most this many stuck conversations; the count says how many there are.
MAX_NAMED_CONVERSATIONS = 10


@dataclass(frozen=True)
class ConversationState:
    """A conversation as far as its health goes: uid, status and the time it last changed."""

    uid: int
    status: str
    tstamp: int


@dataclass(frozen=True)
class StuckConversation:
    """A conversation left in a claimed status: since when, and for how long at `now`."""

    uid: int
    status: str
    since: int
    stuck_for_s: int


class HorizonLevel(StrEnum):
    """How the history that sys_history retains compares with what the derivation needs."""

    OK = "ok"
    WARNING = "warning"  # enough for now, less than two windows: UNKNOWN is near
    UNKNOWN_NOW = "unknown_now"  # less than one window: writes judged now are UNKNOWN (history_trimmed)
    EMPTY = "empty"  # no row at all: every write judged now is UNKNOWN (history_trimmed)


@dataclass(frozen=True)
class Horizon:
    """The oldest retained sys_history row, the span it leaves at `now`, and what that means for a window."""

    level: HorizonLevel
    oldest: int | None
    span_s: int | None
    window_s: int

    @property
    def warning(self) -> bool:
        """Anything but OK is worth a warning."""
        return self.level is not HorizonLevel.OK


@dataclass(frozen=True)
class Health:
    """One reading of watch-conversations."""

    checked_at: int
    stuck: tuple[StuckConversation, ...]
    horizon: Horizon
    pending_writes: int
    overdue_writes: int

    @property
    def status(self) -> str:
        """Warning when something needs an administrator (stuck, horizon, overdue), else ok."""
        trouble = self.stuck or self.horizon.warning or self.overdue_writes
        return "warning" if trouble else "ok"

    @property
    def stuck_since(self) -> int | None:
        """When the longest-stuck conversation was last changed."""
        return min((c.since for c in self.stuck), default=None)


def stuck(
    conversations: Iterable[ConversationState], now: int, threshold_s: int = CLEANUP_TIMEOUT_S
) -> tuple[StuckConversation, ...]:
    """Stuck: in a claimed status, its tstamp more than threshold_s before `now` (ai-chat:cleanup's rule)."""
    found = [
        StuckConversation(c.uid, c.status, c.tstamp, now - c.tstamp)
        for c in conversations
        if c.status in CLAIMED_STATUSES and now - c.tstamp > threshold_s
    ]
    return tuple(sorted(found, key=lambda c: (c.since, c.uid)))


def horizon(oldest_history: int | None, now: int, window_s: int) -> Horizon:
    """The retained span against the window: below one window UNKNOWN now, below two a warning.

    003_…, "The classification": trimming is oldest-first, and a write W at t keeps its evidence only while
    the oldest retained row is at or before t. The derivation judges W once its window has closed, at
    t + window_s at the earliest. With the installation trimming at a fixed age — which the retained span
    `now - oldest` is the only reading of — W's row lives for that span after its stamp. The chat's exec
    strategy stamps it seconds before t; its worker strategy when the worker started, hours or days before
    (DOMAIN.md, "When a row is stamped"), and only W's own row is its evidence (DESIGN.md rule 3), so on a
    worker installation the span must also cover how long a worker runs. So:

    * span < window: writes whose window closes now have lost their rows already; they come out UNKNOWN
      (history_trimmed). Exactly one window is still enough: the oldest row is then at t itself.
    * span < 2 windows: writes judged now are fine, but a write made now is judged one window from now at
      the earliest, and later by however far the derivation falls behind (a run's writes span days — rule 1
      waits for the last —, the nightly schedule, missed nights, an outage, a backlog worked off in batches).
      With less than one window of slack beyond the window, trimming will start to produce UNKNOWN within two
      windows from now: warn while there is time to lengthen the retention.
    * no row at all: nothing is retained, so every write judged now is UNKNOWN.
    * the oldest row later than `now` (a reading at a `now` in the past, or a clock ahead): nothing was
      retained at `now`, a span of 0.
    """
    check_window(window_s)
    if oldest_history is None:
        return Horizon(HorizonLevel.EMPTY, None, None, window_s)
    span = max(0, now - oldest_history)
    if span < window_s:
        level = HorizonLevel.UNKNOWN_NOW
    elif span < 2 * window_s:
        level = HorizonLevel.WARNING
    else:
        level = HorizonLevel.OK
    return Horizon(level, oldest_history, span, window_s)


def horizon_warning(oldest_history: int | None, now: int, window_s: int) -> bool:
    """Warn when the retained history spans less than two windows (see `horizon`)."""
    return horizon(oldest_history, now, window_s).warning


def overdue_before(now: int, window_s: int, grace_s: int = OVERDUE_GRACE_S) -> int:
    """A pending run is overdue when its last write is before this second: due (rule 1) for over grace_s."""
    return window_cutoff(now - grace_s, window_s)


def lines(health: Health) -> tuple[str, str, str]:
    """The reading in three lines — stuck, horizon, pending — naming conversations by uid, never an editor."""
    return (
        _stuck_text(health.stuck),
        _horizon_text(health.horizon),
        f"{plural(health.pending_writes, 'write')} pending derivation, "
        f"{count(health.overdue_writes)} overdue",
    )


def message(health: Health) -> str:
    """The reading on one line (its three lines joined)."""
    return "; ".join(lines(health))


def _stuck_text(found: tuple[StuckConversation, ...]) -> str:
    if not found:
        return "no stuck conversation"
    named = ", ".join(str(c.uid) for c in found[:MAX_NAMED_CONVERSATIONS])
    more = f" and {len(found) - MAX_NAMED_CONVERSATIONS} more" if len(found) > MAX_NAMED_CONVERSATIONS else ""
    oldest = found[0]
    return (
        f"{plural(len(found), 'stuck conversation')} (uid {named}{more}; the oldest in {oldest.status} since "
        f"{iso_utc(oldest.since)}): ai-chat:cleanup has not run"
    )


def _horizon_text(reading: Horizon) -> str:
    window = _days(reading.window_s)
    if reading.level is HorizonLevel.EMPTY:
        return f"sys_history is empty: every write judged now is unknown (window {window})"
    retained = _days(reading.span_s or 0)
    if reading.span_s == 0 and reading.oldest is not None:
        retained += f" (the oldest row is from {iso_utc(reading.oldest)})"
    meaning = {
        HorizonLevel.OK: "ok",
        HorizonLevel.WARNING: "less than two windows, trimming will produce unknown outcomes soon",
        HorizonLevel.UNKNOWN_NOW: "less than one window, writes judged now are unknown",
    }[reading.level]
    return f"history retained {retained} for a window of {window}: {meaning}"


def _days(seconds: int) -> str:
    return f"{seconds / DAY_S:.1f} days"
