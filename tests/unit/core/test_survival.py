"""Kaplan–Meier, its log-log Greenwood band, the median and the log-rank test (core.survival), by rule and
against lifelines on hypothesis-built writes."""

from __future__ import annotations

import math
import warnings

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from lifelines import KaplanMeierFitter
from lifelines.statistics import logrank_test

from core.rates import Interval
from core.survival import InvalidTallyError, Tally, kaplan_meier, log_log_band, log_rank, merged

HOUR = 3600


def tallies_of(writes: list[tuple[int, bool]]) -> list[Tally]:
    """One tally per write: (time, changed)."""
    return [Tally(time, int(changed), int(not changed)) for time, changed in writes]


# Times from a small range, so that ties of events and censorings at one time are common.
writes_strategy = st.lists(
    st.tuples(st.integers(min_value=1, max_value=40), st.booleans()), min_size=1, max_size=80
)


def fitted(writes: list[tuple[int, bool]]) -> KaplanMeierFitter:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return KaplanMeierFitter().fit([t for t, _ in writes], [int(e) for _, e in writes])


# --- the rules ----------------------------------------------------------------------------------------------


def test_a_change_lowers_the_curve_at_its_time_and_not_before() -> None:
    curve = kaplan_meier([Tally(HOUR, 1, 0), Tally(7 * 24 * HOUR, 0, 3)])

    assert curve.survival_at(HOUR - 1) == 1.0
    assert curve.survival_at(HOUR) == pytest.approx(0.75)


def test_a_write_nothing_changed_leaves_the_curve_and_the_writes_at_risk_after_its_time() -> None:
    curve = kaplan_meier([Tally(10, 0, 1), Tally(20, 1, 0), Tally(30, 0, 1)])

    assert curve.survival_at(15) == 1.0
    assert curve.survival_at(20) == pytest.approx(1 - 1 / 2)
    assert (curve.at_risk_at(10), curve.at_risk_at(11), curve.at_risk_at(30), curve.at_risk_at(31)) == (
        3,
        2,
        1,
        0,
    )


def test_at_a_time_holding_both_the_changes_come_before_the_censorings() -> None:
    curve = kaplan_meier([Tally(5, 1, 1), Tally(9, 1, 0)])

    assert curve.survival_at(5) == pytest.approx(1 - 1 / 3)  # the censored write was still at risk at 5
    assert curve.survival_at(9) == pytest.approx((2 / 3) * 0)


def test_the_median_is_the_first_time_half_or_fewer_are_untouched() -> None:
    curve = kaplan_meier([Tally(1, 1, 0), Tally(2, 1, 0), Tally(3, 0, 2)])

    assert curve.median == 2


def test_a_curve_that_stays_above_half_has_no_median() -> None:
    curve = kaplan_meier([Tally(1, 1, 0), Tally(7, 0, 2)])

    assert curve.median is None


def test_before_the_first_change_the_band_is_one_and_at_zero_it_is_zero() -> None:
    assert log_log_band(1.0, 0.0) == Interval(1.0, 1.0)
    assert log_log_band(0.0, 0.5) == Interval(0.0, 0.0)


def test_tallies_of_one_time_are_summed_and_put_in_time_order() -> None:
    assert merged([Tally(9, 1, 0), Tally(3, 0, 1), Tally(9, 0, 2)]) == (Tally(3, 0, 1), Tally(9, 1, 2))


def test_tallies_one_per_time_in_time_order_are_merged_already() -> None:
    given = (Tally(3, 0, 1), Tally(9, 1, 2))

    assert merged(given) is given  # as the database hands them over: no second pass builds them again


def test_no_writes_is_a_flat_curve_without_steps() -> None:
    curve = kaplan_meier([])

    assert (curve.steps, curve.writes, curve.survival_at(100), curve.median) == ((), 0, 1.0, None)


@pytest.mark.parametrize(("time", "events", "censored"), [(-1, 1, 0), (1, -1, 0), (1, 0, -2)])
def test_a_negative_time_or_count_is_no_tally(time: int, events: int, censored: int) -> None:
    with pytest.raises(InvalidTallyError):
        Tally(time, events, censored)


def test_two_curves_of_the_same_writes_do_not_differ_by_the_log_rank_test() -> None:
    same = [Tally(1, 2, 0), Tally(4, 1, 3)]

    test = log_rank(same, same)

    assert test.chi_square == pytest.approx(0.0) and test.p_value == pytest.approx(1.0)


def test_without_any_change_the_log_rank_test_finds_nothing() -> None:
    test = log_rank([Tally(7, 0, 5)], [Tally(7, 0, 6)])

    assert (test.chi_square, test.p_value, test.observed) == (0.0, 1.0, (0, 0))


# --- against lifelines --------------------------------------------------------------------------------------


@given(writes_strategy)
def test_the_curve_is_lifelines_kaplan_meier_estimate(writes: list[tuple[int, bool]]) -> None:
    expected = fitted(writes).survival_function_.iloc[:, 0]

    curve = kaplan_meier(tallies_of(writes))

    for time, survival in expected.items():
        assert curve.survival_at(float(time)) == pytest.approx(survival, abs=1e-12)


@given(writes_strategy)
def test_the_band_is_lifelines_exponential_greenwood_interval(writes: list[tuple[int, bool]]) -> None:
    bounds = fitted(writes).confidence_interval_survival_function_

    curve = kaplan_meier(tallies_of(writes))

    for time, (low, high) in zip(bounds.index, bounds.to_numpy(), strict=True):
        band = curve.band_at(float(time))
        assert band.low == pytest.approx(low, abs=1e-9)
        assert band.high == pytest.approx(high, abs=1e-9)


@given(writes_strategy)
def test_the_median_is_lifelines_median_survival_time(writes: list[tuple[int, bool]]) -> None:
    expected = fitted(writes).median_survival_time_

    curve = kaplan_meier(tallies_of(writes))

    # lifelines multiplies in logarithms, so a curve exactly at one half is a hair above or below it there
    assume(all(abs(step.survival - 0.5) > 1e-9 for step in curve.steps))
    median = curve.median
    assert (median is None) == math.isinf(expected)
    assert median is None or median == expected


@given(writes_strategy)
def test_the_writes_at_risk_are_lifelines_at_risk(writes: list[tuple[int, bool]]) -> None:
    table = fitted(writes).event_table

    curve = kaplan_meier(tallies_of(writes))

    for time, at_risk in table["at_risk"].items():
        if time > 0:  # lifelines' first row, time 0, holds every write
            assert curve.at_risk_at(float(time)) == at_risk


@given(writes_strategy, writes_strategy)
def test_the_log_rank_test_is_lifelines_logrank_test(
    first: list[tuple[int, bool]], second: list[tuple[int, bool]]
) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = logrank_test(
            [t for t, _ in first],
            [t for t, _ in second],
            event_observed_A=[int(e) for _, e in first],
            event_observed_B=[int(e) for _, e in second],
        )

    test = log_rank(tallies_of(first), tallies_of(second))

    if math.isnan(expected.test_statistic):  # lifelines divides 0 by 0 when no write changed
        assert test.chi_square == 0.0
    else:
        assert test.chi_square == pytest.approx(expected.test_statistic, rel=1e-9, abs=1e-9)
        assert test.p_value == pytest.approx(expected.p_value, rel=1e-9, abs=1e-12)
