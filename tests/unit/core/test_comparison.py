"""A rate before and after a date from stored figures (core.comparison), and how compare prints it."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from core.comparison import comparison_report
from core.comparison_text import comparison_json, comparison_line, comparison_text
from core.counting import Count
from core.groups import ALL_RUNS, Group, GroupKind
from core.metrics import Metric
from core.periods import Grain, comparison_periods, open_from
from core.sample_size import runs_per_side
from core.time import DAY_S
from core.two_sided import metrics_read

AT = date(2026, 10, 12)  # a Monday
WEEK_S = 7 * DAY_S
LONG_AFTER = int(datetime(2027, 6, 1, tzinfo=UTC).timestamp())  # every period closed long ago
METRIC = Metric.CLAIMED_UNWRITTEN_RATE


def figures(
    before: list[tuple[int, int, int]], after: list[tuple[int, int, int]]
) -> dict[tuple[str, date], Count]:
    """(numerator, denominator, runs) per period, oldest first, on each side of AT."""
    sides = comparison_periods(AT, len(before), Grain.WEEK)
    found: dict[tuple[str, date], Count] = {}
    for period, (numerator, denominator, runs) in zip(
        sides.before + sides.after, before + after, strict=True
    ):
        found[(METRIC.value, period)] = Count(numerator, denominator, 0)
        found[(Metric.RUNS.value, period)] = Count(runs, runs, 0)
    return found


def test_a_comparison_reads_its_metric_and_the_runs_its_groups_are_judged_by() -> None:
    assert metrics_read(METRIC) == (METRIC, Metric.RUNS)


def test_both_sides_sum_their_periods_and_a_large_drop_of_a_bad_rate_reads_better() -> None:
    stored = figures([(60, 300, 300), (60, 300, 300)], [(6, 300, 300), (6, 300, 300)])

    report = comparison_report(
        METRIC,
        AT,
        comparison_periods(AT, 2, Grain.WEEK),
        stored,
        weeks=2,
        group=ALL_RUNS,
        grain=Grain.WEEK,
        releases=("Prompt rule",),
        first_open=open_from(LONG_AFTER, WEEK_S, None, Grain.WEEK),
    )

    assert (report.before.proportion.numerator, report.before.proportion.denominator) == (120, 600)
    assert (report.after.proportion.numerator, report.after.proportion.denominator) == (12, 600)
    assert report.before.open_periods == report.after.open_periods == 0
    assert report.two_sided.verdict == "fell significantly: better"
    assert comparison_line(report).endswith(": fell significantly: better")


def test_a_group_side_with_one_period_under_five_runs_is_too_few_to_show() -> None:
    stored = figures([(3, 40, 40), (1, 4, 4)], [(3, 40, 40), (3, 40, 40)])
    group = Group(GroupKind.CONFIGURATION, "seo-assistant")

    report = comparison_report(
        METRIC,
        AT,
        comparison_periods(AT, 2, Grain.WEEK),
        stored,
        weeks=2,
        group=group,
        grain=Grain.WEEK,
        releases=(),
        first_open=open_from(LONG_AFTER, WEEK_S, None, Grain.WEEK),
    )

    assert not report.before.shown and report.after.shown
    assert report.two_sided.comparison is None and report.two_sided.verdict == "too few to show"
    assert "numerator" not in comparison_json(report)["before"]


def test_a_period_whose_runs_may_still_change_is_counted_as_open() -> None:
    stored = figures([(1, 10, 10)], [(1, 10, 10)])
    now = int(datetime(2026, 10, 20, tzinfo=UTC).timestamp())
    run_end = int(datetime(2026, 10, 16, tzinfo=UTC).timestamp())  # a run of the week of AT may still change

    report = comparison_report(
        METRIC,
        AT,
        comparison_periods(AT, 1, Grain.WEEK),
        stored,
        weeks=1,
        group=ALL_RUNS,
        grain=Grain.WEEK,
        releases=(),
        first_open=open_from(now, WEEK_S, run_end, Grain.WEEK),
    )

    assert (report.before.open_periods, report.after.open_periods) == (0, 1)
    assert any("1 still open" in line for line in comparison_text(report))


def test_too_few_to_tell_gives_each_sides_runs_needed_and_weeks_at_its_newest_week_with_data() -> None:
    # The after side's newest week holds nothing yet: its weeks are counted at the week before (30 a week).
    stored = figures([(6, 40, 40), (6, 40, 40)], [(5, 30, 30), (0, 0, 0)])
    del stored[(METRIC.value, comparison_periods(AT, 2, Grain.WEEK).after[1])]

    report = comparison_report(
        METRIC,
        AT,
        comparison_periods(AT, 2, Grain.WEEK),
        stored,
        weeks=2,
        group=ALL_RUNS,
        grain=Grain.WEEK,
        releases=(),
        first_open=open_from(LONG_AFTER, WEEK_S, None, Grain.WEEK),
    )

    needed = report.two_sided.needed
    assert report.two_sided.verdict == "too few to tell" and needed is not None
    per_side = runs_per_side(12 / 80, 5 / 30)
    assert needed.per_side == per_side
    assert (needed.first.have, needed.first.more, needed.first.weekly) == (80, per_side - 80, 40)
    assert (needed.second.have, needed.second.more, needed.second.weekly) == (30, per_side - 30, 30)
    assert needed.second.weeks == -(-(per_side - 30) // 30)
    assert "    after has 30: " in "\n".join(comparison_text(report))


def test_a_told_verdict_needs_no_more_runs_and_prints_none() -> None:
    stored = figures([(60, 300, 300), (60, 300, 300)], [(6, 300, 300), (6, 300, 300)])

    report = comparison_report(
        METRIC,
        AT,
        comparison_periods(AT, 2, Grain.WEEK),
        stored,
        weeks=2,
        group=ALL_RUNS,
        grain=Grain.WEEK,
        releases=(),
        first_open=open_from(LONG_AFTER, WEEK_S, None, Grain.WEEK),
    )

    assert report.two_sided.needed is not None and report.two_sided.needed.per_side == 0
    assert not any("each side needs" in line for line in comparison_text(report))
    assert comparison_json(report)["needed"]["per_side"] == 0


@pytest.mark.parametrize("grain", list(Grain))
def test_a_marker_at_the_edge_of_the_calendar_has_only_the_periods_a_date_can_name(grain: Grain) -> None:
    first = comparison_periods(date(1, 1, 1), 4, grain)
    last = comparison_periods(date(9999, 12, 31), 4, grain)

    assert first.before == () and len(first.after) == (4 if grain is Grain.WEEK else 28)
    assert all(period <= date(9999, 12, 31) for period in last.after)
    assert len(last.before) == (4 if grain is Grain.WEEK else 28)
