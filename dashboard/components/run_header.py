"""A run's facts at the top of its page: short uuid, configuration, times, how it ended, its outcome."""

from __future__ import annotations

import streamlit as st

from core.time import DAY_S
from dashboard import navigation
from dashboard.queries.common import when
from dashboard.queries.run import RunDetail

# The facts are text in bordered tiles, not st.metric: a metric's value is one line that is cut with "…"
# ("content-assis…", "window clos…"), while text wraps inside its tile and is always read in full.
TILE_KEY = "tile"


def show(detail: RunDetail, *, show_conversation: bool, key: str) -> None:
    """A tile per fact, each value in full; a link to its conversation for administrators only."""
    st.subheader(f"Run {detail.uuid[:8]}")
    facts = (
        ("Configuration", detail.configuration or "—"),
        ("Ended", detail.ended),
        ("Observed outcome", detail.outcome),
        ("Window", f"{detail.window_s // DAY_S} days"),
    )
    for index, (column, (label, value)) in enumerate(zip(st.columns(len(facts)), facts, strict=True)):
        with column.container(border=True, key=f"{key}_{TILE_KEY}_{index}"):
            st.caption(label)
            st.text(value, width="stretch", wrap=True)
    finished = f", finished {when(detail.finished_at)}" if detail.finished_at else ""
    st.caption(f"uuid {detail.uuid}; started {when(detail.started_at)}{finished} (UTC)")
    if show_conversation and detail.conversation is not None:
        st.page_link(
            str(navigation.CONVERSATION),
            label=f"Conversation {detail.conversation}",
            query_params={"conversation": str(detail.conversation)},
            icon=":material/forum:",
        )
