"""Units of time, in seconds (every time in the records is a unix time in seconds)."""

from __future__ import annotations

DAY_S = 86_400
# The latest instant runrecord reads as a time, 9000-01-01T00:00:00Z: the windows, weeks and periods after it
# stay in the calendar. Only SQLite stores a later stamp in nr-llm's int(11) columns, and the day of one from
# the year 10000 is no date there.
LATEST_STAMP = 221_845_392_000
