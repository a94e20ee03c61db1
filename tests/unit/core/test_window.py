"""The window of a write (DESIGN.md rule 1): one cutoff that every "has the window closed?" asks."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.health import OVERDUE_GRACE_S, overdue_before
from core.outcomes import is_due
from core.periods import Grain, is_open, open_from, period_length, period_start, unix_of
from core.time import DAY_S
from core.window import (
    DELETES,
    DELETES_AFTER_WINDOW,
    HUMAN_ROWS,
    MIN_WINDOW_S,
    InvalidWindowError,
    Span,
    in_span,
    window_closed,
    window_closes_at,
    window_cutoff,
)

WINDOW = 7 * DAY_S
T = 1_790_000_000


def test_the_window_of_a_write_at_the_cutoff_second_is_still_open() -> None:
    cutoff = window_cutoff(T + WINDOW, WINDOW)

    at_the_cutoff = window_closed(cutoff, T + WINDOW, WINDOW)
    a_second_before = window_closed(cutoff - 1, T + WINDOW, WINDOW)

    assert cutoff == T
    assert at_the_cutoff is False
    assert a_second_before is True


def test_a_row_stamped_at_the_last_second_of_the_window_counts_until_that_second_has_passed() -> None:
    closes = window_closes_at(T, WINDOW)

    assert window_closed(T, closes, WINDOW) is False
    assert window_closed(T, closes + 1, WINDOW) is True


@given(st.integers(T - 30 * DAY_S, T + 30 * DAY_S), st.integers(1, 30))
def test_a_run_is_due_exactly_when_the_window_of_its_last_write_has_closed(now: int, days: int) -> None:
    window_s = days * DAY_S

    assert is_due(T, now, window_s) is window_closed(T, now, window_s)
    assert window_closed(T, now, window_s) is (window_cutoff(now, window_s) > T)


def test_a_pending_run_is_overdue_once_its_window_closed_more_than_the_grace_ago() -> None:
    assert overdue_before(T, WINDOW) == window_cutoff(T - OVERDUE_GRACE_S, WINDOW)


@given(st.integers(T - 30 * DAY_S, T + 30 * DAY_S), st.sampled_from(list(Grain)))
def test_a_period_is_open_while_the_window_of_a_run_ending_in_its_last_second_is(
    now: int, grain: Grain
) -> None:
    period = period_start(now - WINDOW, grain)
    last_second = unix_of(period + period_length(grain)) - 1
    closed = window_closed(last_second, now, WINDOW)

    first_open = open_from(now, WINDOW, None if closed else last_second, grain)

    assert is_open(period, first_open) is not closed


@pytest.mark.parametrize("window_s", [MIN_WINDOW_S - 1, 0, -WINDOW])
def test_no_cutoff_for_a_window_shorter_than_a_day(window_s: int) -> None:
    with pytest.raises(InvalidWindowError):
        window_cutoff(T, window_s)


# --- the window's spans -------------------------------------------------------------------------------------

OWN_ROW = 100
CLOSES = T + WINDOW


@pytest.mark.parametrize(
    ("span", "uid", "tstamp", "inside"),
    [
        (HUMAN_ROWS, OWN_ROW + 1, CLOSES, True),
        (HUMAN_ROWS, OWN_ROW + 1, CLOSES + 1, False),
        (HUMAN_ROWS, OWN_ROW, T, False),
        (HUMAN_ROWS, OWN_ROW + 1, T - DAY_S, True),  # stamped before t, inserted after W's own row
        (DELETES, OWN_ROW + 1, CLOSES + 30 * DAY_S, True),
        (DELETES, OWN_ROW - 1, CLOSES, False),
        (DELETES_AFTER_WINDOW, OWN_ROW + 1, CLOSES + 1, True),
        (DELETES_AFTER_WINDOW, OWN_ROW + 1, CLOSES, False),
    ],
)
def test_a_span_holds_the_rows_inserted_after_the_writes_own_row_and_stamped_where_it_says(
    span: Span, uid: int, tstamp: int, inside: bool
) -> None:
    found = in_span(span, uid=uid, tstamp=tstamp, own_row=OWN_ROW, closes=CLOSES)

    assert found is inside
