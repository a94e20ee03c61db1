"""Paging through a table by keyset: Newer and Older move one page, "page n of N" says where you are.

The state is the stack of keyset bounds of the pages visited (the start and uid of the row each page starts
after), so a page never costs more than its own rows, however deep it is. A change of filter starts again
at page 1.
"""

from __future__ import annotations

import math

import streamlit as st

from adapters.runs import Bound
from core.formatting import plural


def bound(filter_key: str, *, key: str) -> Bound | None:
    """The keyset bound of the current page (None: the first page); a new filter starts at page 1."""
    bounds: list[Bound | None] = st.session_state.setdefault(key, [None])
    if st.session_state.get(f"{key}_filter") != filter_key:
        st.session_state[f"{key}_filter"] = filter_key
        bounds[:] = [None]
    return bounds[-1]


def show(
    total: int, page_size: int, next_bound: object | None, shown: int, *, key: str, noun: str = "run"
) -> None:
    """'Page n of N' and the Newer / Older buttons; `next_bound`: the keyset bound the next page starts after
    (a run's start and uid, a conversation's uid), kept in the session under `key`."""
    bounds: list[object | None] = st.session_state.setdefault(key, [None])
    pages = max(1, math.ceil(total / page_size))
    page = len(bounds)
    newer, where, older = st.columns([1, 3, 1])
    if newer.button("← Newer", key=f"{key}_newer", disabled=page == 1, width="stretch"):
        bounds.pop()
        st.rerun()
    where.markdown(f"Page {page} of {pages} · {plural(total, noun)}")
    last_page = page >= pages or next_bound is None or shown < page_size
    if older.button("Older →", key=f"{key}_older", disabled=last_page, width="stretch"):
        bounds.append(next_bound)
        st.rerun()
