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
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from itertools import accumulate

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
    """A Kaplan–Meier curve: its steps, oldest first, and the writes it starts with."""

    steps: tuple[Step, ...]
    writes: int

    @property
    def events(self) -> int:
        """The writes a human changed inside the window."""
        return sum(step.events for step in self.steps)

    @property
    def censored(self) -> int:
        """The writes nothing changed inside the window."""
        return sum(step.censored for step in self.steps)

    @cached_property
    def _times(self) -> tuple[int, ...]:
        return tuple(step.time for step in self.steps)

    @cached_property
    def _left_by(self) -> tuple[int, ...]:
        """The writes changed or censored up to each step, that step included."""
        return tuple(accumulate(step.events + step.censored for step in self.steps))

    def _last_at(self, t: float) -> Step | None:
        # A chart reads a curve of a hundred thousand steps at a few hundred points: found by bisection.
        index = bisect_right(self._times, t)
        return self.steps[index - 1] if index else None

    def survival_at(self, t: float) -> float:
        """S(t): the share still untouched at t (1 before the first change)."""
        step = self._last_at(t)
        return 1.0 if step is None else step.survival

    def band_at(self, t: float) -> Interval:
        """The 95% band at t ([1, 1] before the first change)."""
        step = self._last_at(t)
        return Interval(1.0, 1.0) if step is None else step.band

    def at_risk_at(self, t: float) -> int:
        """The writes still untouched and observed at t: their time is t or later."""
        before = bisect_left(self._times, t)
        return self.writes - (self._left_by[before - 1] if before else 0)

    @property
    def median(self) -> int | None:
        """The first time at which S(t) ≤ 0.5; None when the curve never gets that low."""
        return next((step.time for step in self.steps if step.survival <= MEDIAN), None)


def merged(tallies: Iterable[Tally]) -> tuple[Tally, ...]:
    """The tallies summed per distinct time, in time order."""
    by_time: dict[int, tuple[int, int]] = {}
    for tally in tallies:
        events, censored = by_time.get(tally.time, (0, 0))
        by_time[tally.time] = (events + tally.events, censored + tally.censored)
    return tuple(Tally(time, events, censored) for time, (events, censored) in sorted(by_time.items()))


def kaplan_meier(tallies: Iterable[Tally], z: float = Z_95) -> Curve:
    """The Kaplan–Meier curve of the tallies with Greenwood's log-log 95% band."""
    ordered = [tally for tally in merged(tallies) if tally.events or tally.censored]
    at_risk = sum(tally.events + tally.censored for tally in ordered)
    writes = at_risk
    survival = 1.0
    greenwood = 0.0
    steps = []
    for tally in ordered:
        if tally.events:
            survival *= 1 - tally.events / at_risk
            if at_risk > tally.events:  # at d = n the curve is 0 and its band is [0, 0] whatever the sum
                greenwood += tally.events / (at_risk * (at_risk - tally.events))
        steps.append(
            Step(
                tally.time,
                at_risk,
                tally.events,
                tally.censored,
                survival,
                log_log_band(survival, greenwood, z),
            )
        )
        at_risk -= tally.events + tally.censored
    return Curve(tuple(steps), writes)


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
    at_risk = [sum(t.events + t.censored for t in a), sum(t.events + t.censored for t in b)]
    tallies = {0: {t.time: t for t in a}, 1: {t.time: t for t in b}}
    observed = [0, 0]
    expected = [0.0, 0.0]
    variance = 0.0
    for time in sorted(set(tallies[0]) | set(tallies[1])):
        here = [tallies[side].get(time, Tally(time, 0, 0)) for side in (0, 1)]
        events = here[0].events + here[1].events
        total = at_risk[0] + at_risk[1]
        if events:
            for side in (0, 1):
                observed[side] += here[side].events
                expected[side] += events * at_risk[side] / total
            if total > 1:
                variance += (
                    at_risk[0] * at_risk[1] * events * (total - events) / (total * total * (total - 1))
                )
        for side in (0, 1):
            at_risk[side] -= here[side].events + here[side].censored
    chi_square = 0.0 if variance == 0 else (observed[0] - expected[0]) ** 2 / variance
    return LogRank(
        observed=(observed[0], observed[1]),
        expected=(expected[0], expected[1]),
        chi_square=chi_square,
        p_value=math.erfc(math.sqrt(chi_square / 2)),
    )
