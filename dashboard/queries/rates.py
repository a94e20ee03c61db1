"""The Rates page's figures, shaped from what adapters.rates and adapters.releases read.

Both tables are small whatever the number of runs: a row per metric, period and group. Nothing here counts
runs, events or outcomes: even the runs still inside their window are a figure measure-rates stored (the
window_open metric), so the page costs the same on the demo and on a million runs. Metric names and labels
are core.metrics', periods core.periods', the "too few to show" rule core.groups', intervals core.rates'; the
before/after comparison is core.comparison's, the same as `runrecord compare`. A configuration or skill with
fewer than MIN_GROUP_RUNS runs in a period (the `runs` metric) is never given a figure here, so neither the
page nor the CSV can show one (DESIGN.md, "Privacy").
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date

import pandas as pd
from sqlalchemy import Engine

from adapters import measure_marks, schema
from adapters import rates as stored_rates
from adapters import releases as markers
from adapters.database import reported
from adapters.measure_marks import rates_version
from core.comparison import ComparisonReport, comparison_report
from core.counting import SCOPE_METRICS, SCOPE_PRECEDENCE
from core.formatting import NO_SKILL, group_text
from core.groups import ALL_RUNS, Group, GroupKind, hidden_groups
from core.metrics import COUNTS, DEFINITIONS, RATES, STORED_SINCE, Metric
from core.periods import Grain, comparison_periods, is_open
from core.rates import InvalidProportionError, Proportion
from core.rule_versions import mixing_note, ordered
from core.summary import TILE_METRICS, Tile, periods_read, tiles
from core.two_sided import metrics_read

# Every metric as the page names it (core.metrics, the registry).
LABELS: dict[str, str] = {definition.metric: definition.label for definition in DEFINITIONS.values()}

# The edit scopes of EDITED, in the order a run's scope is decided by (core.counting.SCOPE_PRECEDENCE), each
# under its name within the chart of the scopes.
EDIT_SCOPES: tuple[tuple[Metric, str], ...] = tuple(
    (SCOPE_METRICS[scope], DEFINITIONS[SCOPE_METRICS[scope]].short_label) for scope in SCOPE_PRECEDENCE
)

# The charts of the Overview, in order: EDITED, then nothingSaved as the chat stored it (the notice, since
# the chat has stored it; 001_…), as runrecord recomputes it from the runs' events, how often the two agree
# from the first stored notice on (the evidence that the recomputed rate before it measures the same thing),
# the denials of earlier work, and "go on" while an approval waits.
CHARTED: tuple[str, ...] = (
    Metric.EDITED_RATE,
    Metric.NOTHING_SAVED_RATE,
    Metric.CLAIMED_UNWRITTEN_RATE,
    Metric.NOTICE_AGREEMENT,
    Metric.DENIAL_RATE,
    Metric.GO_ON_WHILE_WAITING,
)
# The rates the before/after panel and the group split offer: no count (runs, window_open) is among them.
COMPARED: tuple[str, ...] = tuple(RATES)
# Metrics that are counts: the CSV gives them no rate and no interval.
COUNTED: frozenset[str] = frozenset(metric.value for metric in COUNTS)

# The observed-outcome mix: the numerator of each metric is the derived runs with that outcome.
OUTCOME_MIX: tuple[tuple[str, str], ...] = (
    (Metric.ACCEPTED_UNCHANGED_RATE, "accepted unchanged"),
    (Metric.EDITED_RATE, "edited"),
    (Metric.DISCARDED_RATE, "discarded"),
    (Metric.UNKNOWN_SHARE, "unknown"),
)
# Runs that wrote, whose last write's window had not closed when measure-rates ran and that had no outcome
# yet, per period of the run's end (the numerator; core.metrics has the definition).
WINDOW_OPEN_METRIC = Metric.WINDOW_OPEN.value
WINDOW_OPEN = LABELS[WINDOW_OPEN_METRIC]

GROUP_KINDS = (GroupKind.CONFIGURATION.value, GroupKind.SKILL.value)
ALL = GroupKind.ALL.value
TOO_FEW = "too few to show"

COMPARISON_WEEKS = (4, 8, 13, 26)  # the spans the before/after panel offers, in weeks on each side

_COLUMNS = [
    "metric",
    "period_start",
    "group_value",
    "numerator",
    "denominator",
    "excluded",
    "rate",
    "low",
    "high",
    "open",
    "rule_versions",
]
# The metric and the group as the pages name them, each beside its key (what compare and --group take).
_CSV_COLUMNS = [
    "label",
    "metric",
    "grain",
    "period_start",
    "group",
    "group_kind",
    "group_value",
    "numerator",
    "denominator",
    "excluded",
    "rate",
    "wilson_low",
    "wilson_high",
    "note",
]
_SPLIT_FIGURES = ("runs", "numerator", "denominator", "rate", "low", "high")


@dataclass(frozen=True)
class Series:
    """Rate rows with their rates and Wilson intervals; rows no proportion can have are counted, not shown."""

    frame: pd.DataFrame  # _COLUMNS, one row per metric, period and group, oldest first
    unreadable: int  # rows whose numerator is not within 0..denominator


def grains(engine: Engine) -> list[str]:
    """The grains measured, week before day (the page's default is the first)."""
    with reported(engine, "reading the rates"), engine.connect() as connection:
        found = stored_rates.measured_grains(connection)
    return sorted(found, key=lambda grain: (grain != Grain.WEEK.value, grain))


def series(engine: Engine, metrics: Sequence[str], grain: str, *, now: int, group_kind: str = ALL) -> Series:
    """The stored rows of the metrics at one grain and group kind, each with its rate and interval."""
    with reported(engine, "reading the rates"), engine.connect() as connection:
        rows = stored_rates.rate_rows(connection, metrics, grain, group_kind)
        first_open = measure_marks.first_open(connection, Grain(grain), now=now)
    records = []
    unreadable = 0
    for row in rows:
        try:
            proportion = Proportion(row.numerator, row.denominator)
        except InvalidProportionError:
            unreadable += 1
            continue
        interval = proportion.interval
        records.append(
            {
                "metric": row.metric,
                "period_start": row.period_start,
                "group_value": row.group_value,
                "numerator": proportion.numerator,
                "denominator": proportion.denominator,
                "excluded": row.excluded,
                "rate": proportion.rate,
                "low": None if interval is None else interval.low,
                "high": None if interval is None else interval.high,
                "open": is_open(row.period_start, first_open),
                "rule_versions": ordered(row.rule_versions),
            }
        )
    return Series(pd.DataFrame(records, columns=_COLUMNS), unreadable)


def first_period(engine: Engine, grain: str) -> date | None:
    """The first period measured at a grain (where the range "all" starts); None before any."""
    with reported(engine, "reading the rates"), engine.connect() as connection:
        return stored_rates.first_period(connection, Grain(grain))


def group_values(engine: Engine, grain: str) -> tuple[list[str], list[str]]:
    """The configurations and the skills the rates hold at a grain ("" for the conversations without one)."""
    with reported(engine, "reading the rates"), engine.connect() as connection:
        return (
            stored_rates.group_values(connection, Grain(grain), GroupKind.CONFIGURATION.value),
            stored_rates.group_values(connection, Grain(grain), GroupKind.SKILL.value),
        )


def summary(engine: Engine, grain: str, group: Group, release: date | None, *, now: int) -> tuple[Tile, ...]:
    """The summary tiles (core.summary) of one group: the last closed period, the one before, and both sides
    of the newest release, read as `runrecord compare` reads them."""
    period = Grain(grain)
    with reported(engine, "reading the rates"), engine.connect() as connection:
        first_open = measure_marks.first_open(connection, period, now=now)
        figures = stored_rates.rate_figures(
            connection,
            period,
            (*TILE_METRICS, Metric.RUNS),
            group,
            periods_read(first_open, period, release),
        )
        labels = [] if release is None else markers.labels_on(connection, release)
    return tiles(
        figures, grain=period, first_open=first_open, release=release, release_labels=labels, group=group
    )


def releases(engine: Engine) -> pd.DataFrame:
    """Every release marker, oldest first: released_on, label."""
    with reported(engine, "reading the release markers"), engine.connect() as connection:
        found = markers.releases(connection)
    return pd.DataFrame(
        [{"released_on": release.released_on, "label": release.label} for release in found],
        columns=["released_on", "label"],
    )


def before_after(
    engine: Engine,
    metric: str,
    grain: str,
    released_on: date,
    weeks: int,
    *,
    now: int,
    group: Group = ALL_RUNS,
) -> ComparisonReport:
    """`runrecord compare METRIC --at DATE --weeks N [--group G]`: the same sides, sums and verdict."""
    chosen, period = Metric(metric), Grain(grain)
    sides = comparison_periods(released_on, weeks, period)
    with reported(engine, "reading the rates"), engine.connect() as connection:
        figures = stored_rates.rate_figures(
            connection, period, metrics_read(chosen), group, sides.before + sides.after
        )
        labels = markers.labels_on(connection, released_on)
        first_open = measure_marks.first_open(connection, period, now=now)
    return comparison_report(
        chosen,
        released_on,
        sides,
        figures,
        weeks=weeks,
        group=group,
        grain=period,
        releases=labels,
        first_open=first_open,
    )


def outcome_mix(engine: Engine, grain: str, *, now: int) -> pd.DataFrame:
    """Derived runs per period of the run's end and outcome (the outcome metrics' numerators), with the rule
    versions they were derived under."""
    metrics = [metric for metric, _ in OUTCOME_MIX]
    frame = series(engine, metrics, grain, now=now).frame
    labels = dict(OUTCOME_MIX)
    return pd.DataFrame(
        {
            "period_start": frame["period_start"],
            "outcome": frame["metric"].map(labels),
            "runs": frame["numerator"],
            "rule_versions": frame["rule_versions"],
        },
        columns=["period_start", "outcome", "runs", "rule_versions"],
    ).reset_index(drop=True)


def mixed_periods(frame: pd.DataFrame) -> list[tuple[date, str]]:
    """The periods of a chart's rows (period_start, rule_versions) whose runs were derived under more than
    one rule version, oldest first, each with its note (core.rule_versions); none when every period is of
    one version."""
    if frame.empty:
        return []
    notes = []
    for period, versions in frame.groupby("period_start")["rule_versions"]:
        note = mixing_note(version for found in versions for version in found)
        if note is not None:
            notes.append((period, note))
    return sorted(notes)


def window_open(engine: Engine, tables: frozenset[str], grain: str) -> pd.DataFrame | None:
    """Runs inside their window without an outcome, as the last measurement counted them, per period of the
    run's end (group all): period_start, runs; only periods that hold some. None when the last measurement
    on this database did not count them (none yet, or one by a runrecord that did not store the metric)."""
    if schema.measure_mark.name not in tables:
        return None
    with reported(engine, "reading the runs inside their window"), engine.connect() as connection:
        if rates_version(connection, Grain(grain)) < STORED_SINCE[Metric.WINDOW_OPEN]:
            return None
        found = stored_rates.counted_periods(connection, Metric.WINDOW_OPEN, grain)
    return pd.DataFrame(
        [{"period_start": period, "runs": runs} for period, runs in found], columns=["period_start", "runs"]
    )


@dataclass(frozen=True)
class Agreement:
    """notice_agreement summed over every stored period of a grain, all runs."""

    proportion: Proportion
    excluded: int
    first_period: date | None  # the first period counted (it holds the first stored notice); None: none yet


def notice_agreement(engine: Engine, tables: frozenset[str], grain: str) -> Agreement | None:
    """The recomputed notice's agreement with the stored one over every period, from the first stored notice
    on; None when the last measurement on this database did not count it (none yet, or an older runrecord).
    Sums whose numerator is outside 0..denominator (unreadable rows) read as no answer counted."""
    if schema.measure_mark.name not in tables:
        return None
    with reported(engine, "reading the notice agreement"), engine.connect() as connection:
        if rates_version(connection, Grain(grain)) < STORED_SINCE[Metric.NOTICE_AGREEMENT]:
            return None
        figures, first = stored_rates.stored_total(connection, Grain(grain), Metric.NOTICE_AGREEMENT)
    try:
        proportion = Proportion(figures.numerator, figures.denominator)
    except InvalidProportionError:
        proportion = Proportion(0, 0)
    return Agreement(proportion, figures.excluded, first)


def group_label(group_kind: str, value: str) -> str:
    """A group as the page names it; the conversations without a skill are NO_SKILL."""
    return NO_SKILL if group_kind == GroupKind.SKILL.value and not value else value


def group_split(engine: Engine, metric: str, grain: str, group_kind: str, *, now: int) -> pd.DataFrame:
    """One row per period and group: the rate and interval, or none where the group is too few to show.

    Columns: period_start, group (as the page names it), group_value, runs, numerator, denominator, rate,
    low, high, shown. A group with fewer
    than MIN_GROUP_RUNS runs in the period (core.groups.shown) has every figure blanked here, its run count
    too, so no later step can show it.
    """
    both = series(engine, [metric, Metric.RUNS.value], grain, now=now, group_kind=group_kind)
    frame = both.frame
    counted = frame[frame["metric"] == Metric.RUNS.value]
    runs = counted.set_index(["period_start", "group_value"])["numerator"]
    rates = frame[frame["metric"] == metric].copy()
    rates["runs"] = [
        int(runs.get((p, g), 0)) for p, g in zip(rates["period_start"], rates["group_value"], strict=True)
    ]
    hidden: dict[date, frozenset[str]] = {}
    if group_kind != ALL:
        every = series(engine, [Metric.RUNS.value], grain, now=now).frame.set_index("period_start")[
            "numerator"
        ]
        by_period: dict[date, dict[str, int]] = {}
        # Every group with a figure in the period, 0 runs where none is counted (core.groups.hidden_groups)
        for period, value, count in zip(
            rates["period_start"], rates["group_value"], rates["runs"], strict=True
        ):
            by_period.setdefault(period, {})[value] = int(count)
        for period, value, count in zip(
            counted["period_start"], counted["group_value"], counted["numerator"], strict=True
        ):
            by_period.setdefault(period, {})[value] = int(count)
        hidden = {p: hidden_groups(int(every.get(p, 0)), values) for p, values in by_period.items()}
    # The hidden groups hold every group of the period too few to show (core.groups.hidden_groups).
    rates["shown"] = [
        group_kind == ALL or value not in hidden[period]
        for period, value in zip(rates["period_start"], rates["group_value"], strict=True)
    ]
    for column in _SPLIT_FIGURES:
        rates[column] = rates[column].astype(object).mask(~rates["shown"].astype(bool), None)
    rates["group"] = [group_label(group_kind, value) for value in rates["group_value"]]
    columns = ["period_start", "group", "group_value", "runs", "numerator", "denominator", "rate", "low"]
    return rates[[*columns, "high", "shown"]].reset_index(drop=True)


def _hidden_by_period(
    runs: dict[tuple[str, date, str, str], int], rows: Sequence[stored_rates.RateRow]
) -> dict[tuple[str, date, str, str], frozenset[str]]:
    """Per grain, period, group kind and metric, the groups hidden there (core.groups.hidden_groups): those
    too few to show and those that keep them from being worked out from all runs by subtraction. As the
    split weighs them: every group with a row of the metric or a runs row, 0 runs where none is counted."""
    counted: dict[tuple[str, date, str], set[str]] = {}
    figured: dict[tuple[str, date, str, str], set[str]] = {}
    for row in rows:
        if row.group_kind == ALL:
            continue
        period = (row.grain, row.period_start, row.group_kind)
        figured.setdefault((*period, row.metric), set()).add(row.group_value)
        if row.metric == Metric.RUNS.value:
            counted.setdefault(period, set()).add(row.group_value)
    hidden = {}
    for key, values in figured.items():
        weighed = values | counted.get(key[:3], set())
        every = runs.get((*key[:2], ALL, ""), 0)
        hidden[key] = hidden_groups(every, {value: runs.get((*key[:3], value), 0) for value in weighed})
    return hidden


def _group_name(group_kind: str, value: str) -> str:
    kinds = {kind.value for kind in GroupKind}
    return group_text(Group(GroupKind(group_kind), value)) if group_kind in kinds else f"{group_kind} {value}"


def aggregates_csv(engine: Engine) -> str:
    """Every rate row as CSV with its interval; a configuration or skill with fewer than MIN_GROUP_RUNS runs
    in its period reads "too few to show" and carries no figure (its run count neither)."""
    with reported(engine, "reading the rates"), engine.connect() as connection:
        rows = stored_rates.every_rate(connection)
    runs = {
        (row.grain, row.period_start, row.group_kind, row.group_value): row.numerator
        for row in rows
        if row.metric == Metric.RUNS.value
    }
    hidden = _hidden_by_period(runs, rows)
    kinds = {kind.value for kind in GroupKind}
    records = []
    for row in rows:
        record: dict[str, object] = {
            "label": LABELS.get(row.metric, row.metric),
            "metric": row.metric,
            "grain": row.grain,
            "period_start": row.period_start.isoformat(),
            "group": _group_name(row.group_kind, row.group_value),
            "group_kind": row.group_kind,
            "group_value": group_label(row.group_kind, row.group_value) if row.group_kind != ALL else "",
        }
        key = (row.grain, row.period_start, row.group_kind, row.group_value)
        # The hidden groups hold every group of the period too few to show (core.groups.hidden_groups).
        if row.group_kind not in kinds or (
            row.group_kind != ALL and row.group_value in hidden[(*key[:3], row.metric)]
        ):
            records.append({**record, "note": TOO_FEW})
            continue
        try:
            proportion = Proportion(row.numerator, row.denominator)
        except InvalidProportionError:
            records.append({**record, "note": "unreadable row (numerator outside 0..denominator)"})
            continue
        interval = proportion.interval
        counted = row.metric in COUNTED
        records.append(
            {
                **record,
                "numerator": proportion.numerator,
                "denominator": proportion.denominator,
                "excluded": row.excluded,
                "rate": None if counted else proportion.rate,
                "wilson_low": None if interval is None or counted else interval.low,
                "wilson_high": None if interval is None or counted else interval.high,
                "note": "",
            }
        )
    frame = pd.DataFrame(records, columns=_CSV_COLUMNS).astype(
        {"numerator": "Int64", "denominator": "Int64", "excluded": "Int64"}
    )
    out = io.StringIO()
    frame.to_csv(out, index=False)
    return out.getvalue()
