"""The current time, read in one place.

Every "now" that decides a result reads this module: the jobs' default --now, the dashboard's open week and
windows, sign-in expiry, release stamps and the job log. RUNRECORD_NOW fixes it, so that a test, a
screenshot or a re-measurement sees the same calendar whatever the hour. Not read here: how long something
took (time.monotonic) and when the scheduler fires a job or a lease expires (APScheduler and the lease run
on the system clock, between processes). `system` is the one instant RUNRECORD_NOW does not fix: when a job
reads the tables, which writers on other hosts stamp by their clocks.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime

from adapters import settings
from adapters.errors import RunrecordError
from core.time import LATEST_STAMP

# The instants a job may run as of: unix time from its start up to core.time.LATEST_STAMP.
EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)
LATEST = datetime.fromtimestamp(LATEST_STAMP, UTC)


def parse_instant(text: str, *, what: str) -> datetime:
    """An ISO 8601 date or time as an aware datetime (UTC when it has no offset), from 1970 up to the year
    9000; RunrecordError naming `what` otherwise."""
    try:
        parsed = datetime.fromisoformat(text.strip())
    except ValueError as error:
        raise RunrecordError(f"{what} is not an ISO 8601 date or time: {text!r}") from error
    aware = parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)
    require_in_calendar(aware, text, what=what)
    return aware


def require_in_calendar(instant: datetime, text: str, *, what: str) -> None:
    """RunrecordError naming `what` and its `text` unless the instant is from EARLIEST up to LATEST."""
    try:
        within = EARLIEST <= instant < LATEST
    except OverflowError:  # an offset that moves the instant past the calendar's end
        within = False
    if not within:
        raise RunrecordError(f"{what} is not from 1970 up to the year 9000: {text!r}")


def fixed() -> datetime | None:
    """The instant RUNRECORD_NOW fixes the clock at, or None when the system clock runs it."""
    text = settings.get("now")
    if not text.strip():
        return None
    return parse_instant(text, what=settings.variable("now"))


def now() -> datetime:
    """The current time, aware: RUNRECORD_NOW when set, else the system clock (UTC)."""
    return fixed() or datetime.fromtimestamp(time.time(), UTC)


def unix() -> int:
    """The current time in whole unix seconds."""
    return int(now().timestamp())


def system() -> int:
    """The system clock in whole unix seconds, whatever RUNRECORD_NOW says: when something happens, not the
    calendar a result is judged at."""
    return int(time.time())
