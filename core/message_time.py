"""When a chat message was written: its payload's `createdAt`, the chat's own ISO 8601 time of the message
(DOMAIN.md, "The chat: tx_nrmcpagent_message"). The row's `crdate` is not it: the chat replaces every message
row of a conversation each time it saves the conversation, all of them stamped with that save's time. Only
where a payload names no such time (an older row) does the row's crdate stand in.

The text is read by its shape, as the SQL of adapters.dialect.instants reads it: `YYYY-MM-DDTHH:MM:SS`, an
optional fraction of up to nine digits, then `Z` or an offset `±HH:MM` (PHP's DATE_ATOM, JavaScript's
toISOString), each field in its range, a year from 1970 up to 2037 (every such time fits the signed 32-bit
integers the installation's own time columns are on PostgreSQL, and so does each step of the SQL's
arithmetic). A day past its month's end runs on into the next month, as the day count below has it (both
readings count alike; the chat never writes one).
"""

from __future__ import annotations

import re

from core.time import DAY_S

FRACTION_DIGITS = 9  # nanoseconds: the longest fraction a clock writes
ISO_INSTANT = re.compile(
    rf"([0-9]{{4}})-([0-9]{{2}})-([0-9]{{2}})[Tt]([0-9]{{2}}):([0-9]{{2}}):([0-9]{{2}})(?:\.[0-9]{{1,{FRACTION_DIGITS}}})?"
    r"([Zz]|[+-][0-9]{2}:[0-9]{2})"
)
EARLIEST_YEAR, LATEST_YEAR = 1970, 2037
LONGEST = len("YYYY-MM-DDTHH:MM:SS.") + FRACTION_DIGITS + len("+HH:MM")


def days_from_civil(year: int, month: int, day: int) -> int:
    """Days from 1970-01-01 to a day of the proleptic Gregorian calendar (H. Hinnant's days_from_civil)."""
    shifted = year - (1 if month <= 2 else 0)
    era = shifted // 400
    year_of_era = shifted - era * 400
    day_of_year = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    day_of_era = year_of_era * 365 + year_of_era // 4 - year_of_era // 100 + day_of_year
    return era * 146_097 + day_of_era - 719_468


def created_seconds(text: object) -> int | None:
    """Unix seconds of a payload's createdAt; None for anything that is not such a time."""
    if not isinstance(text, str):
        return None
    found = ISO_INSTANT.fullmatch(text)
    if found is None:
        return None
    year, month, day, hour, minute, second = (int(part) for part in found.groups()[:6])
    zone = found.group(7)
    zone_hours, zone_minutes = (0, 0) if zone in ("Z", "z") else (int(zone[1:3]), int(zone[4:6]))
    fields = (
        EARLIEST_YEAR <= year <= LATEST_YEAR,
        1 <= month <= 12,
        1 <= day <= 31,
        hour <= 23 and minute <= 59 and second <= 59,
        zone_hours <= 23 and zone_minutes <= 59,
    )
    if not all(fields):
        return None
    offset = (zone_hours * 3600 + zone_minutes * 60) * (-1 if zone.startswith("-") else 1)
    return days_from_civil(year, month, day) * DAY_S + hour * 3600 + minute * 60 + second - offset


def message_time(created_at: object, crdate: int) -> int:
    """The message's time: its createdAt where it names one, else the row's crdate."""
    found = created_seconds(created_at)
    return crdate if found is None else found
