"""`runrecord survival`: how long AI text stays untouched, for all writes, a configuration, or two of them.

The counts come from adapters.survival (aggregated in the database), the curves and the log-rank test from
core.survival_report, the lines and the JSON from core.survival_text.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import Engine

from adapters import survival
from adapters.database import RunrecordError, reported
from core.groups import ALL_RUNS, Group
from core.survival_report import SurvivalReport, survival_report
from jobs.between import unknown_group


def survival_of(engine: Engine, groups: Sequence[Group] = (ALL_RUNS,), *, window_s: int) -> SurvivalReport:
    """The curves of the groups (all runs or configurations); the log-rank test for two of them."""
    with reported(engine, "reading the write outcomes"), engine.connect() as connection:
        if not survival.has_derived_writes(connection):
            raise RunrecordError("no derived write outcomes yet: run `runrecord derive-outcomes` first")
        known = survival.configurations(connection)
        for group in groups:
            if group != ALL_RUNS and group.value not in known:
                raise unknown_group(group, known, "the derived runs")
        counted = [survival.group_tallies(connection, group, window_s=window_s) for group in groups]
    return survival_report(counted, window_s=window_s)
