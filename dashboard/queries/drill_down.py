"""Which runs a figure counts, as the Runs filter (?runs=) that an alert or a cell of a split opens.

A rate places a run in the period of its end and in its groups (configuration, skill); the filter names that
period (`ended_from`, `ended_to`) and the group, and, where a run filter can say it, what puts a run in the
metric's numerator: its observed outcome, its edit scope, or what measure-rates found of its answer. For
notice agreement it names the runs that disagree, the ones that move it. A metric not listed (the "go on"
paths, counted per message) opens every run of its period and group.

A point of a rate chart or a cell of a split opens the runs its figure's n counts (`counted_runs`): the runs
in the metric's denominator (adapters.runs.COUNTED_METRICS), its numerator among them, in that period and
group, by the very columns measure-rates counted. An answer whose run cannot be found is counted too, but is
no run: the Runs page cannot list it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from datetime import date

from adapters.runs import COUNTED_METRICS, RunFilter
from core.counting import SCOPE_METRICS
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
    **{metric: RunFilter(scope=scope.value) for scope, metric in SCOPE_METRICS.items()},
}


def runs_of(metric: str, group: Group, first: date, last: date) -> RunFilter:
    """The runs a figure of `metric` for `group` over the days first–last counts (see the module)."""
    known = parse_metric(metric)
    chosen = NUMERATOR_RUNS.get(known, RunFilter()) if known is not None else RunFilter()
    return _in_group(replace(chosen, ended_from=first, ended_to=last), group)


def counted_runs(metric: str, group: Group, first: date, last: date) -> RunFilter:
    """The runs a figure of `metric` for `group` over the days first–last counts in its denominator; for a
    metric no run filter can count (the "go on" paths), every run of its period and group."""
    counted = metric if metric in COUNTED_METRICS else None
    return _in_group(RunFilter(ended_from=first, ended_to=last, counted=counted), group)


def _in_group(chosen: RunFilter, group: Group) -> RunFilter:
    if group.kind is GroupKind.CONFIGURATION:
        return replace(chosen, configuration=group.value)
    if group.kind is GroupKind.SKILL:
        return replace(chosen, skill=group.value)
    return chosen
