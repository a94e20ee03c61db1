"""A transcript as chat bubbles: messages, notice labels under answers, card outcomes and notes in place."""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

from dashboard.queries.conversations import Line

AVATARS = {"user": ":material/person:", "assistant": ":material/smart_toy:", "chat": ":material/chat:"}


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
