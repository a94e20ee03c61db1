"""How many more runs two sides need before a difference of 5 points between them can be told apart.

The "too few to tell" rule (core.rates) asks for a 95% interval of the difference no wider than ±5 points.
With the rates held at what was observed, p₁ and p₂, and n runs on each side, the half-width of the
difference's interval is, by Wald,

    h(n) = z · √((p₁(1 − p₁) + p₂(1 − p₂)) / n)

so h(n) ≤ d once n ≥ z² · (p₁(1 − p₁) + p₂(1 − p₂)) / d². compare's interval is Newcombe's, which is wider
than Wald's near 0% and 100% (at p₁ = p₂ = 0 Wald's is empty): the n is raised until Newcombe's interval at
the observed rates is that narrow too, so that a side with the n it is told it needs is never "too few to
tell" for want of runs. Each side needs n minus what it has; at its current weekly volume that is a number
of weeks.
"""

from __future__ import annotations

import math

from core.rates import Z_95, InvalidProportionError, wilson_bounds
from core.verdicts import MIN_DETECTABLE_DIFFERENCE

# Newcombe's half-width shrinks as n grows, so a doubling search finds an n that is narrow enough within a
# few dozen steps; this bound only stops a search on rates no proportion can have.
MAX_RUNS_PER_SIDE = 10**9


def wald_runs_per_side(p1: float, p2: float, *, difference: float = MIN_DETECTABLE_DIFFERENCE) -> int:
    """Wald's n per side: ⌈z² (p₁(1 − p₁) + p₂(1 − p₂)) / d²⌉, at least 1."""
    _check_rate(p1)
    _check_rate(p2)
    return max(1, math.ceil(Z_95 * Z_95 * (p1 * (1 - p1) + p2 * (1 - p2)) / (difference * difference)))


def newcombe_half_width(p1: float, p2: float, n: float) -> float:
    """The half-width of Newcombe's 95% interval of p₂ − p₁ with n runs on each side at these rates."""
    _check_rate(p1)
    _check_rate(p2)
    low1, high1 = wilson_bounds(p1, n)
    low2, high2 = wilson_bounds(p2, n)
    below = math.sqrt((p2 - low2) ** 2 + (high1 - p1) ** 2)
    above = math.sqrt((high2 - p2) ** 2 + (p1 - low1) ** 2)
    return (below + above) / 2


def runs_per_side(p1: float, p2: float, *, difference: float = MIN_DETECTABLE_DIFFERENCE) -> int:
    """The runs each side needs to tell `difference` apart at the observed rates: Wald's n, raised until
    Newcombe's half-width at n is no larger than `difference`."""
    low = wald_runs_per_side(p1, p2, difference=difference)
    if newcombe_half_width(p1, p2, low) <= difference:
        return low
    high = low
    while newcombe_half_width(p1, p2, high) > difference:
        low, high = high, high * 2
        if high > MAX_RUNS_PER_SIDE:
            raise InvalidProportionError(f"no n up to {MAX_RUNS_PER_SIDE} tells the rates {p1}, {p2} apart")
    while high - low > 1:  # newcombe_half_width(low) > difference >= newcombe_half_width(high)
        middle = (low + high) // 2
        if newcombe_half_width(p1, p2, middle) <= difference:
            high = middle
        else:
            low = middle
    return high


def more_needed(have: int, per_side: int) -> int:
    """The runs a side still needs: what it lacks of `per_side`, never fewer than none."""
    return max(0, per_side - have)


def weeks_needed(more: int, weekly: int) -> int | None:
    """Whole weeks until a side with `weekly` runs a week has `more` runs; None when it gets none a week."""
    if more == 0:
        return 0
    if weekly <= 0:
        return None
    return math.ceil(more / weekly)


def _check_rate(p: float) -> None:
    if not 0.0 <= p <= 1.0:
        raise InvalidProportionError(f"a rate is within 0..1, got {p}")
