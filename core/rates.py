"""Rate arithmetic: proportions, Wilson intervals and before/after comparisons (DESIGN.md, "Rates").

A rate is a numerator over a denominator with its Wilson 95% interval and is never shown without its
denominator. A period without data has no rate (None), never 0%.

Methods:

* Wilson score interval for one proportion (Wilson 1927; Newcombe 1998, method 3).
* Newcombe's hybrid score interval for the difference of two independent proportions (Newcombe 1998,
  "Interval estimation for the difference between independent proportions", method 10): built from the two
  Wilson intervals, no continuity correction.
* Two-sided two-proportion z-test with the pooled proportion; p = erfc(|z| / √2), where every cell of the
  2×2 table expects at least MIN_EXPECTED_COUNT under no difference (Cochran's rule for the normal
  approximation). Where a cell expects fewer, Fisher's exact test, two-sided: the probability, under the
  hypergeometric law of the table's margins, of every table no more probable than the one observed (as
  scipy.stats.fisher_exact sums it). 0/42 before against 1/4 after gives p = 0.0011 by the z-test and
  0.087 by the exact test: one event in four is no finding.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

from core.verdicts import Finding, finding

# The normal quantile of a two-sided 95% interval.
Z_95 = 1.959963984540054


class InvalidProportionError(ValueError):
    """A numerator or denominator that no proportion can have."""


class Interval(NamedTuple):
    low: float
    high: float

    @property
    def half_width(self) -> float:
        """Half the interval's width."""
        return (self.high - self.low) / 2


def _check(numerator: int, denominator: int) -> None:
    if not 0 <= numerator <= denominator:
        raise InvalidProportionError(f"need 0 ≤ numerator ≤ denominator, got {numerator}/{denominator}")


@dataclass(frozen=True)
class Proportion:
    numerator: int
    denominator: int

    def __post_init__(self) -> None:
        _check(self.numerator, self.denominator)

    @property
    def rate(self) -> float | None:
        """The rate, or None for a period without data (denominator 0): absent, never 0%."""
        if self.denominator == 0:
            return None
        return self.numerator / self.denominator

    @property
    def interval(self) -> Interval | None:
        """The Wilson 95% interval, or None for a period without data."""
        if self.denominator == 0:
            return None
        return wilson_interval(self.numerator, self.denominator)


def wilson_interval(numerator: int, denominator: int, z: float = Z_95) -> Interval:
    """The Wilson score interval of numerator/denominator; it needs a denominator of at least 1."""
    _check(numerator, denominator)
    if denominator == 0:
        raise InvalidProportionError("a proportion without data has no interval")
    low, high = wilson_bounds(numerator / denominator, denominator, z)
    # At 0/n and n/n the bound is exactly 0 or 1; floating point would leave a trace of the other side.
    return Interval(0.0 if numerator == 0 else low, 1.0 if numerator == denominator else high)


def wilson_bounds(p: float, n: float, z: float = Z_95) -> Interval:
    """The Wilson score interval of a rate p observed on n (n > 0, not necessarily whole), within 0..1."""
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z / (1 + z2 / n) * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
    return Interval(max(0.0, centre - half), min(1.0, centre + half))


def newcombe_interval(before: Proportion, after: Proportion, z: float = Z_95) -> Interval:
    """The interval of after − before by Newcombe's hybrid score method from the two Wilson intervals."""
    if before.denominator == 0 or after.denominator == 0:
        raise InvalidProportionError("a difference needs data on both sides")
    p1, p2 = after.numerator / after.denominator, before.numerator / before.denominator
    low1, high1 = wilson_interval(after.numerator, after.denominator, z)
    low2, high2 = wilson_interval(before.numerator, before.denominator, z)
    difference = p1 - p2
    below = math.sqrt((p1 - low1) ** 2 + (high2 - p2) ** 2)
    above = math.sqrt((high1 - p1) ** 2 + (p2 - low2) ** 2)
    return Interval(difference - below, difference + above)


# Cochran (1954): the z-test's normal approximation holds where every cell expects at least this many.
MIN_EXPECTED_COUNT = 5
# Tables whose probability equals the observed one's within this relative margin count as no more probable.
_SAME_PROBABILITY = 1 + 1e-7


