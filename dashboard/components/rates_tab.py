"""The Rates page's sections below its tiles, one at a time: st.tabs would run every tab's code (and its
queries) on each render, so the section is a choice kept in the URL (?tab=) and only the chosen one is drawn;
a link names the tab it opens."""

from __future__ import annotations

import streamlit as st

from dashboard import url_state
from dashboard.components import url_bound

TABS: tuple[tuple[str, str], ...] = (
    ("overview", "Overview"),
    ("release", "Release"),
    ("configurations", "Configurations"),
    ("outcomes", "Outcomes"),
    ("survival", "Survival"),
    ("alerts", "Alerts"),
)
DEFAULT = TABS[0][0]
NAMES = tuple(name for name, _ in TABS)
LABELS = dict(TABS)


def show(*, key: str) -> str:
    """The chosen tab's name (?tab=, Overview by default or for a name that is none of them)."""
    url_bound.bind(key, url_state.choice(url_state.TAB, NAMES, DEFAULT))
    chosen = st.segmented_control(
        "Section",
        NAMES,
        format_func=LABELS.__getitem__,
        key=key,
        label_visibility="collapsed",
        width="stretch",
        on_change=url_bound.changed,
        args=(key, url_bound.text_param(url_state.TAB, DEFAULT)),
    )
    return str(chosen or DEFAULT)
