"""How a two-sided report reads, whatever chose its sides: the lines `runrecord compare` prints (--at and
--between), its `--json`, and the words of the Rates page's panel. Every figure is in core.formatting's
style (shares, signed points, p-values, counts with separators).

What differs by kind is data, a `Framing` that core.comparison_text and core.between_text give: the heading,
each side's name and span, the lines around the sides, the JSON keys and the page's titles and sentence.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from core import formatting
from core.formatting import NO_FIGURE, count, p_text, percent, plural, points
from core.groups import MIN_GROUP_RUNS
from core.metrics import DEFINITIONS
from core.rates import Interval, method_name
from core.rule_versions import mixing_note
from core.two_sided import TOO_FEW_TO_SHOW, Need, Needed, Side, TwoSided
from core.verdicts import MIN_DETECTABLE_DIFFERENCE, RULE

NEED_RULE = (
    f"runs each side needs to tell a {MIN_DETECTABLE_DIFFERENCE * 100:g}-point difference apart at the "
    "observed rates: n = z² (p₁(1 − p₁) + p₂(1 − p₂)) / d² (Wald), raised until Newcombe's interval at n "
    "is no wider; weeks at the side's volume in the last seven days of its periods"
)


@dataclass(frozen=True)
class Framing:
    """How one report names what chose its sides, for the command line, `--json` and the page."""

    heading: str  # the first line: the metric, the group or groups, the date
    names: tuple[str, str]  # each side's name in a line: "before", "after", or the configurations
    labels: tuple[str, str]  # each side's line starts with it: its name, and its span when the sides differ
    keys: tuple[str, str]  # each side's key in `--json`
    titles: tuple[str, str]  # each side's column on the page
    sentence: str  # the page's verdict sentence
    lead: tuple[str, ...] = ()  # lines before the sides (the span both share)
    notes: tuple[str, ...] = ()  # lines after the sides (a period on neither side)
    spans: tuple[str, str] = ("", "")  # each side's span on the page, "" when both share it
    about: Mapping[str, Any] = field(default_factory=dict)  # `--json` members after the definition
    sides_about: tuple[Mapping[str, Any], Mapping[str, Any]] = ({}, {})  # each side's, before its figures


def interval_text(interval: Interval | None) -> str:
    """A share's 95% interval: "10.8% – 19.9%", or "–" without one."""
    return NO_FIGURE if interval is None else formatting.interval_text(interval.low, interval.high)


def too_few(report: TwoSided) -> str:
    """Why a side is not shown."""
    return f"fewer than {MIN_GROUP_RUNS} runs in a {report.grain.value}"


def side_figures(side: Side) -> str:
    """A shown side as a line gives it: "34 / 230 = 14.8%, 95% CI 10.8% – 19.9%, excluded 0"."""
    p = side.proportion
    return (
        f"{count(p.numerator)} / {count(p.denominator)} = {percent(p.rate)}, 95% CI "
        f"{interval_text(p.interval)}, excluded {count(side.excluded)}"
    )


def difference_text(report: TwoSided, names: tuple[str, str]) -> str | None:
    """The difference, second side minus first, with its interval and p; None without one."""
    comparison = report.comparison
    if comparison is None or comparison.difference is None:
        return None
    interval = comparison.difference_interval
    assert interval is not None and comparison.p_value is not None
    return (
        f"{points(comparison.difference)} points ({names[1]} − {names[0]}), 95% CI {points(interval.low)} to "
        f"{points(interval.high)} (Newcombe); {method_name(comparison.before, comparison.after)} "
        f"{p_text(comparison.p_value)}"
    )


def need_text(name: str, need: Need) -> str:
    """What one side has and still needs: none more, or how many more and how many weeks at its volume."""
    if need.more == 0:
        return f"{name} has {count(need.have)}: none more"
    weeks = (
        f"no end in sight at its {count(need.weekly)} in the last seven days"
        if need.weeks is None
        else f"about {plural(need.weeks, 'week')} at its {count(need.weekly)} a week"
    )
    return f"{name} has {count(need.have)}: {count(need.more)} more, {weeks}"


