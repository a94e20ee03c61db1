"""The survival of AI text per group (core.survival_report), and how `runrecord survival` prints it."""

from __future__ import annotations

import json

import pytest

from core.groups import ALL_RUNS, Group, GroupKind
from core.survival import Tally
from core.survival_report import MARKS_S, GroupTallies, marks_within, survival_report
from core.survival_text import duration_text, mark_text, survival_json, survival_text
from core.time import DAY_S

WINDOW = 7 * DAY_S
HOUR = 3600
STABLE = Group(GroupKind.CONFIGURATION, "seo-assistant")
CANARY = Group(GroupKind.CONFIGURATION, "seo-assistant-canary")


def counted(
    group: Group, tallies: list[Tally], runs: int, unknown: int = 0, undated: int = 0
) -> GroupTallies:
    return GroupTallies(group, tuple(tallies), runs, unknown, undated, WINDOW)


STABLE_WRITES = [Tally(3 * DAY_S, 2, 0), Tally(6 * DAY_S, 1, 0), Tally(WINDOW, 0, 17)]
CANARY_WRITES = [Tally(HOUR // 2, 6, 0), Tally(5 * HOUR, 8, 0), Tally(2 * DAY_S, 2, 0), Tally(WINDOW, 0, 4)]


def test_the_curve_is_read_at_the_marks_inside_the_window_and_at_its_end() -> None:
    assert marks_within(WINDOW) == MARKS_S
    assert marks_within(3 * DAY_S) == (HOUR, DAY_S, 2 * DAY_S, 3 * DAY_S)
    assert marks_within(DAY_S + 1) == (HOUR, DAY_S, DAY_S + 1)


def test_a_configuration_with_fewer_than_five_runs_is_too_few_to_show() -> None:
    report = survival_report([counted(CANARY, CANARY_WRITES, runs=4)], window_s=WINDOW)

    (curve,) = report.curves
    assert not curve.shown and curve.curve is None
    assert (
        survival_text(report)[-1] == "configuration seo-assistant-canary: too few to show (fewer than 5 runs)"
    )
    assert survival_json(report)["curves"] == [{"group": CANARY.label, "too_few_to_show": True}]


def test_all_writes_are_shown_however_few_runs_they_come_from() -> None:
    report = survival_report(
        [counted(ALL_RUNS, [Tally(HOUR, 1, 0), Tally(WINDOW, 0, 1)], runs=2)], window_s=WINDOW
    )

    assert report.curves[0].shown


def test_two_shown_configurations_get_the_log_rank_test_and_a_hidden_one_none() -> None:
    both = survival_report(
        [counted(STABLE, STABLE_WRITES, 20), counted(CANARY, CANARY_WRITES, 10)], window_s=WINDOW
    )
    hidden = survival_report(
        [counted(STABLE, STABLE_WRITES, 20), counted(CANARY, CANARY_WRITES, 3)], window_s=WINDOW
    )

    assert both.log_rank is not None and both.log_rank.p_value < 0.05
    assert hidden.log_rank is None
    assert "not computed, a side is too few to show" in survival_text(hidden)[-1]


def test_the_text_gives_each_mark_with_its_band_and_writes_at_risk_the_median_and_what_was_left_out() -> None:
    report = survival_report(
        [counted(STABLE, STABLE_WRITES, 20, unknown=3, undated=1), counted(CANARY, CANARY_WRITES, 10)],
        window_s=WINDOW,
    )

    text = "\n".join(survival_text(report))

    assert (
        "configuration seo-assistant: 20 writes of 20 runs; 3 changed inside the window, 17 untouched" in text
    )
    assert "left out: 3 unknown, 1 edited or discarded without a human row that dates the change" in text
    assert "     1 h     100.0%" in text  # nothing of the stable configuration was changed within the hour
    assert "median time to the first change: not reached" in text
    assert "median time to the first change: 5.0 h" in text  # 14 of the canary's 20 changed within 5 hours
    assert "χ² =" in text and "→ the curves differ significantly" in text


def test_the_json_gives_marks_and_the_median_never_the_per_write_times() -> None:
    report = survival_report([counted(CANARY, CANARY_WRITES, 10)], window_s=WINDOW)

    document = survival_json(report)

    (curve,) = document["curves"]
    assert [mark["t"] for mark in curve["marks"]] == ["1 h", "1 d", "2 d", "3 d", "5 d", "7 d"]
    assert curve["marks"][0] == {
        "t_s": HOUR,
        "t": "1 h",
        "untouched": pytest.approx(14 / 20),
        "band_95": [
            pytest.approx(curve["marks"][0]["band_95"][0]),
            pytest.approx(curve["marks"][0]["band_95"][1]),
        ],
        "at_risk": 14,
    }
    assert curve["median_s"] == 5 * HOUR
    assert set(curve) == {
        "group",
        "runs",
        "writes",
        "changed",
        "untouched_at_window_end",
        "left_out",
        "marks",
        "median_s",
    }
    assert '"t_s": 1800' not in json.dumps(document)  # the first changes' own time is no figure of it


@pytest.mark.parametrize(
    ("seconds", "mark", "duration"),
    [
        (HOUR, "1 h", "1.0 h"),
        (45 * 60, "45 min", "45 min"),
        (2 * DAY_S, "2 d", "2.0 d"),
        (90 * 60, "90 min", "1.5 h"),
        (30 * HOUR, "30 h", "30.0 h"),
    ],
)
def test_times_read_in_minutes_hours_or_days(seconds: int, mark: str, duration: str) -> None:
    assert (mark_text(seconds), duration_text(seconds)) == (mark, duration)
