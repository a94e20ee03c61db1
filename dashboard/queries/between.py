"""The Rates page's configuration against configuration: `runrecord compare METRIC --between A B`.

The same stored figures (adapters.rates, group_kind configuration), periods (core.between), sums, verdict and
runs still needed (core.two_sided) as the command, over every closed period both configurations have.
"""

from __future__ import annotations

import os
from datetime import date

from sqlalchemy import Engine

from adapters import measure_marks
from adapters import rates as stored_rates
from adapters.database import reported
from core.between import BetweenReport, between_report, common_periods
from core.groups import Group, GroupKind
from core.metrics import Metric
from core.periods import Grain
from core.two_sided import metrics_read


def configurations(engine: Engine, grain: str) -> list[tuple[str, date]]:
    """The configurations the rates hold at a grain, each with its first period, by name."""
    period = Grain(grain)
    with reported(engine, "reading the configurations"), engine.connect() as connection:
        names = stored_rates.group_values(connection, period, GroupKind.CONFIGURATION.value)
        stored = sorted(stored_rates.stored_periods(connection, period))
        found = []
        for name in names:
            group = Group(GroupKind.CONFIGURATION, name)
            figures = stored_rates.rate_figures(connection, period, (Metric.RUNS,), group, stored)
            found.append((name, min(p for _, p in figures) if figures else date.max))
    return found


def suggested_pair(configurations: list[tuple[str, date]]) -> tuple[str, str] | None:
    """The pair to compare first: the newest configuration (a canary starts last) against the one its name
    shares the longest beginning with (a canary is named after its stable configuration)."""
    if len(configurations) < 2:
        return None
    newest = max(configurations, key=lambda found: (found[1], found[0]))[0]
    others = sorted(name for name, _ in configurations if name != newest)
    stable = max(others, key=lambda name: len(os.path.commonprefix([name, newest])))
    return stable, newest


def between(
    engine: Engine, metric: str, grain: str, first: str, second: str, *, now: int
) -> BetweenReport | None:
    """The second configuration against the first over the closed periods both have; None when there are
    none."""
    chosen, period = Metric(metric), Grain(grain)
    groups = (Group(GroupKind.CONFIGURATION, first), Group(GroupKind.CONFIGURATION, second))
    with reported(engine, "reading the rates"), engine.connect() as connection:
        stored = sorted(stored_rates.stored_periods(connection, period))
        figures = tuple(
            stored_rates.rate_figures(connection, period, metrics_read(chosen), group, stored)
            for group in groups
        )
        first_open = measure_marks.first_open(connection, period, now=now)
    periods = common_periods(chosen, period, figures[0], figures[1], first_open=first_open)
    if not periods:
        return None
    return between_report(chosen, period, groups, periods, (figures[0], figures[1]), first_open=first_open)
