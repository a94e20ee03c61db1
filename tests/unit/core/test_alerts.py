"""When a rate moves (core.alerts): which comparisons are made after a measurement, and which are alerts."""

from __future__ import annotations

from dataclasses import replace
from datetime import date, timedelta
from random import Random

import pytest
from statsmodels.stats.multitest import multipletests

from core.alert_text import alert_json, alert_line
from core.alerts import (
    ALERT_GRAIN,
    RELEASE_WEEKS,
    TREND_PERIODS,
    Alert,
    AlertKind,
    AlertStatus,
    Check,
    StoredAlert,
    alerts,
    checks,
    compared,
    comparison_of,
    newest_closed,
    periods_read,
    recent_releases,
    release_check,
    trend_check,
)
from core.counting import Count
from core.groups import ALL_RUNS, Group, GroupKind
from core.metrics import Metric
from core.periods import Grain

FIRST_OPEN = date(2026, 11, 23)  # a Monday: the week measure-rates found first open
NEWEST = date(2026, 11, 16)  # the newest closed week
TODAY = date(2026, 11, 29)
METRIC = Metric.EDITED_RATE
CANARY = Group(GroupKind.CONFIGURATION, "seo-assistant-canary")
WEEK = timedelta(days=7)


def weekly(per_period: list[tuple[int, int, int]], *, last: date = NEWEST) -> dict[tuple[str, date], Count]:
    """(numerator, denominator, runs) per week, oldest first, the last one in the week of `last`."""
    found: dict[tuple[str, date], Count] = {}
    for back, (numerator, denominator, runs) in enumerate(reversed(per_period)):
        period = last - WEEK * back
        found[(METRIC.value, period)] = Count(numerator, denominator, 0)
        found[(Metric.RUNS.value, period)] = Count(runs, runs, 0)
    return found


# --- which comparisons --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("grain", "first_open", "newest"),
    [
        (Grain.WEEK, date(2026, 11, 23), date(2026, 11, 16)),
        (Grain.DAY, date(2026, 11, 23), date(2026, 11, 22)),
    ],
)
def test_the_newest_closed_period_is_the_one_before_the_first_open_period(
    grain: Grain, first_open: date, newest: date
) -> None:
    assert newest_closed(first_open, grain) == newest


def test_a_trend_compares_the_newest_closed_period_with_the_four_periods_before_it() -> None:
    check = trend_check(FIRST_OPEN)

    assert (check.kind, check.at, check.label) == (AlertKind.TREND, NEWEST, "")
    assert check.sides.after == (NEWEST,)
    assert check.sides.before == tuple(NEWEST - WEEK * k for k in range(TREND_PERIODS, 0, -1))


@pytest.mark.parametrize(
    ("released_on", "recent"),
    [
        (FIRST_OPEN - timedelta(days=1), True),
        (FIRST_OPEN - timedelta(weeks=RELEASE_WEEKS), True),
        (FIRST_OPEN - timedelta(weeks=RELEASE_WEEKS, days=1), False),
        (FIRST_OPEN, False),  # in the first open week: no closed week after it yet
        (TODAY + timedelta(days=1), False),  # marked ahead
    ],
)
def test_a_release_marker_is_compared_in_the_eight_weeks_before_the_first_open_week(
    released_on: date, recent: bool
) -> None:
    found = recent_releases([(released_on, "Prompt rule")], FIRST_OPEN)

    assert found == ([(released_on, "Prompt rule")] if recent else [])


def test_the_markers_of_one_day_are_one_comparison_with_their_labels_joined() -> None:
    found = recent_releases(
        [(date(2026, 10, 12), "b"), (date(2026, 10, 12), "a"), (date(2026, 10, 5), "c")], FIRST_OPEN
    )

    assert found == [(date(2026, 10, 5), "c"), (date(2026, 10, 12), "a; b")]


def test_a_release_is_compared_on_its_closed_periods_only() -> None:
    check = release_check(date(2026, 11, 2), "Prompt rule", FIRST_OPEN)

    assert check is not None
    assert check.sides.before == (
        date(2026, 10, 5),
        date(2026, 10, 12),
        date(2026, 10, 19),
        date(2026, 10, 26),
    )
    assert check.sides.after == (date(2026, 11, 2), date(2026, 11, 9), date(2026, 11, 16))  # 11-23 is open


def test_a_release_with_no_closed_period_after_it_is_not_compared_yet() -> None:
    assert release_check(FIRST_OPEN, "Prompt rule", FIRST_OPEN) is None


def test_alerts_compare_weeks_only() -> None:
    assert ALERT_GRAIN is Grain.WEEK


