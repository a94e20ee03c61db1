"""Rate arithmetic (DESIGN.md, "Rates" and "Privacy")."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.rates import (
    Interval,
    InvalidProportionError,
    Proportion,
    compare,
    newcombe_interval,
    wilson_interval,
    z_test_p_value,
)
from core.verdicts import Finding


# Published values: Newcombe (1998), "Two-sided confidence intervals for the single proportion", Table I
# (method 3, Wilson score); 0/10, 10/10 and 5/10 by hand: 0/n has high = z²/(n + z²) = 3.8415/13.8415.
@pytest.mark.parametrize(
    ("numerator", "denominator", "low", "high"),
    [
        (0, 10, 0.0, 0.2775),
        (10, 10, 0.7225, 1.0),
        (5, 10, 0.2366, 0.7634),
        (81, 263, 0.2553, 0.3662),
        (15, 148, 0.0624, 0.1605),
        (0, 20, 0.0, 0.1611),
        (1, 29, 0.0061, 0.1718),
    ],
)
def test_the_wilson_interval_matches_published_values(
    numerator: int, denominator: int, low: float, high: float
) -> None:
    interval = wilson_interval(numerator, denominator)

    assert interval == pytest.approx((low, high), abs=5e-5)


def test_the_wilson_interval_of_none_and_all_ends_exactly_at_zero_and_one() -> None:
    none, everything = wilson_interval(0, 7), wilson_interval(7, 7)

    assert none.low == 0.0
    assert everything.high == 1.0


# Newcombe (1998), "Interval estimation for the difference between independent proportions", Table II,
# method 10 (hybrid score, no continuity correction). Each row is (a) − (b), i.e. after − before.
@pytest.mark.parametrize(
    ("after", "before", "difference", "low", "high"),
    [
        ((56, 70), (48, 80), 0.2, 0.0524, 0.3339),
        ((9, 10), (3, 10), 0.6, 0.1705, 0.8090),
        ((6, 7), (2, 7), 0.5714, 0.0582, 0.8062),
        ((5, 56), (0, 29), 0.0893, -0.0381, 0.1926),
        ((0, 10), (0, 20), 0.0, -0.1611, 0.2775),
        ((0, 10), (0, 10), 0.0, -0.2775, 0.2775),
        ((10, 10), (0, 20), 1.0, 0.6791, 1.0),
        ((10, 10), (0, 10), 1.0, 0.6075, 1.0),
    ],
)
def test_the_difference_interval_matches_newcombes_hybrid_score_examples(
    after: tuple[int, int], before: tuple[int, int], difference: float, low: float, high: float
) -> None:
    comparison = compare(Proportion(*before), Proportion(*after))

    assert comparison.difference == pytest.approx(difference, abs=5e-5)
    assert comparison.difference_interval == pytest.approx((low, high), abs=5e-5)


def test_the_z_test_pools_both_sides() -> None:
    # 40/100 before, 60/100 after: pooled p = 100/200 = 0.5; SE = √(0.5 · 0.5 · (1/100 + 1/100)) = √0.005
    # = 0.070711; z = (0.6 − 0.4) / 0.070711 = 2.828427 = 2√2; p = erfc(z/√2) = erfc(2) = 0.0046777.
    before, after = Proportion(40, 100), Proportion(60, 100)

    p_value = z_test_p_value(before, after)

    assert p_value == pytest.approx(math.erfc(2.0), rel=1e-12)
    assert p_value == pytest.approx(0.0046777, abs=1e-7)


def test_the_z_test_is_symmetric_in_direction() -> None:
    low, high = Proportion(40, 100), Proportion(60, 100)

    assert z_test_p_value(low, high) == pytest.approx(z_test_p_value(high, low))


def test_two_sides_that_are_all_zero_show_no_difference() -> None:
    p_value = z_test_p_value(Proportion(0, 30), Proportion(0, 50))

    assert p_value == 1.0


def test_a_period_without_data_has_no_rate_never_zero() -> None:
    empty = Proportion(0, 0)

    assert empty.rate is None
    assert empty.interval is None


def test_a_comparison_with_an_empty_side_has_no_difference_and_is_too_few_to_tell() -> None:
    comparison = compare(Proportion(0, 0), Proportion(12, 40))

    assert comparison.before_rate is None
    assert comparison.after_rate == pytest.approx(0.3)
    assert comparison.after_interval is not None
    assert comparison.difference is None
    assert comparison.difference_interval is None
    assert comparison.p_value is None
    assert comparison.finding is Finding.TOO_FEW_TO_TELL
    assert comparison.too_few_to_tell is True
    assert comparison.significant is False


@pytest.mark.parametrize(
    ("numerator", "denominator"),
    [(-1, 10), (11, 10), (1, 0), (0, -1)],
)
def test_a_proportion_needs_zero_le_numerator_le_denominator(numerator: int, denominator: int) -> None:
    with pytest.raises(InvalidProportionError):
        Proportion(numerator, denominator)


def test_an_interval_needs_data() -> None:
    with pytest.raises(InvalidProportionError):
        wilson_interval(0, 0)
    with pytest.raises(InvalidProportionError):
        newcombe_interval(Proportion(0, 0), Proportion(1, 2))


# (before, after, finding, why): core.verdicts' rule, applied by compare to its own p and interval.
FINDINGS = [
    ((157, 483), (63, 120), Finding.SIGNIFICANT, "a 20-point rise at 120 runs, its interval +10 to +30"),
    ((0, 10), (10, 10), Finding.SIGNIFICANT, "a huge jump on ten runs, however wide its interval"),
    ((48, 80), (56, 70), Finding.SIGNIFICANT, "textbook sizes, an interval of ±14 points"),
    ((600, 2000), (610, 2000), Finding.NO_DIFFERENCE, "two thousand a side, an interval within ±3 points"),
    ((10, 500), (5, 500), Finding.NO_DIFFERENCE, "rare events, 2% against 1%, within ±3 points"),
    ((30, 100), (35, 100), Finding.TOO_FEW_TO_TELL, "a hundred a side, an interval of ±13 points"),
    (
        (95, 100),
        (87, 100),
        Finding.SIGNIFICANT,
        "p = 0.048 while the interval touches zero: the test decides",
    ),
    ((0, 42), (1, 4), Finding.TOO_FEW_TO_TELL, "one event in four: the exact test's p = 0.087, no finding"),
    (
        (649, 680),
        (1979, 2040),
        Finding.NO_DIFFERENCE,
        "p = 0.050 while the interval clears zero: not significant",
    ),
]


@pytest.mark.parametrize(
    ("before", "after", "expected"), [row[:3] for row in FINDINGS], ids=[row[3] for row in FINDINGS]
)
def test_compare_is_significant_below_p_five_percent_else_no_difference_within_five_points_else_too_few(
    before: tuple[int, int], after: tuple[int, int], expected: Finding
) -> None:
    comparison = compare(Proportion(*before), Proportion(*after))

    assert comparison.finding is expected
    assert comparison.significant is (expected is Finding.SIGNIFICANT)
    assert comparison.too_few_to_tell is (expected is Finding.TOO_FEW_TO_TELL)
    assert comparison.p_value is not None and comparison.difference_interval is not None
    assert (comparison.p_value < 0.05) is comparison.significant
    low, high = comparison.difference_interval
    within = low >= -0.05 and high <= 0.05
    assert comparison.finding is Finding.SIGNIFICANT or within is (expected is Finding.NO_DIFFERENCE)


def test_the_issues_twenty_point_rise_has_its_printed_interval_and_p() -> None:
    comparison = compare(Proportion(157, 483), Proportion(63, 120))

    assert comparison.before_interval == pytest.approx((0.285, 0.368), abs=5e-4)
    assert comparison.after_interval == pytest.approx((0.436, 0.612), abs=5e-4)
    assert comparison.difference == pytest.approx(0.2, abs=5e-4)
    assert comparison.difference_interval == pytest.approx((0.101, 0.296), abs=5e-4)
    assert comparison.p_value is not None and comparison.p_value < 0.0001


PROPORTIONS = st.integers(min_value=1, max_value=5000).flatmap(
    lambda n: st.builds(Proportion, st.integers(min_value=0, max_value=n), st.just(n))
)


@given(proportion=PROPORTIONS)
def test_the_wilson_interval_lies_in_zero_one_and_holds_the_rate(proportion: Proportion) -> None:
    interval = proportion.interval

    assert interval is not None and proportion.rate is not None
    assert 0.0 <= interval.low <= proportion.rate <= interval.high <= 1.0


@given(before=PROPORTIONS, after=PROPORTIONS)
def test_the_difference_interval_holds_the_difference_and_lies_in_minus_one_one(
    before: Proportion, after: Proportion
) -> None:
    comparison = compare(before, after)

    assert comparison.difference is not None and comparison.difference_interval is not None
    low, high = comparison.difference_interval
    assert -1.0 - 1e-12 <= low <= comparison.difference + 1e-12
    assert comparison.difference - 1e-12 <= high <= 1.0 + 1e-12
    assert comparison.p_value is not None and 0.0 <= comparison.p_value <= 1.0


def test_interval_is_a_low_high_pair() -> None:
    interval = Interval(0.25, 0.75)

    low, high = interval

    assert (low, high, interval.half_width) == (0.25, 0.75, 0.25)
