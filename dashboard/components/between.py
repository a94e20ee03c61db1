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
from core.figures_text import p_text
from core.groups import MIN_GROUP_RUNS
from core.rule_versions import mixing_note
from core.verdicts import RULE, Finding


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
        difference.metric("Difference", f"{comparison.difference * 100:+.1f} points")
        interval = comparison.difference_interval
        if interval is not None and comparison.p_value is not None:
            difference.caption(
                f"{names[1]} − {names[0]}; 95% interval {interval.low * 100:+.1f} to "
                f"{interval.high * 100:+.1f} points (Newcombe); {p_text(comparison.p_value)}"
            )
    span = f"{report.periods[0].isoformat()} – {report.last_day().isoformat()}"
    text = (
        f"{label}, {names[1]} against {names[0]} over {len(report.periods)} closed {report.grain.value}s "
        f"({span}): **{report.verdict}**."
    )
    if report.verdict in (Finding.TOO_FEW_TO_TELL.value, TOO_FEW_TO_SHOW):
        st.warning(text, icon=":material/help:")
    elif report.verdict.startswith("significantly"):
        st.success(text)
    else:
        st.info(text)
    needed = report.needed
    if needed is not None and needed.per_side > 0:
        st.markdown(
            f"To tell a 5-point difference apart at these rates each side needs **{needed.per_side:,}** "
            f"in its denominator: {_need(names[0], needed.first)}; {_need(names[1], needed.second)}."
        )
    st.caption(f"Rule: {RULE}. Runs needed: {NEED_RULE}.")


def _need(name: str, need: Need) -> str:
    if need.more == 0:
        return f"{name} has {need.have:,}, none more"
    if need.weeks is None:
        return f"{name} has {need.have:,}, {need.more:,} more, and had none in the span's last seven days"
    weeks = f"about {need.weeks:,} weeks at its {need.weekly:,} a week"
    return f"{name} has {need.have:,}, {need.more:,} more ({weeks})"


def _side(column: DeltaGenerator, title: str, side: Side, report: BetweenReport) -> None:
    if not side.shown:
        column.metric(title, TOO_FEW_TO_SHOW)
        column.caption(f"fewer than {MIN_GROUP_RUNS} runs in a {report.grain.value}")
        return
    proportion = side.proportion
    column.metric(title, "no data" if proportion.rate is None else f"{proportion.rate:.1%}")
    interval = proportion.interval
    figures = f"{proportion.numerator:,} of {proportion.denominator:,}"
    if interval is not None:
        figures += f"; 95% interval {interval.low:.1%} – {interval.high:.1%}"
    if side.excluded:
        figures += f"; {side.excluded:,} excluded"
    column.caption(figures)
    note = mixing_note(side.rule_versions)
    if note is not None:
        column.caption(f"This side {note}.")
