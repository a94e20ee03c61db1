"""A transcript as chat bubbles: messages, notice labels under answers, card outcomes and notes in place, and
runrecord's reading of an answer beside it."""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

from dashboard.queries.conversations import Line
from dashboard.queries.readings import Mark

AVATARS = {"user": ":material/person:", "assistant": ":material/smart_toy:", "chat": ":material/chat:"}
MARK_ICONS = {"error": ":material/error:", "warning": ":material/warning:", "info": ":material/search:"}
# What tells runrecord's reading apart from what the reader saw.
READING = "runrecord's reading"


def show(lines: Sequence[Line], *, key: str) -> None:
    """Each line in order; a note reads as the chat's words inside the message it is placed in."""
    if not lines:
        st.info("The conversation has no readable message.")
        return
    with st.container(key=key):
        for line in lines:
            if line.kind == "card":
                st.markdown(f":material/task_alt: {line.text}")
                continue
            role = line.role if line.role in AVATARS else "assistant"
            with st.chat_message(role, avatar=AVATARS[role]):
                if line.kind == "note":
                    st.markdown(f"**{line.role}, note at position {line.position}:**")
                    st.code(line.text, language=None, wrap_lines=True)
                else:
                    st.caption(f"position {line.position} · {line.role}")
                    st.text(line.text)
                if line.label:
                    st.warning(line.label, icon=":material/info:")
                for mark in line.marks:
                    _mark(mark)
                if line.given:
                    with st.expander(f"The {len(line.given)} notes this turn was given", expanded=False):
                        for note in line.given:
                            st.text(note)


def _mark(mark: Mark) -> None:
    text = f"**{READING}:** {mark.text}"
    if mark.level == "error":
        st.error(text, icon=MARK_ICONS["error"])
    elif mark.level == "warning":
        st.warning(text, icon=MARK_ICONS["warning"])
    else:
        st.info(text, icon=MARK_ICONS["info"])
