"""A verdict's box: coloured by whether the move is better or worse for its metric, or whether it is told."""

from __future__ import annotations

import streamlit as st

from core.two_sided import TOO_FEW_TO_SHOW
from core.verdicts import Finding, is_move, is_worse


def show(text: str, verdict: str) -> None:
    """`text` (which states `verdict`) in a warning when nothing can be told, an error for a move for the
    worse, a success for any other move, else an info."""
    if verdict in (Finding.TOO_FEW_TO_TELL.value, TOO_FEW_TO_SHOW):
        st.warning(text, icon=":material/help:")
    elif is_worse(verdict):
        st.error(text, icon=":material/trending_down:")
    elif is_move(verdict):
        st.success(text)
    else:
        st.info(text)
