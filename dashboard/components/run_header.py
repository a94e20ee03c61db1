"""A run's facts at the top of its page: short uuid, configuration, times, how it ended, its outcome."""

from __future__ import annotations

import streamlit as st

from core.time import DAY_S
from dashboard import navigation
from dashboard.queries.common import when
from dashboard.queries.run import RunDetail


def show(detail: RunDetail, *, show_conversation: bool, key: str) -> None:
    """Metrics for the run; a link to its conversation for administrators only."""
    st.subheader(f"Run {detail.uuid[:8]}")
    columns = st.columns(4)
    columns[0].metric("Configuration", detail.configuration or "—")
    columns[1].metric("Ended", detail.ended)
    columns[2].metric("Observed outcome", detail.outcome)
    columns[3].metric("Window", f"{detail.window_s // DAY_S} days")
    finished = f", finished {when(detail.finished_at)}" if detail.finished_at else ""
    st.caption(f"uuid {detail.uuid}; started {when(detail.started_at)}{finished} (UTC)")
    if show_conversation and detail.conversation is not None:
        st.page_link(
            str(navigation.CONVERSATION),
            label=f"Conversation {detail.conversation}",
            query_params={"conversation": str(detail.conversation)},
            icon=":material/forum:",
        )