def test_the_checks_are_the_trend_and_each_recent_release_on_closed_weeks_only() -> None:
    markers = [(date(2026, 10, 12), "Prompt rule"), (FIRST_OPEN + timedelta(days=2), "Too new")]

    found = checks(FIRST_OPEN, markers)

    assert [(check.kind, check.at) for check in found] == [
        (AlertKind.TREND, NEWEST),
        (AlertKind.RELEASE, date(2026, 10, 12)),
    ]
    assert max(periods_read(found)) < FIRST_OPEN


def test_the_periods_read_are_those_of_every_side_of_every_check() -> None:
    found = checks(FIRST_OPEN, [(date(2026, 10, 12), "Prompt rule")])

    assert periods_read(found) == {NEWEST - WEEK * k for k in range(10)}


# --- which comparisons are alerts -------------------------------------------------------------------------


def alert_of(
    metric: Metric, group: Group, check: Check, figures: dict[tuple[str, date], Count]
) -> Alert | None:
    """The alert of one comparison measured alone (a family of one): None when it is not tested or not one."""
    found = comparison_of(metric, group, check, figures, first_open=FIRST_OPEN)
    raised = alerts([] if found is None else [found])
    return raised[0] if raised else None


# (before: four weeks of (numerator, denominator, runs), after: the newest week, group, alert?, why)
RULES = [
    ([(40, 800, 800)] * 4, (300, 800, 800), ALL_RUNS, True, "a large rise"),
    ([(400, 800, 800)] * 4, (40, 800, 800), ALL_RUNS, True, "a large drop"),
    ([(400, 800, 800)] * 4, (410, 800, 800), ALL_RUNS, False, "no difference within ±5"),
    ([(1, 20, 20)] * 4, (10, 20, 20), ALL_RUNS, True, "significant with a wide interval"),
    ([(6, 20, 20)] * 4, (8, 20, 20), ALL_RUNS, False, "too few to tell"),
    ([(40, 800, 800)] * 4, (300, 800, 800), CANARY, True, "a configuration shown in every period"),
    (
        [(40, 800, 800)] * 3 + [(0, 4, 4)],
        (300, 800, 800),
        CANARY,
        False,
        "a configuration period under 5 runs",
    ),
    ([(40, 800, 800)] * 3 + [(0, 4, 4)], (300, 800, 800), ALL_RUNS, True, "all runs are always shown"),
    ([(40, 800, 800)] * 4, (4, 4, 4), CANARY, False, "the newest period under 5 runs"),
    ([(40, 800, 800)] * 4, (0, 0, 0), ALL_RUNS, False, "no data in the newest period"),
]


@pytest.mark.parametrize(
    ("before", "after", "group", "expected"), [row[:4] for row in RULES], ids=[row[4] for row in RULES]
)
def test_a_comparison_is_an_alert_only_when_significant_and_shown(
    before: list[tuple[int, int, int]], after: tuple[int, int, int], group: Group, expected: bool
) -> None:
    figures = weekly([*before, after])

    found = alert_of(METRIC, group, trend_check(FIRST_OPEN), figures)

    assert (found is not None) == expected


def test_an_alert_carries_both_sides_the_difference_its_interval_and_p() -> None:
    figures = weekly([(40, 800, 800)] * 4 + [(300, 800, 800)])

    found = alert_of(METRIC, CANARY, trend_check(FIRST_OPEN), figures)

    assert found is not None
    assert (found.before.numerator, found.before.denominator) == (160, 3200)
    assert (found.after.numerator, found.after.denominator) == (300, 800)
    assert (found.before_from, found.before_to) == (date(2026, 10, 19), date(2026, 11, 15))
    assert (found.after_from, found.after_to) == (NEWEST, date(2026, 11, 22))
    assert found.difference == pytest.approx(0.325)
    assert found.interval.low < found.difference < found.interval.high
    assert found.p_value < 0.05 and found.direction == "rise"
    assert found.key == ("edited_rate", "week", "configuration", "seo-assistant-canary", "trend", NEWEST)


def test_every_rate_and_group_is_checked_and_the_alerts_come_in_key_order() -> None:
    moved = weekly([(40, 800, 800)] * 4 + [(300, 800, 800)])
    still = weekly([(40, 800, 800)] * 5)

    found = alerts(
        compared(
            checks(FIRST_OPEN, []),
            {CANARY: moved, ALL_RUNS: still, Group(GroupKind.SKILL, ""): moved},
            first_open=FIRST_OPEN,
        )
    )

    assert [alert.key[2:4] for alert in found] == [("configuration", "seo-assistant-canary"), ("skill", "")]


def test_a_comparison_too_few_to_show_or_without_data_is_not_tested() -> None:
    small = weekly([(40, 800, 800)] * 4 + [(4, 4, 4)])
    empty = weekly([(40, 800, 800)] * 4 + [(0, 0, 0)])
    shown = weekly([(40, 800, 800)] * 4 + [(5, 5, 5)])
    check = trend_check(FIRST_OPEN)

    assert comparison_of(METRIC, CANARY, check, small, first_open=FIRST_OPEN) is None
    assert comparison_of(METRIC, ALL_RUNS, check, empty, first_open=FIRST_OPEN) is None
    assert comparison_of(METRIC, CANARY, check, shown, first_open=FIRST_OPEN) is not None


