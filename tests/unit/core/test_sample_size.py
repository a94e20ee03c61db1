"""How many more runs two sides need before a 5-point difference can be told apart (core.sample_size)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.rates import Z_95, Proportion, compare
from core.sample_size import (
    more_needed,
    newcombe_half_width,
    runs_per_side,
    wald_runs_per_side,
    weeks_needed,
)
from core.verdicts import MIN_DETECTABLE_DIFFERENCE

rates = st.integers(min_value=0, max_value=100).map(lambda k: k / 100)


def test_wald_n_is_z_squared_times_the_summed_variances_over_the_squared_difference() -> None:
    n = wald_runs_per_side(0.5, 0.5)

    assert n == math.ceil(Z_95**2 * (0.25 + 0.25) / 0.05**2) == 769


@given(rates, rates)
def test_at_the_runs_it_names_newcombes_half_width_is_at_most_five_points(p1: float, p2: float) -> None:
    n = runs_per_side(p1, p2)

    assert newcombe_half_width(p1, p2, n) <= MIN_DETECTABLE_DIFFERENCE
    assert n >= wald_runs_per_side(p1, p2)


@given(rates, rates)
def test_it_raises_walds_n_only_as_far_as_newcombe_needs(p1: float, p2: float) -> None:
    n = runs_per_side(p1, p2)

    if n > wald_runs_per_side(p1, p2):
        assert newcombe_half_width(p1, p2, n - 1) > MIN_DETECTABLE_DIFFERENCE


def test_two_rates_of_zero_need_the_runs_at_which_wilsons_upper_bound_reaches_five_points() -> None:
    n = runs_per_side(0.0, 0.0)

    # Wald's interval is empty at 0%; Wilson's upper bound of 0/n is z² / (n + z²) ≤ 0.05 from n = 19 z².
    assert n == math.ceil(19 * Z_95**2) == 73


@pytest.mark.parametrize(("rate", "step"), [(0.0, 1), (0.25, 4), (0.1, 10), (0.5, 2)])
def test_two_sides_with_the_named_runs_at_the_same_rate_are_no_longer_too_few_to_tell(
    rate: float, step: int
) -> None:
    n = math.ceil(runs_per_side(rate, rate) / step) * step  # the next size whose rate is a whole count

    side = Proportion(round(rate * n), n)

    assert not compare(side, side).too_few_to_tell


@pytest.mark.parametrize(("have", "per_side", "more"), [(100, 769, 669), (800, 769, 0), (769, 769, 0)])
def test_a_side_needs_what_it_lacks_of_the_named_runs_and_never_fewer_than_none(
    have: int, per_side: int, more: int
) -> None:
    assert more_needed(have, per_side) == more


@pytest.mark.parametrize(
    ("more", "weekly", "weeks"), [(0, 0, 0), (0, 9, 0), (100, 10, 10), (101, 10, 11), (5, 0, None)]
)
def test_weeks_are_whole_weeks_at_the_weekly_volume_and_none_without_one(
    more: int, weekly: int, weeks: int | None
) -> None:
    assert weeks_needed(more, weekly) == weeks
