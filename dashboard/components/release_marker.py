"""The release marker a before/after comparison is made across."""

from __future__ import annotations

from datetime import date

import pandas as pd
import streamlit as st


def show(releases: pd.DataFrame, *, key: str) -> tuple[date, str] | None:
    """The chosen marker (its date and label), the newest by default; None without markers."""
    if releases.empty:
        return None
    options = list(zip(releases["released_on"], releases["label"], strict=True))
    chosen = st.selectbox(
        "Release marker",
        options,
        index=len(options) - 1,
        format_func=lambda marker: f"{marker[0].isoformat()} — {marker[1]}",
        key=key,
    )
    return None if chosen is None else (chosen[0], chosen[1])
