"""Split by configuration or by skill, never by editor."""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st


def show(kinds: Sequence[str], *, key: str) -> str:
    """The chosen group kind; configuration by default."""
    return str(st.radio("Split by", list(kinds), horizontal=True, key=key) or kinds[0])
