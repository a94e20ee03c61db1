"""`runrecord compare METRIC --between configuration:A configuration:B`: one configuration against another.

Like compare --at it reads the stored rates (tx_runrecord_rate, group_kind configuration) rather than
recomputing; the periods are core.between's, the sums, verdict and runs still needed core.two_sided's,
and the lines and the JSON core.two_sided_text's (framed by core.between_text), the same as compare --at's.
"""

from __future__ import annotations

from datetime import date

from sqlalchemy import Engine

from adapters import measure_marks, rates
from adapters.database import RunrecordError, reported
from core.between import BetweenReport, between_report, common_periods
from core.groups import Group, GroupKind
from core.metrics import Metric
from core.periods import Grain
from core.two_sided import metrics_read


def unknown_group(group: Group, known: list[str], where: str) -> RunrecordError:
    """The error for a configuration or skill the stored figures do not hold, naming those they do."""
    listed = ", ".join(Group(group.kind, name).label for name in known) or "none yet"
    shown = group.label.partition(":")[2]
    return RunrecordError(f"no {group.kind.value} {shown!r} in {where}; there are: {listed}")


def compare_between(
    engine: Engine,
    metric: Metric,
    groups: tuple[Group, Group],
    *,
    grain: Grain = Grain.WEEK,
    start: date | None = None,
    end: date | None = None,
    now: int,
) -> BetweenReport:
    """The metric of the second configuration against the first over every closed period both have."""
    if start is not None and end is not None and end < start:
        raise RunrecordError(f"--to {end.isoformat()} is before --from {start.isoformat()}")
    with reported(engine, "reading the rates"), engine.connect() as connection:
        if grain.value not in rates.measured_grains(connection):
            raise RunrecordError(
                f"no rates at grain {grain.value} yet: run `runrecord measure-rates --grain {grain.value}`"
            )
        known = rates.group_values(connection, grain, GroupKind.CONFIGURATION.value)
        for group in groups:
            if group.value not in known:
                raise unknown_group(group, known, f"the rates at grain {grain.value}")
        stored = sorted(rates.stored_periods(connection, grain))
        first, second = (
            rates.rate_figures(connection, grain, metrics_read(metric), group, stored) for group in groups
        )
        first_open = measure_marks.first_open(connection, grain, now=now)
    periods = common_periods(metric, grain, first, second, first_open=first_open, start=start, end=end)
    if not periods:
        bounded = "" if start is None and end is None else " between --from and --to"
        raise RunrecordError(
            f"{groups[0].label} and {groups[1].label} have no closed {grain.value} of {metric.value}"
            f"{bounded} in common"
        )
    return between_report(metric, grain, groups, periods, (first, second), first_open=first_open)
