"""core.rates' Wilson, Newcombe and two-proportion tests give what statsmodels and scipy give, any counts."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.stats import fisher_exact
from statsmodels.stats.proportion import (
    confint_proportions_2indep,
    proportion_confint,
    proportions_ztest,
)

from core.rates import (
    MIN_EXPECTED_COUNT,
    Proportion,
    fisher_exact_p_value,
    newcombe_interval,
    p_value,
    wilson_interval,
    z_test_p_value,
)


@st.composite
def proportions(draw: st.DrawFn) -> Proportion:
    denominator = draw(st.integers(min_value=1, max_value=5_000))
    return Proportion(draw(st.integers(min_value=0, max_value=denominator)), denominator)


@st.composite
def small_proportions(draw: st.DrawFn) -> Proportion:
    """A side of a table the exact test judges: a few dozen runs at most."""
    denominator = draw(st.integers(min_value=1, max_value=60))
    return Proportion(draw(st.integers(min_value=0, max_value=denominator)), denominator)


@given(proportions())
def test_the_wilson_interval_is_statsmodels_wilson_interval(proportion: Proportion) -> None:
    low, high = proportion_confint(proportion.numerator, proportion.denominator, alpha=0.05, method="wilson")

    interval = wilson_interval(proportion.numerator, proportion.denominator)

    assert interval == pytest.approx((low, high), abs=1e-9)


@given(proportions(), proportions())
def test_the_difference_interval_is_statsmodels_newcombe_interval(
    before: Proportion, after: Proportion
) -> None:
    low, high = confint_proportions_2indep(
        after.numerator,
        after.denominator,
        before.numerator,
        before.denominator,
        method="newcomb",
        compare="diff",
        alpha=0.05,
    )

    interval = newcombe_interval(before, after)

    assert interval == pytest.approx((low, high), abs=1e-9)


@given(proportions(), proportions())
def test_the_p_value_is_statsmodels_pooled_two_proportion_z_test(
    before: Proportion, after: Proportion
) -> None:
    pooled = (before.numerator + after.numerator) / (before.denominator + after.denominator)

    p_value = z_test_p_value(before, after)

    if pooled in (0.0, 1.0):  # no variance: statsmodels divides by zero, the comparison reads no difference
        assert p_value == 1.0
    else:
        _, expected = proportions_ztest(
            [after.numerator, before.numerator], [after.denominator, before.denominator]
        )
        assert p_value == pytest.approx(expected, abs=1e-9)


@given(small_proportions(), small_proportions())
def test_the_exact_p_value_is_scipys_fisher_exact_test(before: Proportion, after: Proportion) -> None:
    table = [
        [after.numerator, after.denominator - after.numerator],
        [before.numerator, before.denominator - before.numerator],
    ]

    assert fisher_exact_p_value(before, after) == pytest.approx(fisher_exact(table)[1], abs=1e-9)


@given(proportions(), proportions())
def test_the_p_value_is_the_z_tests_where_every_cell_expects_five_and_the_exact_tests_elsewhere(
    before: Proportion, after: Proportion
) -> None:
    total = before.denominator + after.denominator
    events = before.numerator + after.numerator
    cells = [
        side * outcome / total
        for side in (before.denominator, after.denominator)
        for outcome in (events, total - events)
    ]

    expected = z_test_p_value if min(cells) >= MIN_EXPECTED_COUNT else fisher_exact_p_value
    assert p_value(before, after) == expected(before, after)
