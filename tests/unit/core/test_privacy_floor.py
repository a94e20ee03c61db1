"""The privacy floor on every path that shows a group (DESIGN.md, "Privacy"): a configuration or skill with
fewer than 5 runs in any period of a side is too few to show; a period without runs hides nothing."""

from __future__ import annotations

from datetime import date

import pytest

from core.alerts import alerts, comparison_of, trend_check
from core.between import between_report
from core.between_text import between_json, between_text
from core.comparison import comparison_report
from core.comparison_text import comparison_json, comparison_text
from core.counting import Count
from core.groups import Group, GroupKind
from core.metrics import Metric
from core.periods import Grain, comparison_periods

METRIC = Metric.NOTHING_SAVED_RATE
GROUP = Group(GroupKind.CONFIGURATION, "content-assistant")
OTHER = Group(GroupKind.CONFIGURATION, "seo-assistant")
AT = date(2026, 10, 12)  # a Monday: the release compared across
SIDES = comparison_periods(AT, 4, Grain.WEEK)
FIRST_OPEN = date(2026, 11, 23)  # every period of both sides has closed
NEWEST = date(2026, 11, 16)  # the newest closed week, which the trend compares with the four before it

Figures = dict[tuple[str, date], Count]

# (runs in one period of the group, shown?): 0 runs hide nothing, 1 and 4 are too few, 5 is the floor.
FLOOR = [(0, True), (1, False), (4, False), (5, True)]
IDS = [f"{runs} runs" for runs, _ in FLOOR]


def figures(periods: tuple[date, ...], small: date, runs: int, *, risen: date | None = None) -> Figures:
    """40 runs a period, a tenth of them counted in the numerator (all of them in `risen`); `small` holds
    `runs` (no row at 0 runs)."""
    found: Figures = {}
    for period in periods:
        count = runs if period == small else 40
        if count == 0:
            continue
        found[(METRIC.value, period)] = Count(count if period == risen else count // 10, count, 0)
        found[(Metric.RUNS.value, period)] = Count(count, count, 0)
    return found


@pytest.mark.parametrize(("runs", "shown"), FLOOR, ids=IDS)
def test_compare_at_a_date_shows_a_side_only_when_no_period_of_it_has_one_to_four_runs(
    runs: int, shown: bool
) -> None:
    stored = figures(SIDES.before + SIDES.after, SIDES.after[1], runs)

    report = comparison_report(
        METRIC, AT, SIDES, stored, weeks=4, group=GROUP, grain=Grain.WEEK, releases=(), first_open=FIRST_OPEN
    )

    assert report.before.shown and report.after.shown is shown
    assert (report.two_sided.comparison is not None) is shown
    assert (report.two_sided.verdict == "too few to show") is not shown
    after_line = next(line for line in comparison_text(report) if line.startswith("  after"))
    assert ("too few to show" in after_line) is not shown
    assert ("numerator" in comparison_json(report)["after"]) is shown


@pytest.mark.parametrize(("runs", "shown"), FLOOR, ids=IDS)
def test_compare_between_configurations_shows_a_side_only_when_no_period_of_it_has_one_to_four_runs(
    runs: int, shown: bool
) -> None:
    periods = SIDES.before
    first = figures(periods, periods[0], 40)
    second = figures(periods, periods[2], runs)
    span = [period for period in periods if (METRIC.value, period) in second]

    report = between_report(METRIC, Grain.WEEK, (OTHER, GROUP), span, (first, second), first_open=FIRST_OPEN)

    assert report.two_sided.first.shown and report.two_sided.second.shown is shown
    assert (report.two_sided.comparison is not None) is shown and (
        report.two_sided.needed is not None
    ) is shown
    assert (report.two_sided.verdict == "too few to show") is not shown
    line = next(line for line in between_text(report) if line.startswith("  content-assistant:"))
    assert ("too few to show" in line) is not shown
    assert ("numerator" in between_json(report)["second"]) is shown


@pytest.mark.parametrize(("runs", "shown"), FLOOR, ids=IDS)
def test_an_alert_is_raised_only_when_no_period_of_its_sides_has_one_to_four_runs(
    runs: int, shown: bool
) -> None:
    check = trend_check(FIRST_OPEN)
    stored = figures(check.sides.before + check.sides.after, check.sides.before[1], runs, risen=NEWEST)

    found = comparison_of(METRIC, GROUP, check, stored, first_open=FIRST_OPEN)

    assert (found is not None) is shown
    assert len(alerts([found] if found is not None else [])) == (1 if shown else 0)


@pytest.mark.parametrize(("runs", "tested"), [(1, False), (4, False), (5, True)])
def test_a_newest_period_of_one_to_four_runs_is_no_alert(runs: int, tested: bool) -> None:
    check = trend_check(FIRST_OPEN)
    stored = figures(check.sides.before + check.sides.after, NEWEST, runs, risen=NEWEST)

    found = comparison_of(METRIC, GROUP, check, stored, first_open=FIRST_OPEN)

    assert (found is not None) is tested


def test_all_runs_are_shown_whatever_a_period_holds() -> None:
    stored = figures(SIDES.before + SIDES.after, SIDES.after[1], 1)

    report = comparison_report(
        METRIC,
        AT,
        SIDES,
        stored,
        weeks=4,
        group=Group(GroupKind.ALL),
        grain=Grain.WEEK,
        releases=(),
        first_open=FIRST_OPEN,
    )

    assert report.before.shown and report.after.shown and report.two_sided.comparison is not None
