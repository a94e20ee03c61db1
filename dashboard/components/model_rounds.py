"""A run's model rounds for administrators: the tools each was offered, asked for and ran, and the tools it
asked for without being offered them (001_…, Context: "Tools the model could not see")."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd
import streamlit as st

from dashboard.queries.run import NOT_OFFERED


def show(rounds: Sequence[dict[str, Any]], *, key: str) -> None:
    """One row per round; a warning naming every tool the model asked for that its round did not offer."""
    if not rounds:
        st.info("This run has no model round: it failed before nr-llm returned its steps.")
        return
    missing = [
        f"{name} (segment {row['segment']}, round {row['round']})"
        for row in rounds
        for name in row[NOT_OFFERED].split(", ")
        if name
    ]
    if missing:
        st.warning(f"The model asked for tools its round did not offer: {'; '.join(missing)}.")
    lists = ("asked for", "ran", "refused without running", "offered")  # the long offer last
    st.dataframe(
        pd.DataFrame(list(rounds), columns=["segment", "round", *lists]),
        hide_index=True,
        width="stretch",
        column_config={name: st.column_config.ListColumn(name) for name in lists},
        key=key,
    )
    st.caption(
        "Offered: the names in the request nr-llm records before each model round (kept at every privacy "
        "level); empty when no request names them, and then nothing is marked. Ran: the tool steps after "
        "the round, a call that waited for a decision included."
    )
