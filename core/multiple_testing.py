"""The comparisons one measurement makes, corrected together: Benjamini–Hochberg at q = FALSE_DISCOVERY_RATE.

One measurement compares every rate, for all runs and every configuration and skill, in the newest closed week
and across every recent release: dozens of tests. At p < 0.05 each, an installation where nothing moved would
see a false alert most weeks. Benjamini and Hochberg (1995): sort the m p-values, p₍₁₎ ≤ … ≤ p₍ₘ₎, find the
largest k with p₍ₖ₎ ≤ k·q / m, and reject the k smallest. When nothing moved, every rejection is false and the
chance of any is at most q (the procedure then controls the family-wise error, as Holm's does); when something
moved, at most a share q of the alerts raised is expected to be false.

Why Benjamini–Hochberg and not Holm: a real move seldom moves one comparison alone. A configuration that
changes moves its own rate, all runs, its skill, the week's trend and the release's before/after at once;
BH lets those p-values carry each other (the k-th smallest is held to k·q/m, not q/(m − k + 1)), where Holm
would demand p ≤ q/m of the first and lose the moves an installation of a hundred runs a week can show. The
false alarms of a quiet installation, which the budget is about, are bounded alike by both. The tests are
not independent (all runs holds every configuration's runs), but they are positively dependent, under which
BH keeps its bound (Benjamini and Yekutieli 2001).
"""

from __future__ import annotations

from collections.abc import Sequence

# The false-discovery rate a measurement's alerts are held to.
FALSE_DISCOVERY_RATE = 0.05


def adjusted_p_values(p_values: Sequence[float]) -> tuple[float, ...]:
    """Benjamini–Hochberg adjusted p-values, in the given order: the least p₍ⱼ₎·m/j over j ≥ rank, ≤ 1."""
    m = len(p_values)
    order = sorted(range(m), key=lambda index: p_values[index])
    adjusted = [0.0] * m
    running = 1.0
    for rank in range(m, 0, -1):
        index = order[rank - 1]
        running = min(running, p_values[index] * m / rank)
        adjusted[index] = running
    return tuple(adjusted)


def rejected(p_values: Sequence[float], q: float = FALSE_DISCOVERY_RATE) -> tuple[bool, ...]:
    """Which of the p-values Benjamini–Hochberg rejects at q, in the given order: the k smallest, k the
    largest rank with p₍ₖ₎ ≤ k·q / m (none when there is no such rank)."""
    m = len(p_values)
    order = sorted(range(m), key=lambda index: p_values[index])
    passing = [rank for rank in range(1, m + 1) if p_values[order[rank - 1]] <= rank * q / m]
    k = max(passing, default=0)
    chosen = set(order[:k])
    return tuple(index in chosen for index in range(m))
