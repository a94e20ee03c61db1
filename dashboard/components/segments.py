"""A run's segments: the run-record entry of each, and its tool steps as the activity list reads them."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import streamlit as st

from core.record_text import describe
from dashboard.queries.run import SegmentView

ROUND = (
    "Round: the model round that asked for the call, counted across the run as the model rounds are; a call "
    "that waited for a decision runs in the next segment, and its round names the segment that asked."
)


def show(views: Sequence[SegmentView], *, key: str) -> None:
    """One expander per segment: the record entry in words, then the steps with their reading."""
    if not views:
        st.info("This run has no readable events: it failed before nr-llm returned its steps.")
        return
    for view in views:
        entry = view.entry
        title = f"Segment {view.index}, opened by {view.opened_by}: {entry.ended.value}"
        with st.expander(title, expanded=True):
            st.markdown(f"**Run record entry:** {describe(entry)}")
            if view.steps:
                st.dataframe(
                    pd.DataFrame(view.steps), hide_index=True, width="stretch", key=f"{key}_{view.index}"
                )
            else:
                st.caption("No tool step in this segment.")
    st.caption(ROUND)
