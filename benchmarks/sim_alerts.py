"""How often alerts fire: false alarms a year on a quiet installation, and how soon a planted move is seen.

Run: python -m benchmarks.sim_alerts [--seeds 100] [--sizes 30,100,300] [--move 0.15] [--processes 2]

What it simulates, and at which level: the stored figures the alert check reads (tx_runrecord_rate's
numerator, denominator and runs per metric, week and group), drawn per day for a generated installation, and
then every night's measurement exactly as jobs.alerts runs it — the real core.alerts.checks,
core.alerts.compared and core.alerts.alerts (the verdict of core.verdicts and the Benjamini–Hochberg
correction of core.multiple_testing over all the night's comparisons, of closed weeks only), the first open
week from core.periods.open_from with the default 7-day window, and each alert written once per move as
tx_runrecord_alert's unique key does. It does not write conversations and run the jobs (a year
of nightly measurements would take hours); the figures are what measure-rates would store for them.

The installation: `size` runs a week (Poisson per day), two configurations taking two thirds and one third,
no skill (so "skill none" holds all runs, as on an installation without skills); two rates, EDITED at 30%
and nothingSaved at 10%, each run in both denominators. No release marker: only the trend checks run.

(a) quiet: a year (365 nightly measurements, after five weeks of history) with no change; the alerts
    written in that year.
(b) moved: from a Monday on, EDITED of the larger configuration rises by `move` (default +15 points) and
    stays there. "In the week of the move" is an alert on that rate and configuration whose compared week is
    the week of the move; otherwise the weeks from the move's week to the first alerted week (within ten
    weeks; "missed" when none).
Each table row also gives the figures without the correction (every comparison alone at p < 0.05).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from datetime import date, timedelta

import numpy as np

from core.alerts import ALERT_GRAIN, Alert, alerts, checks, compared
from core.counting import Count
from core.groups import ALL_RUNS, Group, GroupKind
from core.metrics import Metric
from core.periods import Grain, open_from, period_start, unix_of
from core.time import DAY_S
from core.two_sided import Figures

WINDOW_S = 7 * DAY_S  # RUNRECORD_WINDOW_DAYS' default
START = date(2026, 1, 5)  # a Monday: the first day of history
HISTORY_WEEKS = 5  # the trend needs four weeks before the newest; one more for the window's lag
YEAR_DAYS = 365
MOVE_WEEK = 20  # (b): the move starts on the Monday of this week of the measured year
FOLLOW_WEEKS = 10  # (b): how long after the move's week an alert is looked for
MEASURED_AT_S = 3600  # each night's measurement runs at 01:00 UTC
SHARES = {"content-assistant": 2 / 3, "seo-assistant": 1 / 3}
MOVED_CONFIGURATION = "content-assistant"
RATES = {Metric.EDITED_RATE: 0.30, Metric.NOTHING_SAVED_RATE: 0.10}
METRICS = tuple(RATES)


@dataclass(frozen=True)
class Outcome:
    false_alerts: int  # (a): alerts written in the year
    weeks_alerted: int  # (a): the weeks with at least one of them
    false_alerts_uncorrected: int
    weeks_late: int | None  # (b): 0 = the week of the move; None = missed within FOLLOW_WEEKS
    weeks_late_uncorrected: int | None


def _days(total: int) -> list[date]:
    return [START + timedelta(days=k) for k in range(total)]


def draw(
    size: int, seed: int, move: float | None, total_days: int
) -> dict[str, dict[date, dict[Metric, int]]]:
    """Per configuration and day: the runs, and each rate's numerator."""
    rng = np.random.default_rng(seed)
    moved_from = START + timedelta(weeks=HISTORY_WEEKS + MOVE_WEEK)
    found: dict[str, dict[date, dict[Metric, int]]] = {}
    for configuration, share in SHARES.items():
        per_day: dict[date, dict[Metric, int]] = {}
        for day in _days(total_days):
            runs = int(rng.poisson(size * share / 7))
            counts: dict[Metric, int] = {Metric.RUNS: runs}
            for metric, rate in RATES.items():
                if move is not None and configuration == MOVED_CONFIGURATION and metric is Metric.EDITED_RATE:
                    rate = rate + move if day >= moved_from else rate
                counts[metric] = int(rng.binomial(runs, rate))
            per_day[day] = counts
        found[configuration] = per_day
    return found


def stored(per_day: Mapping[str, Mapping[date, Mapping[Metric, int]]]) -> dict[Group, Figures]:
    """The figures measure-rates would store at the week grain: per group, metric and week (a week without
    runs has no row)."""
    groups = {
        ALL_RUNS: tuple(per_day),
        Group(GroupKind.SKILL, ""): tuple(per_day),
        **{Group(GroupKind.CONFIGURATION, name): (name,) for name in per_day},
    }
    by_group: dict[Group, Figures] = {}
    for group, members in groups.items():
        sums: dict[date, dict[Metric, int]] = {}
        for name in members:
            for day, counts in per_day[name].items():
                period = period_start(unix_of(day), ALERT_GRAIN)
                total = sums.setdefault(period, dict.fromkeys(counts, 0))
                for metric, value in counts.items():
                    total[metric] += value
        figures: dict[tuple[str, date], Count] = {}
        for period, counts in sums.items():
            runs = counts[Metric.RUNS]
            if runs == 0:
                continue
            figures[(Metric.RUNS.value, period)] = Count(runs, runs, 0)
            for metric in METRICS:
                figures[(metric.value, period)] = Count(counts[metric], runs, 0)
        by_group[group] = figures
    return by_group


