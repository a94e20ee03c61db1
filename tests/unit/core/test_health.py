"""Health rules: stuck conversations (001_…, ai-chat:cleanup), the history horizon against the window
(003_…), overdue derivations."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.health import (
    CLAIMED_STATUSES,
    CLEANUP_TIMEOUT_S,
    OVERDUE_GRACE_S,
    ConversationState,
    Health,
    HorizonLevel,
    horizon,
    horizon_warning,
    lines,
    message,
    overdue_before,
    stuck,
)
from core.time import DAY_S
from core.window import InvalidWindowError

NOW = 1_800_000_000
DAY = DAY_S
WEEK = 7 * DAY


@pytest.mark.parametrize(
    ("status", "age_s", "is_stuck"),
    [
        ("processing", CLEANUP_TIMEOUT_S + 1, True),
        ("locked", CLEANUP_TIMEOUT_S + 1, True),
        ("tool_loop", CLEANUP_TIMEOUT_S + 1, True),
        ("processing", CLEANUP_TIMEOUT_S, False),  # "more than five minutes": exactly 300 s is not yet
        ("processing", 10, False),
        ("processing", -60, False),  # changed after `now`
        ("idle", 30 * DAY, False),
        ("awaiting_approval", 30 * DAY, False),
        ("awaiting_input", 30 * DAY, False),
        ("failed", 30 * DAY, False),
    ],
)
def test_a_conversation_is_stuck_in_a_claimed_status_for_more_than_five_minutes(
    status: str, age_s: int, is_stuck: bool
) -> None:
    conversation = ConversationState(uid=7, status=status, tstamp=NOW - age_s)

    found = stuck([conversation], NOW)

    assert bool(found) is is_stuck


def test_stuck_conversations_come_oldest_first_with_how_long_they_are_stuck() -> None:
    conversations = [
        ConversationState(1, "locked", NOW - 2 * DAY),
        ConversationState(2, "processing", NOW - 30 * DAY),
        ConversationState(3, "idle", NOW - 40 * DAY),
    ]

    found = stuck(conversations, NOW)

    assert [(c.uid, c.status, c.stuck_for_s) for c in found] == [
        (2, "processing", 30 * DAY),
        (1, "locked", 2 * DAY),
    ]


def test_the_claimed_statuses_are_the_three_the_cleanup_fails() -> None:
    assert set(CLAIMED_STATUSES) == {"processing", "locked", "tool_loop"}


@pytest.mark.parametrize(
    ("retained_s", "level"),
    [
        (0, HorizonLevel.UNKNOWN_NOW),
        (WEEK - 1, HorizonLevel.UNKNOWN_NOW),  # writes whose window closes now have lost their rows
        (WEEK, HorizonLevel.WARNING),  # enough for the writes judged now, no slack at all
        (2 * WEEK - 1, HorizonLevel.WARNING),  # less than one window of slack
        (2 * WEEK, HorizonLevel.OK),
        (100 * DAY, HorizonLevel.OK),
    ],
)
def test_the_history_must_span_two_windows_and_below_one_writes_are_unknown_now(
    retained_s: int, level: HorizonLevel
) -> None:
    reading = horizon(NOW - retained_s, NOW, WEEK)

    assert (reading.level, reading.span_s) == (level, retained_s)
    assert reading.warning is (level is not HorizonLevel.OK)
    assert horizon_warning(NOW - retained_s, NOW, WEEK) is reading.warning


def test_an_empty_history_is_a_warning_since_every_write_judged_now_is_unknown() -> None:
    reading = horizon(None, NOW, WEEK)

    assert (reading.level, reading.span_s, reading.warning) == (HorizonLevel.EMPTY, None, True)


@given(
    retained_s=st.integers(min_value=0, max_value=400 * DAY),
    window_days=st.integers(min_value=1, max_value=60),
)
def test_the_horizon_warns_exactly_when_less_than_two_windows_are_retained(
    retained_s: int, window_days: int
) -> None:
    window_s = window_days * DAY

    warns = horizon_warning(NOW - retained_s, NOW, window_s)

    assert warns is (retained_s < 2 * window_s)


def test_history_that_starts_after_now_retains_nothing_at_now_and_says_from_when() -> None:
    reading = horizon(NOW + 3 * DAY, NOW, WEEK)

    assert (reading.level, reading.span_s) == (HorizonLevel.UNKNOWN_NOW, 0)
    assert "history retained 0.0 days (the oldest row is from 2027-01-18" in message(
        Health(NOW, (), reading, 0, 0)
    )


def test_the_horizon_refuses_a_window_shorter_than_a_day() -> None:
    with pytest.raises(InvalidWindowError):
        horizon(NOW - 400 * DAY, NOW, DAY - 1)


def test_a_pending_run_is_overdue_when_its_last_write_closed_its_window_more_than_a_day_ago() -> None:
    cutoff = overdue_before(NOW, WEEK)

    assert cutoff == NOW - WEEK - OVERDUE_GRACE_S


def _health(**changes: object) -> Health:
    values: dict[str, object] = {
        "checked_at": NOW,
        "stuck": (),
        "horizon": horizon(NOW - 100 * DAY, NOW, WEEK),
        "pending_writes": 12,
        "overdue_writes": 0,
    }
    return Health(**(values | changes))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("changes", "status"),
    [
        ({}, "ok"),
        ({"stuck": stuck([ConversationState(4, "processing", NOW - DAY)], NOW)}, "warning"),
        ({"horizon": horizon(NOW - 10 * DAY, NOW, WEEK)}, "warning"),
        ({"overdue_writes": 1}, "warning"),
    ],
)
def test_the_reading_warns_on_stuck_conversations_a_near_horizon_or_overdue_writes(
    changes: dict[str, object], status: str
) -> None:
    assert _health(**changes).status == status


def test_the_message_names_stuck_conversations_by_uid_and_caps_the_list() -> None:
    many = [ConversationState(uid, "processing", NOW - DAY - uid) for uid in range(1, 13)]
    reading = _health(stuck=stuck(many, NOW))

    text = message(reading)

    assert text.startswith("12 stuck conversations (uid 12, 11, 10, 9, 8, 7, 6, 5, 4, 3 and 2 more;")
    assert "ai-chat:cleanup has not run" in text
    assert "12 writes pending derivation, 0 overdue" in text
    assert "\n" not in text and len(lines(reading)) == 3
