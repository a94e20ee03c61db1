"""A configuration against another as `runrecord compare --between` prints it and `--json` gives it."""

from __future__ import annotations

from typing import Any

from core.between import BetweenReport
from core.comparison import Side
from core.comparison_text import need_json, needed_lines
from core.formatting import group_text, p_text, percent, plural, points
from core.groups import MIN_GROUP_RUNS
from core.metrics import DEFINITIONS
from core.rule_versions import mixing_note
from core.verdicts import MIN_DETECTABLE_DIFFERENCE, RULE

NEED_RULE = (
    f"runs each side needs to tell a {MIN_DETECTABLE_DIFFERENCE * 100:g}-point difference apart at the "
    "observed rates: n = z² (p₁(1 − p₁) + p₂(1 − p₂)) / d² (Wald), raised until Newcombe's interval at n "
    "is no wider; weeks at the side's volume in the span's last seven days"
)


def _name(report: BetweenReport, index: int) -> str:
    return report.groups[index].value or "(none)"


def _side_line(report: BetweenReport, index: int, side: Side) -> str:
    name = _name(report, index)
    if not side.shown:
        return f"  {name}: too few to show (fewer than {MIN_GROUP_RUNS} runs in a {report.grain.value})"
    p = side.proportion
    interval = p.interval
    ci = "–" if interval is None else f"{interval.low * 100:.1f}% – {interval.high * 100:.1f}%"
    return (
        f"  {name}: {p.numerator:,} / {p.denominator:,} = {percent(p.rate)}, 95% CI {ci}, "
        f"excluded {side.excluded:,}"
    )


def between_text(report: BetweenReport) -> list[str]:
    """The comparison as the lines compare --between prints."""
    definition = DEFINITIONS[report.metric]
    first, second = (group_text(group) for group in report.groups)
    lines = [
        f"{report.metric.value}, {second} against {first}",
        f"  numerator:   {definition.numerator}",
        f"  denominator: {definition.denominator}",
        f"  excluded:    {definition.excluded}",
        f"  over {report.periods[0].isoformat()} – {report.last_day().isoformat()}: "
        f"{plural(len(report.periods), 'closed ' + report.grain.value)} both have",
        _side_line(report, 0, report.first),
        _side_line(report, 1, report.second),
    ]
    for index, side in enumerate((report.first, report.second)):
        note = mixing_note(side.rule_versions) if side.shown else None
        if note is not None:
            lines.append(f"  {_name(report, index)} {note}")
    comparison = report.comparison
    if comparison is not None and comparison.difference is not None:
        interval = comparison.difference_interval
        assert interval is not None and comparison.p_value is not None
        lines.append(
            f"  difference {points(comparison.difference)} points "
            f"({_name(report, 1)} − {_name(report, 0)}), 95% CI {points(interval.low)} to "
            f"{points(interval.high)} (Newcombe); two-proportion z-test {p_text(comparison.p_value)}"
        )
    lines.append(f"  → {report.verdict}")
    lines += needed_lines(report.needed, (_name(report, 0), _name(report, 1)))
    lines.append(f"  rule: {RULE}")
    return lines


def between_json(report: BetweenReport) -> dict[str, Any]:
    """The comparison for `--json`; a side too few to show carries no figures."""

    def side(value: Side) -> dict[str, Any]:
        if not value.shown:
            return {"too_few_to_show": True}
        interval = value.proportion.interval
        return {
            "numerator": value.proportion.numerator,
            "denominator": value.proportion.denominator,
            "excluded": value.excluded,
            "rate": value.proportion.rate,
            "wilson_95": None if interval is None else [interval.low, interval.high],
            "rule_versions": list(value.rule_versions),
        }

    comparison = report.comparison
    difference: dict[str, Any] | None = None
    if comparison is not None and comparison.difference is not None:
        interval = comparison.difference_interval
        difference = {
            "second_minus_first": comparison.difference,
            "newcombe_95": None if interval is None else [interval.low, interval.high],
            "p_value": comparison.p_value,
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
        "grain": report.grain.value,
        "between": [group.label for group in report.groups],
        "from": report.periods[0].isoformat(),
        "to": report.last_day().isoformat(),
        "periods": len(report.periods),
        "first": side(report.first),
        "second": side(report.second),
        "difference": difference,
        "verdict": report.verdict,
        "needed": need_json(report.needed),
        "rule": RULE,
        "need_rule": NEED_RULE,
    }
