"""The stored run record beside the one rebuilt from the runs' events, differences marked."""

from __future__ import annotations

import streamlit as st

from core.record_rebuild import RecordReport
from dashboard.queries import conversations


def show(report: RecordReport, *, key: str) -> None:
    """The side-by-side table and a line on whether the two agree."""
    conversation = report.conversation
    if not conversation.stored_record_readable:
        st.info(
            "The stored run record is missing or cannot be read (a conversation from before the chat kept "
            "one, "
            "or a damaged column); the entries below are rebuilt from the runs' events."
        )
    elif report.differences:
        st.warning(f"The stored record and the events differ in {len(report.differences)} entries.")
    else:
        st.success(
            f"The stored record and the one rebuilt from events agree ({len(report.rebuilt)} entries)."
        )
    frame = conversations.record_table(report)
    if frame.empty:
        st.caption("No run of this conversation has a record entry.")
        return
    st.dataframe(frame, hide_index=True, width="stretch", key=key)
    st.dataframe(conversations.runs_table(conversation), hide_index=True, width="stretch", key=f"{key}_runs")
