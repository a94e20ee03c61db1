"""The verdict of a difference between two rates: one rule for `compare --at`, `compare --between`, the Rates
page, the survival's log-rank wording (its significance) and the alerts.

* **significant** when the two-sided pooled two-proportion z-test (Fisher's exact test where a cell of the
  table expects fewer than core.rates.MIN_EXPECTED_COUNT) gives p < ALPHA, however wide the
  difference's interval: a rise of 20 points whose interval runs from +10 to +30 is a rise, not "too few to
  tell";
* **no difference of 5 points or more** when it is not significant and Newcombe's 95% interval of the
  difference lies within ±MIN_DETECTABLE_DIFFERENCE;
* **too few to tell** when it is not significant and the interval reaches further (or a side has no data).

The test decides. The z-test and Newcombe's hybrid score interval are two methods, and at the edge they can
disagree by a hair: p just under 0.05 with an interval that touches zero (the demo's `notice_agreement`,
p = 0.046, interval −0.0 to +3.7 points), or p just over it with an interval clear of zero. The verdict then
follows p, on every path, because every path asks this module; the interval is shown beside it as the size
of the move, never as a second test. A not significant difference whose interval does not contain zero is
"no difference of 5 points or more" when it lies within ±5 points and "too few to tell" otherwise, so the
two never contradict each other in the words: a verdict never says "significant" while p ≥ 0.05, and never
says "no difference" of an interval that reaches 5 points.
"""

from __future__ import annotations

from enum import StrEnum

from core.metrics import Better

# The significance level: two-sided, per comparison (the alerts correct a measurement's comparisons
# together, core.multiple_testing).
ALPHA = 0.05

# "No difference of 5 points or more" needs the difference's 95% interval within ±5 points: a change of the
# EDITED or nothingSaved rate smaller than that is not one the product team acts on.
MIN_DETECTABLE_DIFFERENCE = 0.05

RULE = (
    "significant when the two-sided two-proportion z-test gives p < 0.05 (Fisher's exact test where a cell "
    "of the 2×2 table expects fewer than 5; the test decides; the 95% "
    "interval of the difference (Newcombe) is its size); otherwise no difference of "
    f"{MIN_DETECTABLE_DIFFERENCE * 100:g} points or more when that interval lies within "
    f"±{MIN_DETECTABLE_DIFFERENCE * 100:g} points, else too few to tell"
)


class Finding(StrEnum):
    SIGNIFICANT = "significant"
    NO_DIFFERENCE = f"no difference of {MIN_DETECTABLE_DIFFERENCE * 100:g} points or more"
    TOO_FEW_TO_TELL = "too few to tell"


def is_significant(p_value: float | None) -> bool:
    """Significant: a two-sided p below ALPHA; no p (a side without data) is never significant."""
    return p_value is not None and p_value < ALPHA


def within_detectable(low: float, high: float) -> bool:
    """The interval lies within ±MIN_DETECTABLE_DIFFERENCE (bounds included)."""
    return low >= -MIN_DETECTABLE_DIFFERENCE and high <= MIN_DETECTABLE_DIFFERENCE


def finding(interval: tuple[float, float] | None, p_value: float | None) -> Finding:
    """Significant when p < ALPHA; else no difference when the interval lies within ±5 points; else too few to
    tell (also without data: no interval, no p)."""
    if is_significant(p_value):
        return Finding.SIGNIFICANT
    if interval is not None and within_detectable(*interval):
        return Finding.NO_DIFFERENCE
    return Finding.TOO_FEW_TO_TELL


# How a significant move reads, by the kind of comparison: a rate over time, or one group against another.
ROSE, FELL = "rose significantly", "fell significantly"
HIGHER, LOWER = "significantly higher", "significantly lower"


def judged(better: Better, difference: float) -> str | None:
    """A move's worth for its metric: "better" when it goes the way the metric should, "worse" the other
    way, None for a metric that moves neither way by itself (or no move)."""
    if better is Better.NEITHER or difference == 0:
        return None
    return "better" if (difference > 0) == (better is Better.HIGHER) else "worse"


def worded(
    found: Finding,
    difference: float | None,
    *,
    rise: str,
    drop: str,
    better: Better = Better.NEITHER,
) -> str:
    """The finding in a report's words: `rise` or `drop` for a significant one, followed by ": better" or
    ": worse" when the metric says which way is good; else the finding itself."""
    if found is not Finding.SIGNIFICANT:
        return found.value
    moved = drop if (difference or 0.0) < 0 else rise
    worth = judged(better, difference or 0.0)
    return moved if worth is None else f"{moved}: {worth}"


def is_move(verdict: str) -> bool:
    """Whether a verdict's words are a significant move (and so never "too few" or "no difference")."""
    return verdict.startswith((ROSE, FELL, HIGHER, LOWER))


def is_worse(verdict: str) -> bool:
    """Whether a verdict's words call the move worse."""
    return verdict.endswith(": worse")


def headline(label: str, verdict: str) -> str:
    """A verdict with its metric: "EDITED rose significantly: worse", "EDITED: too few to tell"."""
    return f"{label} {verdict}" if is_move(verdict) else f"{label}: {verdict}"