def p_value(before: Proportion, after: Proportion) -> float:
    """The two-sided p-value of the difference: the pooled z-test (z_test_p_value) where every cell of the
    2×2 table expects at least MIN_EXPECTED_COUNT, else Fisher's exact test (fisher_exact_p_value)."""
    if is_exact(before, after):
        return fisher_exact_p_value(before, after)
    return z_test_p_value(before, after)


def is_exact(before: Proportion, after: Proportion) -> bool:
    """Whether p_value is Fisher's exact test's: a cell of the table expects fewer than MIN_EXPECTED_COUNT."""
    if before.denominator == 0 or after.denominator == 0:
        raise InvalidProportionError("a test needs data on both sides")
    total = before.denominator + after.denominator
    events = before.numerator + after.numerator
    smallest = min(events, total - events) * min(before.denominator, after.denominator) / total
    return smallest < MIN_EXPECTED_COUNT


def method_name(before: Proportion, after: Proportion) -> str:
    """The test p_value used, as a report names it."""
    return "Fisher's exact test" if is_exact(before, after) else "two-proportion z-test"


def fisher_exact_p_value(before: Proportion, after: Proportion) -> float:
    """The two-sided p-value of Fisher's exact test of the table (events, non-events) × (after, before)."""
    if before.denominator == 0 or after.denominator == 0:
        raise InvalidProportionError("a test needs data on both sides")
    total = before.denominator + after.denominator
    events = before.numerator + after.numerator
    drawn = after.denominator

    def log_probability(k: int) -> float:  # k events of `events` among the `drawn` after-side runs
        return _log_choose(events, k) + _log_choose(total - events, drawn - k) - _log_choose(total, drawn)

    observed = log_probability(after.numerator)
    low, high = max(0, drawn - (total - events)), min(events, drawn)
    threshold = observed + math.log(_SAME_PROBABILITY)
    p = sum(math.exp(logged) for k in range(low, high + 1) if (logged := log_probability(k)) <= threshold)
    return min(p, 1.0)


def _log_choose(n: int, k: int) -> float:
    return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)


def z_test_p_value(before: Proportion, after: Proportion) -> float:
    """The two-sided p-value of the pooled two-proportion z-test; 1.0 when both sides are all 0 or all 1."""
    if before.denominator == 0 or after.denominator == 0:
        raise InvalidProportionError("a test needs data on both sides")
    n1, n2 = after.denominator, before.denominator
    pooled = (after.numerator + before.numerator) / (n1 + n2)
    variance = pooled * (1 - pooled) * (1 / n1 + 1 / n2)
    if variance == 0:
        return 1.0
    z = (after.numerator / n1 - before.numerator / n2) / math.sqrt(variance)
    return math.erfc(abs(z) / math.sqrt(2))


@dataclass(frozen=True)
class Comparison:
    before: Proportion
    after: Proportion
    before_interval: Interval | None
    after_interval: Interval | None
    difference: float | None  # after − before; None when a side has no data
    difference_interval: Interval | None
    p_value: float | None
    finding: Finding  # core.verdicts' rule

    @property
    def significant(self) -> bool:
        """p < 0.05 (core.verdicts)."""
        return self.finding is Finding.SIGNIFICANT

    @property
    def too_few_to_tell(self) -> bool:
        """Not significant, and the interval reaches past ±5 points or a side has no data (core.verdicts)."""
        return self.finding is Finding.TOO_FEW_TO_TELL

    @property
    def before_rate(self) -> float | None:
        """The rate before, None without data."""
        return self.before.rate

    @property
    def after_rate(self) -> float | None:
        """The rate after, None without data."""
        return self.after.rate


def compare(before: Proportion, after: Proportion) -> Comparison:
    """Both rates with their Wilson intervals, after − before with Newcombe's interval and the z-test's p,
    and core.verdicts' finding: significant at p < 0.05, else no difference within ±5 points, else too few
    to tell."""
    if before.rate is None or after.rate is None:
        return Comparison(
            before=before,
            after=after,
            before_interval=before.interval,
            after_interval=after.interval,
            difference=None,
            difference_interval=None,
            p_value=None,
            finding=finding(None, None),
        )
    difference_interval = newcombe_interval(before, after)
    p = p_value(before, after)
    return Comparison(
        before=before,
        after=after,
        before_interval=before.interval,
        after_interval=after.interval,
        difference=after.rate - before.rate,
        difference_interval=difference_interval,
        p_value=p,
        finding=finding(difference_interval, p),
    )
