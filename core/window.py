"""The window of an AI write (DESIGN.md rule 1): how long after it a human change still counts, and when it
has closed.

A write at t is judged on the rows stamped up to t + window, that second included. Its window has closed at
`now` once `now` is past that second: t + window < now, i.e. t < now − window (`window_cutoff`). A run is
derived once the window of its LAST write has closed; a period of rates is final once no run ending in it
can still change. Every place that asks "has the window closed?" asks it here.

The window's spans say which rows of W's record its rules read (HUMAN_ROWS, DELETES): by insertion order
from W's own row, and by stamp from t + window. core.outcomes reads them in Python, adapters.decision
compiles them into SQL for the derive batch; neither states a bound of its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from core.time import DAY_S

# DESIGN.md rule 1: the window is configurable but at least a day.
MIN_WINDOW_S = DAY_S
MAX_WINDOW_DAYS = 3650  # ten years: a window, and the periods after it, stay in the calendar


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


# --- the window's spans: which rows of W's record a rule reads ----------------------------------------------


class Inserted(StrEnum):
    """Where a span starts in the record's insertion order (sys_history.uid), relative to W's own row."""

    AFTER_OWN_ROW = "inserted after W's own row"  # uid above W's own row's (its evidence boundary, rule 3)


class Stamped(StrEnum):
    """Where a span lies in time (sys_history.tstamp), relative to the end of W's window (t + window)."""

    UP_TO_CLOSE = "stamped up to t + window"  # that second included (window_closes_at)
    AFTER_CLOSE = "stamped after t + window"
    ANY_TIME = "stamped at any time"


@dataclass(frozen=True)
class Span:
    """The rows of W's record a rule reads: by insertion order from W's own row, by stamp from t + window."""

    inserted: Inserted
    stamped: Stamped


# DESIGN.md rule 4: the human rows are those inserted after W's own row and stamped up to t + window.
HUMAN_ROWS = Span(Inserted.AFTER_OWN_ROW, Stamped.UP_TO_CLOSE)
# DESIGN.md rule 2: a delete inserted after W's own row counts whenever it is stamped; one in the window
# (HUMAN_ROWS) discards W, and a record gone only by a delete after the window is left to the window's rows.
DELETES = Span(Inserted.AFTER_OWN_ROW, Stamped.ANY_TIME)
DELETES_AFTER_WINDOW = Span(Inserted.AFTER_OWN_ROW, Stamped.AFTER_CLOSE)


def inserted_in(inserted: Inserted, uid: int, own_row: int) -> bool:
    """Whether a row inserted as `uid` lies where a span starts, for W's own row (or evidence) `own_row`."""
    if inserted is Inserted.AFTER_OWN_ROW:
        return uid > own_row
    raise NotImplementedError(f"no rule for {inserted}")


def stamped_in(stamped: Stamped, tstamp: int, closes: int) -> bool:
    """Whether a row stamped `tstamp` lies in a span's time, for a window that closes at `closes`."""
    if stamped is Stamped.UP_TO_CLOSE:
        return tstamp <= closes
    if stamped is Stamped.AFTER_CLOSE:
        return tstamp > closes
    return True


def in_span(span: Span, *, uid: int, tstamp: int, own_row: int, closes: int) -> bool:
    """Whether a row of W's record lies in the span (adapters.decision.in_span states the same in SQL)."""
    return inserted_in(span.inserted, uid, own_row) and stamped_in(span.stamped, tstamp, closes)
