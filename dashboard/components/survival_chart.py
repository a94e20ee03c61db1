"""The survival of AI text: the share of writes still untouched t after the write, a step curve with its
95% band per curve, the window's end marked, and the writes at risk at the marks under it."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from core.formatting import p_text
from core.survival_text import METHOD, TOO_FEW, duration_text, log_rank_verdict, mark_text
from core.time import DAY_S
from dashboard.queries import survival

COLOURS = ("#1f4e79", "#b85c00")
BANDS = ("rgba(31, 78, 121, 0.18)", "rgba(184, 92, 0, 0.18)")
WINDOW_END = "window ends"
TITLE = "Share of AI writes no human has changed yet"  # over the time since the write, not the calendar


def figure(points: pd.DataFrame, window_s: int) -> go.Figure:
    """The step curves (curve, days, untouched, low, high, at_risk), each with its band."""
    chart = go.Figure()
    for index, (name, rows) in enumerate(points.groupby("curve", sort=False)):
        colour, band = COLOURS[index % len(COLOURS)], BANDS[index % len(BANDS)]
        chart.add_trace(
            go.Scatter(
                x=rows["days"],
                y=rows["high"],
                mode="lines",
                line={"width": 0, "shape": "hv"},
                hoverinfo="skip",
                showlegend=False,
            )
        )
        chart.add_trace(
            go.Scatter(
                x=rows["days"],
                y=rows["low"],
                mode="lines",
                line={"width": 0, "shape": "hv"},
                fill="tonexty",
                fillcolor=band,
                name=f"{name}: 95% band",
                hoverinfo="skip",
            )
        )
        chart.add_trace(
            go.Scatter(
                x=rows["days"],
                y=rows["untouched"],
                mode="lines",
                line={"color": colour, "shape": "hv"},
                name=str(name),
                customdata=list(zip(rows["low"], rows["high"], rows["at_risk"], strict=True)),
                hovertemplate=(
                    "%{x:.2f} days after the write: %{y:.1%} untouched"
                    "<br>95% band %{customdata[0]:.1%} – %{customdata[1]:.1%}"
                    "<br>at risk: %{customdata[2]}<extra>%{fullData.name}</extra>"
                ),
            )
        )
    chart.add_vline(
        x=window_s / DAY_S, line_dash="dot", annotation_text=WINDOW_END, annotation_position="top left"
    )
    chart.update_layout(
        title={"text": TITLE},
        yaxis={"tickformat": ".0%", "range": [0, 1.02], "title": {"text": "untouched"}},
        xaxis={"title": {"text": "days after the write"}, "range": [0, window_s / DAY_S * 1.02]},
        hovermode="closest",
        margin={"t": 70, "b": 40},
        legend={"orientation": "h", "y": -0.2},
    )
    return chart


def show(view: survival.SurvivalView | None, *, key: str) -> None:
    """The chart with the writes at risk under it, each curve's median, the groups too few to show, the
    log-rank test for two curves; an explicit state before any write has an outcome."""
    if view is None:
        st.info("No AI write has an observed outcome yet (run `runrecord derive-outcomes`).")
        return
    for label in view.too_few:
        st.warning(f"{label}: {TOO_FEW}.")
    if view.points.empty:
        return
    st.plotly_chart(figure(view.points, view.window_s), key=key, width="stretch")
    st.dataframe(view.at_risk.set_index("curve"), key=f"{key}_at_risk", width="stretch")
    lines = []
    for curve in view.shown:
        middle = "not reached within the window" if curve.median is None else duration_text(curve.median)
        lines.append(
            f"{curve.label}: {curve.writes:,} writes of {curve.runs:,} runs, "
            f"median time to the first change {middle}; left out {curve.unknown:,} unknown and "
            f"{curve.undated:,} without a dated change"
        )
    st.caption(
        "Writes at risk (untouched and still observed) at each mark above. " + "; ".join(lines) + ". "
        f"{METHOD}: {mark_text(view.window_s)}."
    )
    test = view.log_rank
    if test is not None:
        text = (
            f"Log-rank test: χ² = {test.chi_square:.2f} (1 df), {p_text(test.p_value)}: "
            f"**{log_rank_verdict(test)}**."
        )
        (st.success if test.p_value < 0.05 else st.info)(text)
