"""One configuration against another: both sides, the difference, the verdict, and what each side lacks.

The report is core.between's (`runrecord compare --between` prints the same one), so the panel and the
command always agree.
"""

from __future__ import annotations

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from core.between import BetweenReport
from core.between_text import NEED_RULE
from core.comparison import TOO_FEW_TO_SHOW, Need, Side
from core.formatting import count, p_text, percent, plural, points
from core.groups import MIN_GROUP_RUNS
from core.rule_versions import mixing_note
from core.verdicts import RULE
from dashboard.components import verdict


def show(report: BetweenReport | None, label: str, *, key: str) -> None:
    """Both sides with their intervals and denominators, the difference with its interval, the verdict and
    the runs each side still needs; an explicit state without a period both configurations have."""
    if report is None:
        st.info("These two configurations have no closed period of this rate in common yet.")
        return
    names = [group.value for group in report.groups]
    first, second, difference = st.columns(3)
    _side(first, names[0], report.first, report)
    _side(second, names[1], report.second, report)
    comparison = report.comparison
    if comparison is None or comparison.difference is None:
        difference.metric("Difference", "—")
        difference.caption("needs both sides shown")
    else:
        difference.metric("Difference", f"{points(comparison.difference)} points")
        interval = comparison.difference_interval
        if interval is not None and comparison.p_value is not None:
            difference.caption(
                f"{names[1]} − {names[0]}; 95% interval {points(interval.low)} to "
                f"{points(interval.high)} points (Newcombe); {p_text(comparison.p_value)}"
            )
    span = f"{report.periods[0].isoformat()} – {report.last_day().isoformat()}"
    periods = plural(len(report.periods), f"closed {report.grain.value}")
    text = f"{label}, {names[1]} against {names[0]} over {periods} ({span}): **{report.verdict}**."
    verdict.show(text, report.verdict)
    needed = report.needed
    if needed is not None and needed.per_side > 0:
        st.markdown(
            f"To tell a 5-point difference apart at these rates each side needs **{count(needed.per_side)}** "
            f"in its denominator: {_need(names[0], needed.first)}; {_need(names[1], needed.second)}."
        )
    st.caption(f"Rule: {RULE}. Runs needed: {NEED_RULE}.")


def _need(name: str, need: Need) -> str:
    if need.more == 0:
        return f"{name} has {count(need.have)}, none more"
    if need.weeks is None:
        return (
            f"{name} has {count(need.have)}, {count(need.more)} more, and had none in the span's last "
            "seven days"
        )
    weeks = f"about {plural(need.weeks, 'week')} at its {count(need.weekly)} a week"
    return f"{name} has {count(need.have)}, {count(need.more)} more ({weeks})"


def _side(column: DeltaGenerator, title: str, side: Side, report: BetweenReport) -> None:
    if not side.shown:
        column.metric(title, TOO_FEW_TO_SHOW)
        column.caption(f"fewer than {MIN_GROUP_RUNS} runs in a {report.grain.value}")
        return
    proportion = side.proportion
    column.metric(title, "no data" if proportion.rate is None else percent(proportion.rate))
    interval = proportion.interval
    figures = f"{count(proportion.numerator)} of {count(proportion.denominator)}"
    if interval is not None:
        figures += f"; 95% interval {percent(interval.low)} – {percent(interval.high)}"
    if side.excluded:
        figures += f"; {count(side.excluded)} excluded"
    column.caption(figures)
    note = mixing_note(side.rule_versions)
    if note is not None:
        column.caption(f"This side {note}.")
