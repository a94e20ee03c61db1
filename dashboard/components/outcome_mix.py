"""The observed-outcome mix by period, with UNKNOWN and the runs whose window has not closed yet shown."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from core.formatting import count, plural
from dashboard.components import markers
from dashboard.queries.rates import OUTCOME_MIX, WINDOW_OPEN

COLOURS = {
    "accepted unchanged": "#2e7d32",
    "edited": "#f9a825",
    "discarded": "#c62828",
    "unknown": "#757575",
    WINDOW_OPEN: "#90caf9",
}
# The last measurement on this database stored no count of the runs inside their window (it predates it).
NOT_COUNTED = (
    "The runs still inside their window are not counted on this database yet: the next "
    "`runrecord measure-rates` counts them."
)


def figure(mix: pd.DataFrame, window_open: pd.DataFrame | None, releases: pd.DataFrame) -> go.Figure:
    """Stacked bars: runs per outcome and period, and the runs still inside their window (when measured)."""
    chart = go.Figure()
    for _, outcome in OUTCOME_MIX:
        rows = mix[mix["outcome"] == outcome].sort_values("period_start")
        chart.add_trace(
            go.Bar(
                x=[day.isoformat() for day in rows["period_start"]],
                y=rows["runs"],
                name=outcome,
                marker_color=COLOURS[outcome],
                hovertemplate=f"%{{x}}: %{{y}} runs {outcome}<extra></extra>",
            )
        )
    if window_open is not None:
        chart.add_trace(
            go.Bar(
                x=[day.isoformat() for day in window_open["period_start"]],
                y=window_open["runs"],
                name=WINDOW_OPEN,
                marker_color=COLOURS[WINDOW_OPEN],
                marker_pattern_shape="/",
                hovertemplate=f"%{{x}}: %{{y}} runs, {WINDOW_OPEN}<extra></extra>",
            )
        )
    markers.add(chart, releases)
    chart.update_layout(
        barmode="stack",
        title={"text": "Observed outcome of the runs that wrote, by period of the run's end"},
        yaxis={"title": {"text": "runs"}},
        legend={"orientation": "h", "y": -0.2},
        margin={"t": 70, "b": 40},
    )
    return chart


def show(mix: pd.DataFrame, window_open: pd.DataFrame | None, releases: pd.DataFrame, *, key: str) -> None:
    """The chart and its counts; an explicit state when no run has reached the end of its window, and when
    the last measurement did not count the runs inside their window (window_open None)."""
    waiting = None if window_open is None else int(window_open["runs"].sum())
    if mix.empty and not waiting:
        if waiting is None:
            st.info(f"No run has reached the end of its window yet. {NOT_COUNTED}")
        else:
            st.info("No run has reached the end of its window yet, and none is waiting inside it.")
        return
    if mix.empty:
        st.info("No run has reached the end of its window yet: every run that wrote is still inside it.")
    st.plotly_chart(figure(mix, window_open, releases), key=key, width="stretch")
    unknown = int(mix.loc[mix["outcome"] == "unknown", "runs"].sum()) if not mix.empty else 0
    total = int(mix["runs"].sum()) if not mix.empty else 0
    derived = f"{plural(total, 'run')} derived, {count(unknown)} of them unknown (no history to decide by); "
    if waiting is None:
        st.caption(derived + NOT_COUNTED)
    else:
        st.caption(
            derived + f"{plural(waiting, 'run')} {WINDOW_OPEN} as of the last measurement "
            "(no outcome until the window of their last write closes)."
        )
