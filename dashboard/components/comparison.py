"""A before/after panel for a release marker: both sides, the difference, its interval, and the verdict.

The report is core.comparison's (`runrecord compare` prints the same one), so the panel and the command always
agree.
"""

from __future__ import annotations

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from core.comparison import ComparisonReport, Side
from core.formatting import count, p_text, percent, plural, points
from core.rule_versions import mixing_note
from core.verdicts import RULE, headline
from dashboard.components import verdict


def show(report: ComparisonReport, label: str, *, key: str) -> None:
    """Both sides with their intervals and denominators, the difference with its interval, the verdict."""
    before, after, difference = st.columns(3)
    _side(before, "Before", report.before, report)
    _side(after, "From the release on", report.after, report)
    comparison = report.comparison
    if comparison is None or comparison.difference is None:
        difference.metric("Difference", "—")
        difference.caption("needs data on both sides")
    else:
        difference.metric("Difference", f"{points(comparison.difference)} points")
        interval = comparison.difference_interval
        if interval is not None and comparison.p_value is not None:
            difference.caption(
                f"95% interval {points(interval.low)} to {points(interval.high)} points (Newcombe); "
                f"{p_text(comparison.p_value)}"
            )
    text = (
        f"**{headline(label, report.verdict)}** across {report.at.isoformat()}, "
        f"{plural(report.weeks, 'week')} each side."
    )
    verdict.show(text, report.verdict)
    notes = [f"Rule: {RULE}."]
    if report.straddling is not None:
        notes.append(
            f"The week of {report.straddling.isoformat()} holds the date and is counted on neither side."
        )
    st.caption(" ".join(notes))


def _side(column: DeltaGenerator, title: str, side: Side, report: ComparisonReport) -> None:
    span = f"{side.first.isoformat()} – {side.last_day(report.grain).isoformat()}"
    if not side.shown:
        column.metric(title, "too few to show")
        column.caption(span)
        return
    proportion = side.proportion
    column.metric(title, "no data" if proportion.rate is None else percent(proportion.rate))
    interval = proportion.interval
    figures = f"{count(proportion.numerator)} of {count(proportion.denominator)}"
    if interval is not None:
        figures += f"; 95% interval {percent(interval.low)} – {percent(interval.high)}"
    if side.excluded:
        figures += f"; {count(side.excluded)} excluded"
    extra = f", {side.open_periods} still open" if side.open_periods else ""
    periods = plural(len(side.periods), report.grain.value)
    column.caption(f"{figures}. {span} ({side.with_data} of {periods} with data{extra})")
    note = mixing_note(side.rule_versions)
    if note is not None:
        column.caption(f"This side {note}.")
