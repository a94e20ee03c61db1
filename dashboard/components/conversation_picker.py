"""Which conversation the Conversation page shows: ?conversation=<uid>, or another uid typed in."""

from __future__ import annotations

import streamlit as st

from dashboard import url_state


def show(*, key: str) -> int | None:
    """The chosen conversation uid (kept in the URL), or None before one is chosen."""
    param = url_state.conversation_uid()
    if param.refused:
        st.warning(param.refused)
    # Streamlit drops the input's value once a run of another page leaves it out, while `key` stays: back on
    # this page (a link, Back or Forward) the URL decides again, as in a new session.
    fresh = key not in st.session_state or f"{key}_uid" not in st.session_state
    if fresh or (param.value is not None and param.value != st.session_state[key]):
        # A new session, a return to the page, or a link that named another conversation: the URL decides.
        st.session_state[key] = param.value
        st.session_state[f"{key}_uid"] = param.value
    chosen = uid_input(key=f"{key}_uid")
    st.session_state[key] = chosen
    if chosen is None:
        st.query_params.pop(url_state.CONVERSATION, None)
    elif st.query_params.get(url_state.CONVERSATION) != str(chosen):
        st.query_params[url_state.CONVERSATION] = str(chosen)
    return chosen


def uid_input(*, key: str) -> int | None:
    """A field for a conversation uid, from 1 up to the greatest a TYPO3 table holds; None while empty."""
    typed = st.number_input(
        "Conversation uid",
        min_value=1,
        max_value=url_state.MAX_UID,
        step=1,
        value=None,
        key=key,
        placeholder="uid",
    )
    return None if typed is None else int(typed)