def _family(p_values: list[float]) -> list[Alert]:
    """One tested comparison per p-value, each of its own group, as one measurement would hold them."""
    base = comparison_of(
        METRIC,
        ALL_RUNS,
        trend_check(FIRST_OPEN),
        weekly([(40, 800, 800)] * 5),
        first_open=FIRST_OPEN,
    )
    assert base is not None
    return [
        replace(base, group=Group(GroupKind.CONFIGURATION, f"c{index:03}"), p_value=p)
        for index, p in enumerate(p_values)
    ]


def test_a_move_significant_alone_is_no_alert_among_many_comparisons_that_did_not_move() -> None:
    alone = _family([0.01])
    among = _family([0.01] + [0.5] * 19)

    assert len(alerts(alone)) == 1
    assert alerts(among) == []  # 0.01 > 1 × 0.05 / 20


def test_moves_carry_each_other_through_the_correction() -> None:
    # 0.004 alone among 20 would need p ≤ 0.0025; with four others at most 0.01 the fifth smallest is held
    # to 5 × 0.05 / 20 = 0.0125, and all five are alerts.
    found = alerts(_family([0.001, 0.004, 0.006, 0.008, 0.01] + [0.6] * 15))

    assert sorted(alert.p_value for alert in found) == [0.001, 0.004, 0.006, 0.008, 0.01]


def test_a_p_of_exactly_five_percent_is_no_alert_though_the_correction_would_keep_it() -> None:
    assert alerts(_family([0.05])) == []


@pytest.mark.parametrize("seed", range(40))
def test_the_alerts_are_those_statsmodels_benjamini_hochberg_rejects(seed: int) -> None:
    random = Random(seed)
    p_values = [random.random() ** random.choice((1, 3, 8)) for _ in range(random.randint(1, 80))]

    found = alerts(_family(p_values))

    expected, adjusted, *_ = multipletests(p_values, alpha=0.05, method="fdr_bh")
    assert sorted(alert.group.value for alert in found) == [
        f"c{index:03}" for index, reject in enumerate(expected) if reject and p_values[index] < 0.05
    ]
    assert [alert.adjusted_p_value for alert in found] == pytest.approx(
        [adjusted[int(alert.group.value[1:])] for alert in found], rel=1e-12
    )


# --- how an alert reads -----------------------------------------------------------------------------------


def stored_canary() -> StoredAlert:
    figures = weekly([(40, 800, 800)] * 4 + [(300, 800, 800)])
    found = alert_of(METRIC, CANARY, trend_check(FIRST_OPEN), figures)
    assert found is not None
    return StoredAlert(7, found, created_at=1_764_000_000, status=AlertStatus.OPEN, closed_at=0)


def test_an_alert_line_says_metric_group_period_before_after_difference_and_p() -> None:
    line = alert_line(stored_canary())

    assert line.startswith(
        "#7 edited_rate, configuration seo-assistant-canary, week of 2026-11-16 against "
        "2026-10-19 – 2026-11-15 (weeks): "
    )
    assert "5.0% (160/3,200, 95% CI 4.3% – 5.8%) → 37.5% (300/800, 95% CI 34.2% – 40.9%)" in line
    assert "rise of +32.5 points (95% CI +29.1 to +36.0)" in line
    assert "p < 0.0001, adjusted p < 0.0001; since " in line


def test_an_alert_line_gives_the_adjusted_p_beside_the_raw_one() -> None:
    stored = stored_canary()
    among = replace(stored, alert=replace(stored.alert, p_value=0.0031, adjusted_p_value=0.0248))

    assert ", p = 0.0031, adjusted p = 0.0248; since " in alert_line(among)
    assert alert_json(among)["difference"]["adjusted_p_value"] == 0.0248


def test_an_alert_stored_before_the_adjusted_p_was_kept_says_it_has_none() -> None:
    stored = stored_canary()
    older = replace(stored, alert=replace(stored.alert, adjusted_p_value=None))

    assert ", p < 0.0001, adjusted p not kept; since " in alert_line(older)
    assert alert_json(older)["difference"]["adjusted_p_value"] is None


def test_an_alert_as_json_names_its_group_and_gives_both_sides_and_the_difference() -> None:
    document = alert_json(stored_canary())

    assert document["group"] == "configuration:seo-assistant-canary"
    assert (document["kind"], document["at"], document["release"]) == ("trend", "2026-11-16", None)
    assert document["before"]["numerator"] == 160 and document["after"]["denominator"] == 800
    assert document["difference"]["after_minus_before"] == pytest.approx(0.325)
    assert document["status"] == "open" and document["closed_at"] is None
    assert document["text"] == alert_line(stored_canary())