def nightly(
    figures: Mapping[Group, Figures], nights: Sequence[date], last_run_end: int
) -> tuple[list[Alert], list[Alert]]:
    """Every night's measurement: the alerts written (each move once), corrected and uncorrected."""
    written: dict[tuple[object, ...], Alert] = {}
    alone: dict[tuple[object, ...], Alert] = {}
    for night in nights:
        now = unix_of(night) + MEASURED_AT_S
        # Runs are spread over each day; the earliest one ending at or after now − window opens its period.
        earliest = now - WINDOW_S if now - WINDOW_S <= last_run_end else None
        first_open = open_from(now, WINDOW_S, earliest, ALERT_GRAIN)
        measured = compared(checks(first_open, []), figures, first_open=first_open, metrics=METRICS)
        for alert in alerts(measured):
            written.setdefault(alert.key, alert)
        for comparison in measured:
            for alert in alerts([comparison]):
                alone.setdefault(alert.key, alert)
    return list(written.values()), list(alone.values())


def _weeks_late(found: Sequence[Alert], move_week: date) -> int | None:
    periods = [
        alert.at
        for alert in found
        if alert.metric == Metric.EDITED_RATE.value
        and alert.group == Group(GroupKind.CONFIGURATION, MOVED_CONFIGURATION)
        and alert.difference > 0
        and alert.at >= move_week
    ]
    if not periods:
        return None
    late = (period_start(unix_of(min(periods)), Grain.WEEK) - move_week).days // 7
    return late if late <= FOLLOW_WEEKS else None


def simulate(size: int, seed: int, move: float | None) -> Outcome:
    """One installation: (a) when `move` is None, else (b)."""
    history = HISTORY_WEEKS * 7
    if move is None:
        total = history + YEAR_DAYS
        per_day = draw(size, seed, None, total)
        nights = _days(total + 1)[history + 1 :]
        corrected, uncorrected = nightly(stored(per_day), nights, unix_of(_days(total)[-1]) + DAY_S - 1)
        weeks = len({alert.at for alert in corrected})
        return Outcome(len(corrected), weeks, len(uncorrected), None, None)
    move_week = START + timedelta(weeks=HISTORY_WEEKS + MOVE_WEEK)
    total = history + (MOVE_WEEK + FOLLOW_WEEKS + 3) * 7
    per_day = draw(size, seed, move, total)
    nights = [day for day in _days(total + 1) if day > move_week]
    corrected, uncorrected = nightly(stored(per_day), nights, unix_of(_days(total)[-1]) + DAY_S - 1)
    return Outcome(0, 0, 0, _weeks_late(corrected, move_week), _weeks_late(uncorrected, move_week))


def _job(arguments: tuple[int, int, float | None]) -> Outcome:
    return simulate(*arguments)


def _late_text(values: Sequence[int | None]) -> str:
    seen = [value for value in values if value is not None]
    at_once = sum(1 for value in seen if value == 0)
    later = [value for value in seen if value > 0]
    missed = len(values) - len(seen)
    median = f"median {statistics.median(later):g} weeks" if later else "none"
    share = len(values)
    return f"{at_once / share:.0%} | {len(later) / share:.0%} ({median}) | {missed / share:.0%}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=100)
    parser.add_argument("--sizes", default="30,100,300", help="runs a week, comma-separated")
    parser.add_argument("--move", type=float, default=0.15, help="the planted move of (b), as a share")
    parser.add_argument("--processes", type=int, default=2)
    options = parser.parse_args()
    sizes = [int(size) for size in options.sizes.split(",")]
    started = time.perf_counter()
    with ProcessPoolExecutor(max_workers=options.processes) as pool:
        quiet = {
            size: list(pool.map(_job, [(size, seed, None) for seed in range(options.seeds)], chunksize=8))
            for size in sizes
        }
        moved = {
            size: list(
                pool.map(
                    _job, [(size, 10_000 + seed, options.move) for seed in range(options.seeds)], chunksize=8
                )
            )
            for size in sizes
        }
    print(f"(a) a year of nightly measurements with no change, {options.seeds} seeds a size")
    print("| runs a week | alerts a year, mean | weeks with one | years with none | without the correction |")
    print("| --- | --- | --- | --- | --- |")
    for size in sizes:
        found = [outcome.false_alerts for outcome in quiet[size]]
        weeks = [outcome.weeks_alerted for outcome in quiet[size]]
        alone = [outcome.false_alerts_uncorrected for outcome in quiet[size]]
        none = sum(1 for value in found if value == 0) / len(found)
        print(
            f"| {size} | {statistics.mean(found):.1f} | {statistics.mean(weeks):.1f} | {none:.0%} | "
            f"{statistics.mean(alone):.1f} |"
        )
    print()
    moved_by = f"+{options.move * 100:g} points from a Monday"
    print(f"(b) EDITED of {MOVED_CONFIGURATION} (two thirds of the runs) {moved_by}")
    print(
        "| runs a week | in the week of the move | later | missed (10 weeks) | without the correction: same |"
    )
    print("| --- | --- | --- | --- | --- |")
    for size in sizes:
        corrected = _late_text([outcome.weeks_late for outcome in moved[size]])
        uncorrected = _late_text([outcome.weeks_late_uncorrected for outcome in moved[size]])
        print(f"| {size} | {corrected} | {uncorrected.replace(' | ', ' / ')} |")
    print(f"\n{time.perf_counter() - started:.0f} s on {options.processes} processes")


if __name__ == "__main__":
    main()
