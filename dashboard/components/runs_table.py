"""The Runs table: one row per run; choosing a row (or its link, in a new tab) opens the run."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import streamlit as st

from dashboard import navigation, url_state

COLUMNS = ["run", "started", "configuration", "status", "tools ran", "failed", "records written", "outcome"]


def show(rows: Sequence[dict[str, Any]], *, key: str) -> None:
    """The table; a selected row switches to its run's page in this session."""
    table = [{**row, "run": f"run?run={row['uuid']}"} for row in rows]
    event = st.dataframe(
        table,
        column_order=COLUMNS,
        column_config={
            "run": st.column_config.LinkColumn(
                "run", display_text=r"run\?run=([0-9a-f]{8})", help="The run's uuid, shortened; opens it"
            ),
            "started": st.column_config.TextColumn("started (UTC)", help="Newest first"),
            "status": st.column_config.TextColumn(
                "status", help="The run's status, with nr-llm's termination reason where it says more"
            ),
            "tools ran": st.column_config.NumberColumn("tools ran", help="Tool calls the run record counts"),
            "failed": st.column_config.NumberColumn(
                "failed", help="Of those, failed (refused calls are not)"
            ),
            "outcome": st.column_config.TextColumn("observed outcome"),
        },
        hide_index=True,
        width="stretch",
        on_select="rerun",
        selection_mode="single-row",
        key=key,
    )
    chosen = event.selection.rows if event is not None else []
    if chosen:
        st.switch_page(str(navigation.RUN), query_params={url_state.RUN: rows[chosen[0]]["uuid"]})
    st.caption("Select a row to open its run.")
