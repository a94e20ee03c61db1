"""How often the recomputed nothingSaved agrees with the chat's stored notice, over every period since the
first stored notice: the evidence that the recomputed rate before the notice measures the same thing."""

from __future__ import annotations

import streamlit as st

from core.formatting import count, interval_text, percent, plural
from dashboard.queries.rates import Agreement

TITLE = "Recomputed nothingSaved agrees with the chat's notice"
# The last measurement on this database stored no notice_agreement (it predates the metric).
NOT_COUNTED = (
    "The agreement with the chat's own notices is not counted on this database yet: the next "
    "`runrecord measure-rates` of this grain (`--grain day` for days; the scheduler measures both) "
    "counts it."
)
NO_NOTICE = (
    "No completed answer carries a stored nothingSaved notice yet: there is nothing to compare the "
    "recomputation with."
)


def show(agreement: Agreement | None, grain: str, *, key: str) -> None:
    """The figure with its numerator and denominator, or why there is none."""
    if agreement is None:
        st.caption(NOT_COUNTED)
        return
    if agreement.first_period is None:
        st.info(NO_NOTICE)
        return
    proportion = agreement.proportion
    value = "no data" if proportion.rate is None else percent(proportion.rate)
    st.metric(TITLE, value, border=True)
    figures = f"{count(proportion.numerator)} of {plural(proportion.denominator, 'completed answer')}"
    interval = proportion.interval
    if interval is not None:
        figures += f" (95% interval {interval_text(interval.low, interval.high)})"
    excluded = f"; {count(agreement.excluded)} excluded (cannot tell)" if agreement.excluded else ""
    st.caption(
        f"{figures} from the first stored notice on (the {grain} of "
        f"{agreement.first_period.isoformat()}){excluded}: the recomputation from the runs' events and the "
        "notice the chat stored say the same."
    )
