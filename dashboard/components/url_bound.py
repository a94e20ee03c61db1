"""A widget whose value the URL holds: the URL is read on every run and set into the widget's state before it
is drawn, and a change made on the page is written back into the URL (the default taken out), so that a link
opens the page as it was, and a link followed within the same session too.

Such a widget is drawn without a default of its own: its state, set here, is its value.
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from dashboard import url_state

Write = Callable[[object], None]


def bind(key: str, value: object) -> None:
    """Give the widget `key` the value the URL says; draw it with on_change=changed, args=(key, write)."""
    st.session_state[key] = value


def changed(key: str, write: Write) -> None:
    """The widget's on_change: its new value into the URL."""
    write(st.session_state.get(key))


def text_param(param: str, default: str) -> Write:
    """Writes a chosen string into ?param= (a cleared choice, or the default: out of the URL)."""

    def write(value: object) -> None:
        url_state.keep(param, None if value is None else str(value), default)

    return write
