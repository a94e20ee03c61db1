"""A two-sided panel: both sides with their intervals and denominators, the difference with its interval, the
verdict, and the runs each side still needs, for a release's before/after and for one configuration against
another.

The report is core.two_sided's and its words core.two_sided_text's (`runrecord compare --at` and `--between`
print the same), so the panel and the command always agree.
"""

from __future__ import annotations

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from core import between_text, comparison_text
from core.between import BetweenReport
from core.comparison import ComparisonReport
from core.formatting import count, interval_text, p_text, percent, points
from core.rule_versions import mixing_note
from core.two_sided import TOO_FEW_TO_SHOW, Side, TwoSided
from core.two_sided_text import NEED_RULE, need_text, needed_text, too_few
from core.verdicts import RULE
from dashboard.components import verdict


def show(report: ComparisonReport | BetweenReport, label: str, *, key: str) -> None:
    """Both sides, the difference with its interval and p, the verdict, and while it is too few to tell the
    runs each side still needs."""
    framing = (
        comparison_text.framing(report, label)
        if isinstance(report, ComparisonReport)
        else between_text.framing(report, label)
    )
    sides = report.two_sided
    first, second, difference = st.columns(3)
    for column, title, span, side in zip(
        (first, second), framing.titles, framing.spans, (sides.first, sides.second), strict=True
    ):
        _side(column, title, span, side, sides)
    _difference(difference, sides, framing.names)
    verdict.show(framing.sentence, sides.verdict)
    needed, wanted = sides.needed, needed_text(sides.needed)
    if needed is not None and wanted is not None:
        st.markdown(
            f"{wanted[0].upper()}{wanted[1:]}: {need_text(framing.names[0], needed.first)}; "
            f"{need_text(framing.names[1], needed.second)}."
        )
    notes = [f"Rule: {RULE}.", f"Runs needed: {NEED_RULE}."]
    notes += [f"{note[0].upper()}{note[1:]}." for note in framing.notes]
    st.caption(" ".join(notes))


def _difference(column: DeltaGenerator, report: TwoSided, names: tuple[str, str]) -> None:
    comparison = report.comparison
    if comparison is None or comparison.difference is None:
        column.metric("Difference", "—")
        column.caption("needs both sides shown" if comparison is None else "needs data on both sides")
        return
    column.metric("Difference", f"{points(comparison.difference)} points")
    interval = comparison.difference_interval
    if interval is not None and comparison.p_value is not None:
        column.caption(
            f"{names[1]} − {names[0]}; 95% interval {points(interval.low)} to {points(interval.high)} points "
            f"(Newcombe); {p_text(comparison.p_value)}"
        )


def _side(column: DeltaGenerator, title: str, span: str, side: Side, report: TwoSided) -> None:
    if not side.shown:
        column.metric(title, TOO_FEW_TO_SHOW)
        column.caption(too_few(report) + (f". {span}" if span else ""))
        return
    proportion = side.proportion
    column.metric(title, "no data" if proportion.rate is None else percent(proportion.rate))
    interval = proportion.interval
    figures = f"{count(proportion.numerator)} of {count(proportion.denominator)}"
    if interval is not None:
        figures += f"; 95% interval {interval_text(interval.low, interval.high)}"
    if side.excluded:
        figures += f"; {count(side.excluded)} excluded"
    column.caption(figures + (f". {span}" if span else ""))
    note = mixing_note(side.rule_versions)
    if note is not None:
        column.caption(f"This side {note}.")
