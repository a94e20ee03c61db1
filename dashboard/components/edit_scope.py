"""The edit_scope split of EDITED: how much of EDITED touched the fields the AI wrote (DESIGN.md rule 7)."""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from core.formatting import count
from dashboard.components import markers

# In the order of core.counting.SCOPE_PRECEDENCE: reverted and same fields stand out, the AI's text was undone
# or changed.
COLOURS = ("#c62828", "#ef6c00", "#bdbdbd", "#42a5f5", "#9e9e9e")


def figure(frame: pd.DataFrame, labels: Mapping[str, str], releases: pd.DataFrame) -> go.Figure:
    """Stacked bars of EDITED runs per scope and period (the numerators of the scope metrics)."""
    chart = go.Figure()
    for (metric, label), colour in zip(labels.items(), COLOURS, strict=True):
        rows = frame[frame["metric"] == metric].sort_values("period_start")
        custom = list(zip(rows["numerator"], rows["denominator"], strict=True))
        chart.add_trace(
            go.Bar(
                x=[day.isoformat() for day in rows["period_start"]],
                y=rows["numerator"],
                name=label,
                marker_color=colour,
                customdata=custom,
                hovertemplate=(
                    f"%{{x}}: %{{customdata[0]}} of %{{customdata[1]}} EDITED runs, {label}<extra></extra>"
                ),
            )
        )
    markers.add(chart, releases)
    chart.update_layout(
        barmode="stack",
        title={"text": "EDITED by edit scope: what the human changed, against the fields the AI wrote"},
        yaxis={"title": {"text": "EDITED runs"}},
        legend={"orientation": "h", "y": -0.2},
        margin={"t": 70, "b": 40},
    )
    return chart


def show(frame: pd.DataFrame, labels: Mapping[str, str], releases: pd.DataFrame, *, key: str) -> None:
    """The chart, or an explicit empty state."""
    if frame.empty:
        st.info("No EDITED run has an edit scope measured yet (run `runrecord measure-rates`).")
        return
    st.plotly_chart(figure(frame, labels, releases), key=key, width="stretch")
    totals = frame.groupby("metric")["numerator"].sum()
    parts = [f"{labels[m]}: {count(int(totals.get(m, 0)))}" for m in labels]
    st.caption(
        "All periods: "
        + "; ".join(parts)
        + ". Only 'reverted' (set back) and 'same fields' say the AI's own text was changed."
    )
