"""A comparison as the command line prints it and `--json` gives it (`runrecord compare`, measure-rates)."""

from __future__ import annotations

import math
from typing import Any

from core.comparison import ComparisonReport, Need, Needed, Side
from core.formatting import count, group_text, p_text, percent, plural, points
from core.groups import MIN_GROUP_RUNS
from core.metrics import DEFINITIONS
from core.rates import Interval
from core.rule_versions import mixing_note
from core.verdicts import MIN_DETECTABLE_DIFFERENCE, RULE


def _interval(interval: Interval | None) -> str:
    return "–" if interval is None else f"{interval.low * 100:.1f}% – {interval.high * 100:.1f}%"


def need_line(name: str, need: Need) -> str:
    """What one side has and still needs: none more, or how many more and how many weeks at its volume."""
    if need.more == 0:
        return f"    {name} has {need.have:,}: none more"
    weeks = (
        f"no end in sight at its {need.weekly:,} in the last seven days"
        if need.weeks is None
        else f"about {plural(need.weeks, 'week')} at its {count(need.weekly)} a week"
    )
    return f"    {name} has {need.have:,}: {need.more:,} more, {weeks}"


def needed_lines(needed: Needed | None, names: tuple[str, str]) -> list[str]:
    """The runs each side needs while the verdict is too few to tell; nothing once it is told."""
    if needed is None or needed.per_side == 0:
        return []
    return [
        f"  to tell a {MIN_DETECTABLE_DIFFERENCE * 100:g}-point difference apart at these rates, each "
        f"side needs {needed.per_side:,} in its denominator:",
        need_line(names[0], needed.first),
        need_line(names[1], needed.second),
    ]


def need_json(needed: Needed | None) -> dict[str, Any] | None:
    """The runs each side needs for `--json`."""

    def need(value: Need) -> dict[str, Any]:
        return {"have": value.have, "more": value.more, "weekly": value.weekly, "weeks": value.weeks}

    if needed is None:
        return None
    return {"per_side": needed.per_side, "first": need(needed.first), "second": need(needed.second)}


def comparison_text(report: ComparisonReport) -> list[str]:
    """The comparison as the lines compare prints."""
    definition = DEFINITIONS[report.metric]
    marker = f" (release: {'; '.join(report.releases)})" if report.releases else ""
    lines = [
        f"{report.metric.value}, {group_text(report.group)}, at {report.at.isoformat()}{marker}",
        f"  numerator:   {definition.numerator}",
        f"  denominator: {definition.denominator}",
        f"  excluded:    {definition.excluded}",
    ]
    for name, side in (("before", report.before), ("after", report.after)):
        span = f"{side.first.isoformat()} – {side.last_day(report.grain).isoformat()}"
        periods = f"{plural(len(side.periods), report.grain.value)}, {side.with_data} with data"
        if side.open_periods:
            periods += f", {side.open_periods} still open"
        if not side.shown:
            few = f"fewer than {MIN_GROUP_RUNS} runs in a {report.grain.value}"
            lines.append(f"  {name:<6}  {span} ({periods}): too few to show ({few})")
            continue
        p = side.proportion
        lines.append(
            f"  {name:<6}  {span} ({periods}): {p.numerator:,} / {p.denominator:,} = {percent(p.rate)}, "
            f"95% CI {_interval(p.interval)}, excluded {side.excluded:,}"
        )
        note = mixing_note(side.rule_versions)
        if note is not None:
            lines.append(f"  {name:<6}  {note}")
    if report.straddling is not None:
        lines.append(f"  the week of {report.straddling.isoformat()} holds the date and is on neither side")
    comparison = report.comparison
    if comparison is not None and comparison.difference is not None:
        interval = comparison.difference_interval
        assert interval is not None and comparison.p_value is not None
        lines.append(
            f"  difference {points(comparison.difference)} points, 95% CI {points(interval.low)} to "
            f"{points(interval.high)} (Newcombe); two-proportion z-test {p_text(comparison.p_value)}"
        )
    lines.append(f"  → {report.verdict}")
    lines += needed_lines(report.needed, ("before", "after"))
    lines.append(f"  rule: {RULE}")
    return lines


def comparison_line(report: ComparisonReport) -> str:
    """One line per metric, as measure-rates prints it under a release."""
    before, after = report.before.proportion, report.after.proportion
    text = (
        f"{report.metric.value:<24} {percent(before.rate):>6} ({before.numerator}/{before.denominator}) → "
        f"{percent(after.rate):>6} ({after.numerator}/{after.denominator})"
    )
    comparison = report.comparison
    if comparison is not None and comparison.difference is not None and comparison.p_value is not None:
        text += f"  {points(comparison.difference)} points, {p_text(comparison.p_value)}"
    return f"{text}: {report.verdict}"


def comparison_json(report: ComparisonReport) -> dict[str, Any]:
    """The comparison for `--json`; a side too few to show carries no figures."""

    def side(value: Side) -> dict[str, Any]:
        shown_side: dict[str, Any] = {
            "from": value.first.isoformat(),
            "to": value.last_day(report.grain).isoformat(),
            "periods": len(value.periods),
            "periods_with_data": value.with_data,
            "open_periods": value.open_periods,
        }
        if not value.shown:
            return {**shown_side, "too_few_to_show": True}
        interval = value.proportion.interval
        return {
            **shown_side,
            "numerator": value.proportion.numerator,
            "denominator": value.proportion.denominator,
            "excluded": value.excluded,
            "rate": value.proportion.rate,
            "wilson_95": None if interval is None else [interval.low, interval.high],
            "rule_versions": list(value.rule_versions),
        }

    comparison = report.comparison
    difference: dict[str, Any] | None = None
    if comparison is not None:
        interval = comparison.difference_interval
        difference = {
            "after_minus_before": comparison.difference,
            "newcombe_95": None if interval is None else [interval.low, interval.high],
            "p_value": None
            if comparison.p_value is None or math.isnan(comparison.p_value)
            else comparison.p_value,
            "too_few_to_tell": comparison.too_few_to_tell,
            "significant": comparison.significant,
        }
    definition = DEFINITIONS[report.metric]
    return {
        "metric": report.metric.value,
        "definition": {
            "numerator": definition.numerator,
            "denominator": definition.denominator,
            "excluded": definition.excluded,
        },
        "group": report.group.label,
        "grain": report.grain.value,
        "at": report.at.isoformat(),
        "weeks": report.weeks,
        "releases": list(report.releases),
        "straddling_period": None if report.straddling is None else report.straddling.isoformat(),
        "before": side(report.before),
        "after": side(report.after),
        "difference": difference,
        "verdict": report.verdict,
        "needed": need_json(report.needed),
        "rule": RULE,
    }
