"""A chat message's time is its payload's createdAt, not the row's crdate, which every save of the
conversation stamps anew on all its rows (DOMAIN.md, "The chat: tx_nrmcpagent_message")."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.message_time import created_seconds, message_time

SAVED = 1_900_000_000  # the conversation's last save: every row's crdate


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("2026-03-27T11:20:20+01:00", int(datetime(2026, 3, 27, 10, 20, 20, tzinfo=UTC).timestamp())),
        ("2026-03-27T10:20:20Z", int(datetime(2026, 3, 27, 10, 20, 20, tzinfo=UTC).timestamp())),
        ("2026-03-27T10:20:20.123Z", int(datetime(2026, 3, 27, 10, 20, 20, tzinfo=UTC).timestamp())),
        ("2026-01-01T00:30:00-02:30", int(datetime(2026, 1, 1, 3, 0, tzinfo=UTC).timestamp())),
        ("1970-01-01T00:00:00Z", 0),
    ],
)
def test_a_messages_time_is_its_created_at_whatever_its_offset(text: str, seconds: int) -> None:
    assert created_seconds(text) == seconds
    assert message_time(text, SAVED) == seconds


@pytest.mark.parametrize(
    "created_at",
    [
        None,
        12345,
        "",
        "2026-03-27",
        "2026-03-27 10:20:20Z",
        "2026-03-27T10:20:20",
        "2026-13-01T00:00:00Z",
        "2026-03-27T24:00:00Z",
        "1969-12-31T23:59:59Z",
        "2038-01-01T00:00:00Z",
        "2026-03-27T10:20:20+01:00 ",
        "２０２６-03-27T10:20:20Z",
    ],
)
def test_a_message_without_a_readable_created_at_is_dated_by_its_row(created_at: object) -> None:
    assert created_seconds(created_at) is None
    assert message_time(created_at, SAVED) == SAVED


@given(
    st.datetimes(min_value=datetime(1970, 1, 2), max_value=datetime(2037, 12, 30)), st.integers(-1439, 1439)
)
def test_the_day_count_agrees_with_the_calendar(moment: datetime, offset_minutes: int) -> None:
    zone = timedelta(minutes=offset_minutes)
    sign = "-" if offset_minutes < 0 else "+"
    hours, minutes = divmod(abs(offset_minutes), 60)
    text = moment.replace(microsecond=0).isoformat() + f"{sign}{hours:02d}:{minutes:02d}"
    expected = moment.replace(microsecond=0, tzinfo=UTC) - zone

    assert created_seconds(text) == int(expected.timestamp())
