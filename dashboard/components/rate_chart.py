"""A rate over time: the line, its Wilson 95% band, the denominator on hover, the release markers."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from core.formatting import count, percent
from dashboard.components import markers

LINE = "#1f4e79"
BAND = "rgba(31, 78, 121, 0.18)"


def figure(frame: pd.DataFrame, releases: pd.DataFrame, title: str) -> go.Figure:
    """The chart of one metric's rows (period_start, numerator, denominator, excluded, rate, low, high)."""
    rows = frame.sort_values("period_start")
    x = [day.isoformat() for day in rows["period_start"]]
    chart = go.Figure()
    chart.add_trace(
        go.Scatter(x=x, y=rows["high"], mode="lines", line={"width": 0}, hoverinfo="skip", showlegend=False)
    )
    chart.add_trace(
        go.Scatter(
            x=x,
            y=rows["low"],
            mode="lines",
            line={"width": 0},
            fill="tonexty",
            fillcolor=BAND,
            name="Wilson 95% interval",
            hoverinfo="skip",
        )
    )
    state = ["open: runs in it may still change" if is_open else "closed" for is_open in rows["open"]]
    custom = list(
        zip(
            rows["numerator"],
            rows["denominator"],
            rows["low"],
            rows["high"],
            rows["excluded"],
            state,
            strict=True,
        )
    )
    chart.add_trace(
        go.Scatter(
            x=x,
            y=rows["rate"],
            mode="lines+markers",
            line={"color": LINE},
            marker={
                "symbol": ["circle-open" if is_open else "circle" for is_open in rows["open"]],
                "size": 8,
            },
            name=title,
            customdata=custom,
            hovertemplate=(
                "%{x}: %{y:.1%}<br>%{customdata[0]} of %{customdata[1]}"
                "<br>95% interval %{customdata[2]:.1%} – %{customdata[3]:.1%}"
                "<br>excluded: %{customdata[4]}<br>period %{customdata[5]}<extra></extra>"
            ),
        )
    )
    markers.add(chart, releases)
    chart.update_layout(
        title={"text": title},
        yaxis={"tickformat": ".0%", "rangemode": "tozero", "title": {"text": "rate"}},
        xaxis={"title": {"text": "period start"}},
        hovermode="closest",
        margin={"t": 70, "b": 40},
        legend={"orientation": "h", "y": -0.2},
    )
    return chart


def show(frame: pd.DataFrame, releases: pd.DataFrame, title: str, *, key: str) -> None:
    """The chart, or a line saying the metric has no rows yet."""
    if frame.empty:
        st.info(f"{title}: no periods measured yet (run `runrecord measure-rates`).")
        return
    st.plotly_chart(figure(frame, releases, title), key=key, width="stretch")
    latest = frame.sort_values("period_start").iloc[-1]
    rate = "no data" if pd.isna(latest["rate"]) else percent(float(latest["rate"]))
    st.caption(
        f"Latest period ({latest['period_start'].isoformat()}): {rate}, "
        f"{count(int(latest['numerator']))} of {count(int(latest['denominator']))}"
        + (f", {count(int(latest['excluded']))} excluded" if int(latest["excluded"]) else "")
        + (". Open circles: periods whose runs may still change." if bool(frame["open"].any()) else ".")
    )
