"""Above the transcript: which completed answers runrecord marks, and where; each is marked in place too."""

from __future__ import annotations

from collections.abc import Collection

import streamlit as st

from core.answer_readings import AnswerReading
from dashboard.queries.readings import readings_summary


def show(readings: Collection[AnswerReading], *, key: str) -> None:
    """A line per kind of mark with the answers' positions, or that no completed answer is marked, or that
    there is none."""
    with st.container(key=key):
        lines = readings_summary(readings)
        if not readings:
            st.caption("runrecord's reading: no run of this conversation gave a completed answer.")
            return
        if not lines:
            said = (
                "the one completed answer claims no change its run did not write, carries no notice the "
                "recomputation does not give, and denies no recorded writes."
                if len(readings) == 1
                else f"none of the {len(readings):,} completed answers claims a change its run did not "
                "write, carries a notice the recomputation does not give, or denies recorded writes."
            )
            st.caption(f"runrecord's reading: {said}")
            return
        st.markdown("**runrecord's reading** (marked in place below): " + "; ".join(lines) + ".")
