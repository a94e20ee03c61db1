"""A comparison at a date as the command line prints it, `--json` gives it and the Rates page frames it
(`runrecord compare --at`, measure-rates): its framing of core.two_sided_text's report."""

from __future__ import annotations

from typing import Any

from core.comparison import ComparisonReport
from core.formatting import count, group_text, p_text, percent, plural, points
from core.two_sided import Side
from core.two_sided_text import Framing, document, lines
from core.verdicts import headline

NAMES = ("before", "after")
TITLES = ("Before", "From the release on")


def _span(report: ComparisonReport, side: Side) -> str:
    return f"{side.first.isoformat()} – {side.last_day(report.two_sided.grain).isoformat()}"


def _periods(report: ComparisonReport, side: Side) -> str:
    periods = f"{plural(len(side.periods), report.two_sided.grain.value)}, {side.with_data} with data"
    return periods + (f", {side.open_periods} still open" if side.open_periods else "")


def _page_span(report: ComparisonReport, side: Side) -> str:
    extra = f", {side.open_periods} still open" if side.open_periods else ""
    periods = plural(len(side.periods), report.two_sided.grain.value)
    return f"{_span(report, side)} ({side.with_data} of {periods} with data{extra})"


def _side_json(report: ComparisonReport, side: Side) -> dict[str, Any]:
    return {
        "from": side.first.isoformat(),
        "to": side.last_day(report.two_sided.grain).isoformat(),
        "periods": len(side.periods),
        "periods_with_data": side.with_data,
        "open_periods": side.open_periods,
    }


def framing(report: ComparisonReport, label: str | None = None) -> Framing:
    """The periods before the date against those from it; `label` names the metric on the page."""
    two_sided = report.two_sided
    marker = f" (release: {'; '.join(report.releases)})" if report.releases else ""
    sides = (report.before, report.after)
    notes: tuple[str, ...] = ()
    if report.straddling is not None:
        notes = (f"the week of {report.straddling.isoformat()} holds the date and is on neither side",)
    sentence = (
        f"**{headline(label or two_sided.metric.value, two_sided.verdict)}** across {report.at.isoformat()}, "
        f"{plural(report.weeks, 'week')} each side."
    )
    return Framing(
        heading=f"{two_sided.metric.value}, {group_text(report.group)}, at {report.at.isoformat()}{marker}",
        names=NAMES,
        labels=(
            f"{NAMES[0]:<6}  {_span(report, sides[0])} ({_periods(report, sides[0])})",
            f"{NAMES[1]:<6}  {_span(report, sides[1])} ({_periods(report, sides[1])})",
        ),
        keys=NAMES,
        titles=TITLES,
        sentence=sentence,
        notes=notes,
        spans=(_page_span(report, sides[0]), _page_span(report, sides[1])),
        about={
            "group": report.group.label,
            "grain": two_sided.grain.value,
            "at": report.at.isoformat(),
            "weeks": report.weeks,
            "releases": list(report.releases),
            "straddling_period": None if report.straddling is None else report.straddling.isoformat(),
        },
        sides_about=(_side_json(report, sides[0]), _side_json(report, sides[1])),
    )


def comparison_text(report: ComparisonReport) -> list[str]:
    """The comparison as the lines compare prints."""
    return lines(report.two_sided, framing(report))


def comparison_json(report: ComparisonReport) -> dict[str, Any]:
    """The comparison for `--json`; a side too few to show carries no figures."""
    return document(report.two_sided, framing(report))


def comparison_line(report: ComparisonReport) -> str:
    """One line per metric, as measure-rates prints it under a release."""
    two_sided = report.two_sided
    before, after = report.before.proportion, report.after.proportion
    text = (
        f"{two_sided.metric.value:<24} {percent(before.rate):>6} ({count(before.numerator)}/"
        f"{count(before.denominator)}) → {percent(after.rate):>6} ({count(after.numerator)}/"
        f"{count(after.denominator)})"
    )
    comparison = two_sided.comparison
    if comparison is not None and comparison.difference is not None and comparison.p_value is not None:
        text += f"  {points(comparison.difference)} points, {p_text(comparison.p_value)}"
    return f"{text}: {two_sided.verdict}"
