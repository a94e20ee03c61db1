"""A chat message's createdAt as unix seconds, in SQL (core.message_time.created_seconds): the same shape, the
same ranges and the same day count, so that the job and core read every text alike; NULL for a text that is
no such time. The text's shape is checked by GLOB on SQLite (no regular expressions there without a function
of the driver's) and by a regular expression elsewhere; the arithmetic is the same on every dialect.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import ColumnElement, Integer, and_, case, cast, func, or_

from adapters.dialect.names import SQLITE
from core.message_time import EARLIEST_YEAR, FRACTION_DIGITS, ISO_INSTANT, LATEST_YEAR
from core.time import DAY_S

# core.message_time.ISO_INSTANT, for PostgreSQL's `~` and MariaDB's REGEXP, whose `$` also matches before a
# final line break: the last character is asked for on its own (_ENDS).
_PATTERN = f"^{ISO_INSTANT.pattern.replace(chr(92) + '.', '[.]')}$"
_ENDS = tuple("Zz0123456789")
_HEAD_GLOB = "[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9][Tt][0-9][0-9]:[0-9][0-9]:[0-9][0-9]*"
_OFFSET_GLOB = "[+-][0-9][0-9]:[0-9][0-9]"
_HEAD = len("YYYY-MM-DDTHH:MM:SS")


def _shaped(dialect: str, text: ColumnElement[Any]) -> ColumnElement[bool]:
    if dialect != SQLITE:
        return and_(text.regexp_match(_PATTERN), func.substr(text, func.length(text), 1).in_(_ENDS))
    # The head, then a zone of one letter or six characters, and between them nothing or a fraction.
    length = func.length(text)
    zulu = func.substr(text, length, 1).in_(("Z", "z"))
    zone = case((zulu, 1), else_=6)
    fraction = func.substr(text, _HEAD + 1, length - _HEAD - zone)
    return and_(
        text.op("GLOB")(_HEAD_GLOB),
        or_(zulu, func.substr(text, length - 5, 6).op("GLOB")(_OFFSET_GLOB)),
        or_(
            fraction == "",
            and_(
                fraction.op("GLOB")(".[0-9]*"),
                ~fraction.op("GLOB")(".*[^0-9]*"),
                func.length(fraction) <= 1 + FRACTION_DIGITS,
            ),
        ),
    )


def created_seconds(dialect: str, text: ColumnElement[Any]) -> ColumnElement[Any]:
    """Unix seconds of an ISO 8601 createdAt text (core.message_time.created_seconds); NULL otherwise."""

    def number(start: int, length: int) -> ColumnElement[Any]:
        return cast(func.substr(text, start, length), Integer)

    year, month, day = number(1, 4), number(6, 2), number(9, 2)
    hour, minute, second = number(12, 2), number(15, 2), number(18, 2)
    end = func.length(text)
    zulu = func.substr(text, end, 1).in_(("Z", "z"))
    zone_hours = case((zulu, 0), else_=cast(func.substr(text, end - 4, 2), Integer))
    zone_minutes = case((zulu, 0), else_=cast(func.substr(text, end - 1, 2), Integer))
    sign = case((func.substr(text, end - 5, 1) == "-", -1), else_=1)
    in_range = and_(
        year.between(EARLIEST_YEAR, LATEST_YEAR),
        month.between(1, 12),
        day.between(1, 31),
        hour <= 23,
        minute <= 59,
        second <= 59,
        zone_hours <= 23,
        zone_minutes <= 59,
    )
    # core.message_time.days_from_civil; every operand an integer, and `//` floor division on each dialect.
    shifted = year - case((month <= 2, 1), else_=0)
    era = shifted // 400
    year_of_era = shifted - era * 400
    day_of_year = (153 * (month + case((month > 2, -3), else_=9)) + 2) // 5 + day - 1
    day_of_era = year_of_era * 365 + year_of_era // 4 - year_of_era // 100 + day_of_year
    days = era * 146_097 + day_of_era - 719_468
    seconds = (
        days * DAY_S + hour * 3600 + minute * 60 + second - sign * (zone_hours * 3600 + zone_minutes * 60)
    )
    return case((and_(_shaped(dialect, text), in_range), seconds))