def needed_text(needed: Needed | None) -> str | None:
    """While the verdict is too few to tell: the runs each side needs; None once it is told."""
    if needed is None or needed.per_side == 0:
        return None
    return (
        f"to tell a {MIN_DETECTABLE_DIFFERENCE * 100:g}-point difference apart at these rates, each side "
        f"needs {count(needed.per_side)} in its denominator"
    )


def lines(report: TwoSided, framing: Framing) -> list[str]:
    """The report as the lines `runrecord compare` prints."""
    definition = DEFINITIONS[report.metric]
    found = [
        framing.heading,
        f"  numerator:   {definition.numerator}",
        f"  denominator: {definition.denominator}",
        f"  excluded:    {definition.excluded}",
        *(f"  {line}" for line in framing.lead),
    ]
    for name, label, side in zip(framing.names, framing.labels, (report.first, report.second), strict=True):
        if not side.shown:
            found.append(f"  {label}: {TOO_FEW_TO_SHOW} ({too_few(report)})")
            continue
        found.append(f"  {label}: {side_figures(side)}")
        note = mixing_note(side.rule_versions)
        if note is not None:
            found.append(f"  {name} {note}")
    found += [f"  {line}" for line in framing.notes]
    difference = difference_text(report, framing.names)
    if difference is not None:
        found.append(f"  difference {difference}")
    found.append(f"  → {report.verdict}")
    needed = needed_text(report.needed)
    if needed is not None and report.needed is not None:
        found += [
            f"  {needed}:",
            f"    {need_text(framing.names[0], report.needed.first)}",
            f"    {need_text(framing.names[1], report.needed.second)}",
        ]
    found.append(f"  rule: {RULE}")
    return found


def _side_json(side: Side, about: Mapping[str, Any]) -> dict[str, Any]:
    if not side.shown:
        return {**about, "too_few_to_show": True}
    interval = side.proportion.interval
    return {
        **about,
        "numerator": side.proportion.numerator,
        "denominator": side.proportion.denominator,
        "excluded": side.excluded,
        "rate": side.proportion.rate,
        "wilson_95": None if interval is None else [interval.low, interval.high],
        "rule_versions": list(side.rule_versions),
    }


def _need_json(need: Need) -> dict[str, Any]:
    return {"have": need.have, "more": need.more, "weekly": need.weekly, "weeks": need.weeks}


def document(report: TwoSided, framing: Framing) -> dict[str, Any]:
    """The report for `--json`; a side too few to show carries no figures."""
    comparison = report.comparison
    difference: dict[str, Any] | None = None
    if comparison is not None:
        interval = comparison.difference_interval
        p_value = comparison.p_value
        difference = {
            f"{framing.keys[1]}_minus_{framing.keys[0]}": comparison.difference,
            "newcombe_95": None if interval is None else [interval.low, interval.high],
            "p_value": None if p_value is None or math.isnan(p_value) else p_value,
            "test": None if p_value is None else method_name(comparison.before, comparison.after),
            "too_few_to_tell": comparison.too_few_to_tell,
            "significant": comparison.significant,
        }
    needed = report.needed
    definition = DEFINITIONS[report.metric]
    return {
        "metric": report.metric.value,
        "definition": {
            "numerator": definition.numerator,
            "denominator": definition.denominator,
            "excluded": definition.excluded,
        },
        **framing.about,
        framing.keys[0]: _side_json(report.first, framing.sides_about[0]),
        framing.keys[1]: _side_json(report.second, framing.sides_about[1]),
        "difference": difference,
        "verdict": report.verdict,
        "needed": None
        if needed is None
        else {
            "per_side": needed.per_side,
            "first": _need_json(needed.first),
            "second": _need_json(needed.second),
        },
        "rule": RULE,
        "need_rule": NEED_RULE,
    }
