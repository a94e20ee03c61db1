"""The newest conversations, a page at a time; choosing one opens it on the Conversation page."""

from __future__ import annotations

import streamlit as st

from dashboard import navigation, state
from dashboard.components import pager
from dashboard.queries.common import Marks
from dashboard.queries.conversations import RECENT_PAGE


def show(url: str, version: Marks, *, key: str) -> None:
    """A keyset page of conversations (uid, status, skill, messages, last change), newest first."""
    bounds: list[int | None] = st.session_state.setdefault(key, [None])
    frame = state.recent_conversations(url, version, bounds[-1])
    if frame.empty:
        st.info("This database has no conversation yet.")
        return
    st.markdown("**Newest conversations**: type a uid above, or select one.")
    event = st.dataframe(
        frame,
        hide_index=True,
        width="stretch",
        on_select="rerun",
        selection_mode="single-row",
        key=f"{key}_table",
    )
    chosen = event.selection.rows if event is not None else []
    if chosen:
        navigation.open_conversation(int(frame["conversation"].iloc[chosen[0]]))
    last = int(frame["conversation"].iloc[-1])
    total = int(frame.attrs.get("total", 0))
    pager.show(total, RECENT_PAGE, last, len(frame), key=key, noun="conversation")
