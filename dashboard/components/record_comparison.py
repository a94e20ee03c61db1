"""The stored run record beside the one rebuilt from the runs' events: the entries that differ, or every
entry when asked, each in full."""

from __future__ import annotations

import streamlit as st

from core.formatting import plural
from core.record_rebuild import RecordReport
from dashboard.queries import conversations


def show(report: RecordReport, *, key: str) -> None:
    """A line on whether the two agree, the entries that differ (every entry with the toggle), the runs."""
    conversation = report.conversation
    if not conversation.stored_record_readable:
        st.info(
            "The stored run record is missing or cannot be read (a conversation from before the chat kept "
            "one, or a damaged column); the entries below are rebuilt from the runs' events."
        )
    elif report.differences:
        differing = plural(len(report.differences), "entry", "entries")
        st.warning(f"The stored record and the events differ in {differing}.")
    else:
        agreeing = plural(len(report.rebuilt), "entry", "entries")
        st.success(f"The stored record and the one rebuilt from events agree ({agreeing}).")
    every = conversation.stored_record_readable is False or st.toggle(
        "Show every entry, not only those that differ", key=f"{key}_every"
    )
    frame = conversations.record_table(report, every=every)
    if frame.empty:
        if every:
            st.caption("No run of this conversation has a record entry.")
    else:
        # A static table wraps each entry's text instead of cutting it.
        st.table(frame.set_index(["run", "segment"]))
    st.dataframe(conversations.runs_table(conversation), hide_index=True, width="stretch", key=f"{key}_runs")
