"""Units of time, in seconds (every time in the records is a unix time in seconds)."""

from __future__ import annotations

DAY_S = 86_400
