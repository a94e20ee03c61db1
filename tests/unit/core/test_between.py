"""One configuration against another over the same whole periods (core.between), and how compare prints it."""

from __future__ import annotations

import json
from datetime import date, timedelta

import pytest

from core.between import BetweenReport, between_report, common_periods
from core.between_text import between_json, between_text
from core.counting import Count
from core.groups import Group, GroupKind
from core.metrics import Metric
from core.periods import Grain
from core.sample_size import runs_per_side

METRIC = Metric.EDITED_RATE
STABLE = Group(GroupKind.CONFIGURATION, "seo-assistant")
CANARY = Group(GroupKind.CONFIGURATION, "seo-assistant-canary")
WEEKS = tuple(date(2026, 10, 5) + timedelta(weeks=k) for k in range(6))  # Mondays
FIRST_OPEN = WEEKS[5]  # the last week is open

Figures = dict[tuple[str, date], Count]


def figures(rows: dict[date, tuple[int, int, int]]) -> Figures:
    """(numerator, denominator, runs) per period."""
    found: Figures = {}
    for period, (numerator, denominator, runs) in rows.items():
        found[(METRIC.value, period)] = Count(numerator, denominator, 0)
        found[(Metric.RUNS.value, period)] = Count(runs, runs, 0)
    return found


def weekly(numerator: int, denominator: int, runs: int, weeks: tuple[date, ...] = WEEKS) -> Figures:
    return figures(dict.fromkeys(weeks, (numerator, denominator, runs)))


def report(first: Figures, second: Figures, **bounds: date) -> BetweenReport:
    periods = common_periods(METRIC, Grain.WEEK, first, second, first_open=FIRST_OPEN, **bounds)
    return between_report(
        METRIC, Grain.WEEK, (STABLE, CANARY), periods, (first, second), first_open=FIRST_OPEN
    )


# --- the periods --------------------------------------------------------------------------------------------


def test_both_sides_are_summed_over_the_closed_periods_both_have() -> None:
    stable = weekly(2, 10, 12, WEEKS[:4])
    canary = weekly(8, 10, 12, WEEKS[2:])

    periods = common_periods(METRIC, Grain.WEEK, stable, canary, first_open=FIRST_OPEN)

    assert periods == (WEEKS[2], WEEKS[3])


def test_an_open_period_is_on_neither_side() -> None:
    periods = common_periods(METRIC, Grain.WEEK, weekly(2, 10, 12), weekly(8, 10, 12), first_open=WEEKS[4])

    assert periods == WEEKS[:4]


def test_from_and_to_keep_only_the_periods_that_lie_wholly_between_them() -> None:
    stable, canary = weekly(2, 10, 12), weekly(8, 10, 12)

    periods = common_periods(
        METRIC,
        Grain.WEEK,
        stable,
        canary,
        first_open=FIRST_OPEN,
        start=WEEKS[1] + timedelta(days=2),  # the week of WEEKS[1] starts before it
        end=WEEKS[4] + timedelta(days=5),  # the week of WEEKS[4] ends after it
    )

    assert periods == (WEEKS[2], WEEKS[3])


def test_a_comparison_needs_a_period_both_have() -> None:
    with pytest.raises(ValueError, match="at least one period"):
        between_report(METRIC, Grain.WEEK, (STABLE, CANARY), (), ({}, {}), first_open=FIRST_OPEN)


# --- the verdict and the privacy rule -----------------------------------------------------------------------


def test_a_large_rise_of_edited_on_large_sides_is_significantly_higher_and_worse() -> None:
    found = report(weekly(40, 200, 220), weekly(120, 200, 220))

    assert found.two_sided.verdict == "significantly higher: worse"
    assert found.two_sided.comparison is not None and found.two_sided.comparison.difference == pytest.approx(
        0.4
    )
    assert found.two_sided.needed is not None and found.two_sided.needed.per_side == 0
    assert (found.two_sided.needed.first.more, found.two_sided.needed.second.more) == (0, 0)


def test_a_side_with_fewer_than_five_runs_in_any_period_is_too_few_to_show() -> None:
    canary = weekly(8, 10, 12)
    canary[(Metric.RUNS.value, WEEKS[2])] = Count(4, 4, 0)

    found = report(weekly(2, 10, 12), canary)

    assert found.two_sided.verdict == "too few to show"
    assert found.two_sided.comparison is None and found.two_sided.needed is None
    assert "too_few_to_show" in json.dumps(between_json(found))
    assert not any("8 /" in line or "/ 50" in line for line in between_text(found) if "canary" in line)


def test_a_large_rise_of_edited_on_small_sides_is_significantly_higher_and_worse_however_wide() -> None:
    found = report(weekly(2, 10, 12), weekly(8, 10, 12))

    assert found.two_sided.verdict == "significantly higher: worse"
    assert (
        found.two_sided.comparison is not None and found.two_sided.comparison.difference_interval is not None
    )
    assert found.two_sided.comparison.difference_interval.half_width > 0.05
    assert found.two_sided.needed is not None and found.two_sided.needed.per_side == 0


def test_a_small_difference_on_small_sides_is_too_few_to_tell_and_says_what_each_side_lacks() -> None:
    found = report(weekly(2, 10, 12), weekly(3, 10, 12))

    assert found.two_sided.verdict == "too few to tell"
    assert found.two_sided.comparison is not None and found.two_sided.comparison.p_value is not None
    assert found.two_sided.comparison.p_value >= 0.05
    needed = found.two_sided.needed
    assert needed is not None and needed.per_side == runs_per_side(0.2, 0.3)
    assert needed.first.have == 50 and needed.first.more == needed.per_side - 50
    assert needed.first.weekly == 10 and needed.first.weeks == -(-needed.first.more // 10)


def test_the_weekly_volume_is_the_denominator_of_the_spans_last_seven_days() -> None:
    stable = figures({WEEKS[0]: (2, 10, 12), WEEKS[1]: (3, 30, 32)})
    canary = figures({WEEKS[0]: (8, 10, 12), WEEKS[1]: (9, 20, 22)})

    found = report(stable, canary)

    assert found.two_sided.needed is not None
    assert (found.two_sided.needed.first.weekly, found.two_sided.needed.second.weekly) == (30, 20)


def test_the_text_names_both_configurations_the_span_the_difference_and_the_rule() -> None:
    found = report(weekly(2, 10, 12), weekly(3, 10, 12))

    text = "\n".join(between_text(found))

    assert text.startswith(
        "edited_rate, configuration seo-assistant-canary against configuration seo-assistant"
    )
    assert "over 2026-10-05 – 2026-11-08: 5 closed weeks both have" in text
    assert "seo-assistant: 10 / 50 = 20.0%" in text and "seo-assistant-canary: 15 / 50 = 30.0%" in text
    assert "difference +10.0 points (seo-assistant-canary − seo-assistant)" in text
    assert "→ too few to tell" in text and "more, about" in text and "rule:" in text


def test_the_json_gives_both_sides_the_difference_and_what_each_side_needs() -> None:
    found = report(weekly(2, 10, 12), weekly(3, 10, 12))

    document = between_json(found)

    assert document["between"] == ["configuration:seo-assistant", "configuration:seo-assistant-canary"]
    assert (document["from"], document["to"], document["periods"]) == ("2026-10-05", "2026-11-08", 5)
    assert document["first"]["denominator"] == 50 and document["second"]["numerator"] == 15
    assert document["difference"]["second_minus_first"] == pytest.approx(0.1)
    assert document["needed"]["first"]["weekly"] == 10
    assert document["verdict"] == "too few to tell"
