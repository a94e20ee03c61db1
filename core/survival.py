"""How long AI text stays untouched: Kaplan–Meier, its 95% band, the median, and the log-rank test.

003_…, "Revisit when", asks whether EDITED is high because editors correct the text at review time or
because they change the page days later. The answer is a survival curve of the AI writes: the share still
untouched t seconds after the write. A write's time is the first human change of its record inside the
window; a write nothing changed is censored at the window's end (it survived at least that long).

The input is a tally per distinct time — writes changed then (`events`) and writes censored then — as
adapters/survival.py counts them in the database. Methods:

* Kaplan–Meier: S(t) = Π over event times tᵢ ≤ t of (1 − dᵢ / nᵢ), nᵢ the writes at risk just before tᵢ
  (time ≥ tᵢ); at a time holding both, events come before censorings.
* The 95% band: Greenwood's variance, Σ dᵢ / (nᵢ (nᵢ − dᵢ)), on the log(−log S) scale (the "exponential
  Greenwood" band, Kalbfleisch and Prentice), as lifelines computes it: it stays inside 0..1, where the plain
  band S ± z·S·√Σ does not near 0 and 1.
* The median: the first time at which S(t) ≤ 0.5; not reached when S stays above it.
* The log-rank test of two curves: at every event time, the events the first group has against what it
  would have if both curves were one, (O − E)² / V with V the hypergeometric variance; χ² with 1 degree of
  freedom, p = erfc(√(χ² / 2)).
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property
from itertools import pairwise

from core.rates import Z_95, Interval

MEDIAN = 0.5
# Past this exponent exp() overflows a float; the bound it gives is 0 by then.
_MAX_EXPONENT = 700.0


class InvalidTallyError(ValueError):
    """A tally no set of writes can have."""


@dataclass(frozen=True)
class Tally:
    """The writes of one distinct time (seconds after the write): changed then, and censored then."""

    time: int
    events: int
    censored: int

    def __post_init__(self) -> None:
        if self.time < 0 or self.events < 0 or self.censored < 0:
            raise InvalidTallyError(f"a tally has a time and counts of at least 0, got {self}")


@dataclass(frozen=True)
class Step:
    """The curve at one distinct time, after its events."""

    time: int
    at_risk: int  # writes whose time is at or after this one (just before it)
    events: int
    censored: int
    survival: float
    band: Interval


@dataclass(frozen=True)
class Curve:
    """A Kaplan–Meier curve as columns, one entry per distinct time (oldest first), and the writes it starts
    with.

    Columns, not a Step object per time: a curve of 1,000,000 runs has some 140,000 distinct times and is read
    at a few hundred points (the chart's hours, the marks), so the band is computed at the points read rather
    than at every time, and nothing per time is built that the reader does not ask for (`steps`)."""

    times: tuple[int, ...]
    at_risk: tuple[int, ...]  # per time: the writes whose time is at or after it (just before it)
    changed: tuple[int, ...]  # per time: the writes changed then (the events)
    kept: tuple[int, ...]  # per time: the writes censored then
    survival: tuple[float, ...]  # per time: S after its events
    greenwood: tuple[float, ...]  # per time: Greenwood's sum Σ d / (n (n − d)) up to it
    writes: int
    z: float = Z_95

    @property
    def events(self) -> int:
        """The writes a human changed inside the window."""
        return sum(self.changed)

    @property
    def censored(self) -> int:
        """The writes nothing changed inside the window."""
        return sum(self.kept)

    @cached_property
    def steps(self) -> tuple[Step, ...]:
        """Every distinct time as a Step with its band, built when asked for (a chart never needs them)."""
        return tuple(
            Step(time, at_risk, events, censored, survival, log_log_band(survival, greenwood, self.z))
            for time, at_risk, events, censored, survival, greenwood in zip(
                self.times, self.at_risk, self.changed, self.kept, self.survival, self.greenwood, strict=True
            )
        )

    def _last_at(self, t: float) -> int:
        """The index of the last time at or before t; -1 before the first."""
        # A chart reads a curve of a hundred thousand times at a few hundred points: found by bisection.
        return bisect_right(self.times, t) - 1

    def survival_at(self, t: float) -> float:
        """S(t): the share still untouched at t (1 before the first change)."""
        index = self._last_at(t)
        return 1.0 if index < 0 else self.survival[index]

    def band_at(self, t: float) -> Interval:
        """The 95% band at t ([1, 1] before the first change)."""
        index = self._last_at(t)
        if index < 0:
            return Interval(1.0, 1.0)
        return log_log_band(self.survival[index], self.greenwood[index], self.z)

    def at_risk_at(self, t: float) -> int:
        """The writes still untouched and observed at t: their time is t or later."""
        first = bisect_left(self.times, t)
        return self.at_risk[first] if first < len(self.times) else 0

    @cached_property
    def median(self) -> int | None:
        """The first time at which S(t) ≤ 0.5; None when the curve never gets that low."""
        return next((time for time, s in zip(self.times, self.survival, strict=True) if s <= MEDIAN), None)


def merged(tallies: Iterable[Tally]) -> tuple[Tally, ...]:
    """The tallies summed per distinct time, in time order."""
    given = tuple(tallies)
    if all(earlier.time < later.time for earlier, later in pairwise(given)):
        return given  # one per distinct time already, in time order: as the database hands them over
    by_time: dict[int, tuple[int, int]] = {}
    for tally in given:
        events, censored = by_time.get(tally.time, (0, 0))
        by_time[tally.time] = (events + tally.events, censored + tally.censored)
    return tuple(Tally(time, events, censored) for time, (events, censored) in sorted(by_time.items()))


def kaplan_meier(tallies: Iterable[Tally], z: float = Z_95) -> Curve:
    """The Kaplan–Meier curve of the tallies with Greenwood's log-log 95% band."""
    ordered = [tally for tally in merged(tallies) if tally.events or tally.censored]
    writes = sum(tally.events + tally.censored for tally in ordered)
    at_risk = writes
    survival = 1.0
    greenwood = 0.0
    risks, survivals, sums = [], [], []
    for tally in ordered:
        events = tally.events
        if events:
            survival *= 1 - events / at_risk
            if at_risk > events:  # at d = n the curve is 0 and its band is [0, 0] whatever the sum
                greenwood += events / (at_risk * (at_risk - events))
        risks.append(at_risk)
        survivals.append(survival)
        sums.append(greenwood)
        at_risk -= events + tally.censored
    return Curve(
        times=tuple(tally.time for tally in ordered),
        at_risk=tuple(risks),
        changed=tuple(tally.events for tally in ordered),
        kept=tuple(tally.censored for tally in ordered),
        survival=tuple(survivals),
        greenwood=tuple(sums),
        writes=writes,
        z=z,
    )


def log_log_band(survival: float, greenwood: float, z: float = Z_95) -> Interval:
    """The 95% band of S on the log(−log S) scale from Greenwood's sum Σ d / (n (n − d)).

    [1, 1] at S = 1 and [0, 0] at S = 0, where the scale has no room."""
    if survival >= 1.0:
        return Interval(1.0, 1.0)
    if survival <= 0.0:
        return Interval(0.0, 0.0)
    log_s = math.log(survival)  # < 0
    spread = z * math.sqrt(greenwood) / log_s  # ≤ 0
    centre = math.log(-log_s)
    return Interval(_exp_minus_exp(centre - spread), _exp_minus_exp(centre + spread))


def _exp_minus_exp(value: float) -> float:
    return 0.0 if value > _MAX_EXPONENT else math.exp(-math.exp(value))


@dataclass(frozen=True)
class LogRank:
    """The log-rank test of two curves: observed and expected events of each, χ² (1 df) and p."""

    observed: tuple[int, int]
    expected: tuple[float, float]
    chi_square: float
    p_value: float


def log_rank(first: Sequence[Tally], second: Sequence[Tally]) -> LogRank:
    """Whether two curves differ: Σ(O₁ − E₁)² / ΣV over the event times of both, χ² with 1 df."""
    a, b = merged(first), merged(second)
    at_risk_a, at_risk_b = sum(t.events + t.censored for t in a), sum(t.events + t.censored for t in b)
    observed_a = observed_b = 0
    expected_a = expected_b = 0.0
    variance = 0.0
    for events_a, censored_a, events_b, censored_b in _side_by_side(a, b):
        events = events_a + events_b
        total = at_risk_a + at_risk_b
        if events:
            observed_a += events_a
            expected_a += events * at_risk_a / total
            observed_b += events_b
            expected_b += events * at_risk_b / total
            if total > 1:
                variance += at_risk_a * at_risk_b * events * (total - events) / (total * total * (total - 1))
        at_risk_a -= events_a + censored_a
        at_risk_b -= events_b + censored_b
    chi_square = 0.0 if variance == 0 else (observed_a - expected_a) ** 2 / variance
    return LogRank(
        observed=(observed_a, observed_b),
        expected=(expected_a, expected_b),
        chi_square=chi_square,
        p_value=math.erfc(math.sqrt(chi_square / 2)),
    )


def _side_by_side(a: Sequence[Tally], b: Sequence[Tally]) -> Iterator[tuple[int, int, int, int]]:
    """Events and censorings of both curves (a's, then b's) at each distinct time of either, in time order,
    0 where a curve has no tally. Both are merged (one tally per time, in time order): one pass over each."""
    i = j = 0
    while i < len(a) and j < len(b):
        left, right = a[i], b[j]
        if left.time <= right.time:
            i += 1
        if right.time <= left.time:
            j += 1
        if left.time < right.time:
            yield left.events, left.censored, 0, 0
        elif right.time < left.time:
            yield 0, 0, right.events, right.censored
        else:
            yield left.events, left.censored, right.events, right.censored
    for left in a[i:]:
        yield left.events, left.censored, 0, 0
    for right in b[j:]:
        yield 0, 0, right.events, right.censored
