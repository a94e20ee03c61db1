"""The window of an AI write (DESIGN.md rule 1): how long after it a human change still counts, and when it
has closed.

A write at t is judged on the rows stamped up to t + window, that second included. Its window has closed at
`now` once `now` is past that second: t + window < now, i.e. t < now − window (`window_cutoff`). A run is
derived once the window of its LAST write has closed; a period of rates is final once no run ending in it
can still change. Every place that asks "has the window closed?" asks it here.
"""

from __future__ import annotations

from core.time import DAY_S

# DESIGN.md rule 1: the window is configurable but at least a day.
MIN_WINDOW_S = DAY_S


class InvalidWindowError(ValueError):
    """A window shorter than MIN_WINDOW_S."""


def check_window(window_s: int) -> None:
    """A window is at least one day (DESIGN.md rule 1); anything shorter raises InvalidWindowError."""
    if window_s < MIN_WINDOW_S:
        raise InvalidWindowError(f"the window must be at least {MIN_WINDOW_S} s, not {window_s} s")


def window_closes_at(written_at: int, window_s: int) -> int:
    """The window of a write ends `window_s` seconds after it; a row stamped at that second still counts."""
    check_window(window_s)
    return written_at + window_s


def window_cutoff(now: int, window_s: int) -> int:
    """At `now`, the window of every write made before this second has closed, and of none made at or after
    it (now > written_at + window_s)."""
    check_window(window_s)
    return now - window_s


def window_closed(written_at: int, now: int, window_s: int) -> bool:
    """Whether the window of a write made at `written_at` has closed at `now`."""
    return written_at < window_cutoff(now, window_s)
