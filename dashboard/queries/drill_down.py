"""Which runs a figure counts, as the Runs filter (?runs=) that an alert or a cell of a split opens.

A rate places a run in the period of its end and in its groups (configuration, skill); the filter names that
period (`ended_from`, `ended_to`) and the group, and, where a run filter can say it, what puts a run in the
metric's numerator: its observed outcome, or what measure-rates found of its answer. For notice agreement it
names the runs that disagree, the ones that move it. A metric not listed (the edit scopes, the "go on" paths)
opens every run of its period and group.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from datetime import date

from adapters.runs import RunFilter
from core.groups import Group, GroupKind
from core.metrics import Metric, parse_metric
from core.outcomes import CallOutcome

NUMERATOR_RUNS: Mapping[Metric, RunFilter] = {
    Metric.EDITED_RATE: RunFilter(outcome=CallOutcome.EDITED.value),
    Metric.DISCARDED_RATE: RunFilter(outcome=CallOutcome.DISCARDED.value),
    Metric.ACCEPTED_UNCHANGED_RATE: RunFilter(outcome=CallOutcome.ACCEPTED_UNCHANGED.value),
    Metric.UNKNOWN_SHARE: RunFilter(outcome=CallOutcome.UNKNOWN.value),
    Metric.NOTHING_SAVED_RATE: RunFilter(notice=True),
    Metric.CLAIMED_UNWRITTEN_RATE: RunFilter(claim=True),
    Metric.DENIAL_RATE: RunFilter(denial=True),
    Metric.NOTICE_AGREEMENT: RunFilter(disagreement=True),
}


def runs_of(metric: str, group: Group, first: date, last: date) -> RunFilter:
    """The runs a figure of `metric` for `group` over the days first–last counts (see the module)."""
    known = parse_metric(metric)
    chosen = NUMERATOR_RUNS.get(known, RunFilter()) if known is not None else RunFilter()
    chosen = replace(chosen, ended_from=first, ended_to=last)
    if group.kind is GroupKind.CONFIGURATION:
        return replace(chosen, configuration=group.value)
    if group.kind is GroupKind.SKILL:
        return replace(chosen, skill=group.value)
    return chosen
