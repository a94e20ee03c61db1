"""The survival of AI text as `runrecord survival` prints it and `--json` gives it."""

from __future__ import annotations

from typing import Any

from core.formatting import group_text, p_text, percent
from core.groups import MIN_GROUP_RUNS
from core.survival import LogRank
from core.survival_report import HOUR_S, GroupCurve, SurvivalReport
from core.time import DAY_S
from core.verdicts import is_significant

METHOD = (
    "Kaplan–Meier; 95% band from Greenwood's variance on the log(−log S) scale; a write nothing changed is "
    "censored at the end of its window"
)
TOO_FEW = f"too few to show (fewer than {MIN_GROUP_RUNS} runs)"


def mark_text(seconds: int) -> str:
    """A mark as it reads in a line: 1 h, 2 d, 90 min."""
    if seconds % DAY_S == 0:
        return f"{seconds // DAY_S} d"
    if seconds % HOUR_S == 0:
        return f"{seconds // HOUR_S} h"
    return f"{seconds / 60:.0f} min"


def duration_text(seconds: int) -> str:
    """A time after the write: minutes below an hour, hours below two days, else days."""
    if seconds < HOUR_S:
        return f"{seconds / 60:.0f} min"
    if seconds < 2 * DAY_S:
        return f"{seconds / HOUR_S:.1f} h"
    return f"{seconds / DAY_S:.1f} d"


def median_text(curve: GroupCurve, window_s: int) -> str:
    """The median time to the first change, or why it is not reached."""
    assert curve.curve is not None
    median = curve.curve.median
    if median is None:
        return f"not reached (more than half untouched at {mark_text(window_s)}, the window's end)"
    return duration_text(median)


def log_rank_verdict(test: LogRank) -> str:
    """ "the curves differ significantly" when p < 0.05 (core.verdicts.is_significant, the rule every
    comparison uses), else "no significant difference": a log-rank test has no interval of a difference in
    points, so the ±5-point part of the rule does not apply to it."""
    return "the curves differ significantly" if is_significant(test.p_value) else "no significant difference"


def survival_text(report: SurvivalReport) -> list[str]:
    """The report as the lines `runrecord survival` prints."""
    lines = [
        "survival of AI text: the share of derived writes with a known outcome that no human has changed "
        "yet, t after the write",
        f"  ({METHOD}: {mark_text(report.window_s)})",
    ]
    for curve in report.curves:
        lines += _curve_lines(curve, report)
    if len(report.curves) == 2:
        first, second = (group_text(curve.group) for curve in report.curves)
        test = report.log_rank
        if test is None:
            lines.append(f"log-rank test, {first} against {second}: not computed, a side is too few to show")
        else:
            lines.append(
                f"log-rank test, {first} against {second}: χ² = {test.chi_square:.2f} (1 df), "
                f"{p_text(test.p_value)}; changed {test.observed[0]:,} (expected {test.expected[0]:,.1f}) "
                f"against {test.observed[1]:,} (expected {test.expected[1]:,.1f}) → {log_rank_verdict(test)}"
            )
    return lines


def _curve_lines(curve: GroupCurve, report: SurvivalReport) -> list[str]:
    name = "all writes" if curve.group.label == "all" else group_text(curve.group)
    if curve.curve is None:
        return [f"{name}: {TOO_FEW}"]
    km = curve.curve
    lines = [
        f"{name}: {km.writes:,} writes of {curve.runs:,} runs; {km.events:,} changed inside the window, "
        f"{km.censored:,} untouched at its end; left out: {curve.unknown:,} unknown, "
        f"{curve.undated:,} edited or discarded without a human row that dates the change",
        f"  {'t':>6}  {'untouched':>9}  {'95% band':<15}  {'at risk':>8}",
    ]
    for mark in report.marks:
        band = km.band_at(mark)
        lines.append(
            f"  {mark_text(mark):>6}  {percent(km.survival_at(mark)):>9}  "
            f"{percent(band.low) + ' – ' + percent(band.high):<15}  {km.at_risk_at(mark):>8,}"
        )
    lines.append(f"  median time to the first change: {median_text(curve, report.window_s)}")
    return lines


def survival_json(report: SurvivalReport) -> dict[str, Any]:
    """The report for `--json`: each curve's marks and median, never its per-write times."""
    test = report.log_rank
    return {
        "method": METHOD,
        "window_s": report.window_s,
        "curves": [_curve_json(curve, report) for curve in report.curves],
        "log_rank": None
        if test is None
        else {
            "observed": list(test.observed),
            "expected": list(test.expected),
            "chi_square": test.chi_square,
            "degrees_of_freedom": 1,
            "p_value": test.p_value,
            "significant": is_significant(test.p_value),
        },
    }


def _curve_json(curve: GroupCurve, report: SurvivalReport) -> dict[str, Any]:
    if curve.curve is None:
        return {"group": curve.group.label, "too_few_to_show": True}
    km = curve.curve
    return {
        "group": curve.group.label,
        "runs": curve.runs,
        "writes": km.writes,
        "changed": km.events,
        "untouched_at_window_end": km.censored,
        "left_out": {"unknown": curve.unknown, "undated": curve.undated},
        "marks": [
            {
                "t_s": mark,
                "t": mark_text(mark),
                "untouched": km.survival_at(mark),
                "band_95": list(km.band_at(mark)),
                "at_risk": km.at_risk_at(mark),
            }
            for mark in report.marks
        ],
        "median_s": km.median,
    }
