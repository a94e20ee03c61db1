"""Units of time, in seconds (every time in the records is a unix time in seconds)."""

from __future__ import annotations

from datetime import UTC, datetime

DAY_S = 86_400
# The latest instant runrecord reads as a time, 9000-01-01T00:00:00Z: the windows, weeks and periods after it
# stay in the calendar. Only SQLite stores a later stamp in nr-llm's int(11) columns, and the day of one from
# the year 10000 is no date there.
LATEST_STAMP = 221_845_392_000


def iso_utc(unix: int) -> str:
    """The instant in ISO 8601, UTC as Z; a stamp outside the calendar (a corrupt row's) as its number."""
    try:
        return datetime.fromtimestamp(unix, UTC).isoformat().replace("+00:00", "Z")
    except (ValueError, OverflowError, OSError):
        return f"unix {unix}"
