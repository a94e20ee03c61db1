"""The observed-outcome mix by period, with UNKNOWN and the runs whose window has not closed yet shown."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from core.formatting import count, interval_text, percent, plural
from core.rates import Proportion
from core.time_range import TimeRange
from dashboard.components import markers, rate_chart
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
    "`runrecord measure-rates` of this grain (`--grain day` for days; the scheduler measures both) "
    "counts them."
)


def shares(mix: pd.DataFrame) -> pd.DataFrame:
    """Each outcome's runs over the range and its share of the derived runs, with its Wilson interval."""
    total = int(mix["runs"].sum()) if not mix.empty else 0
    rows = []
    for _, outcome in OUTCOME_MIX:
        runs = int(mix.loc[mix["outcome"] == outcome, "runs"].sum()) if not mix.empty else 0
        proportion = Proportion(runs, total)
        interval = proportion.interval
        rows.append(
            {
                "outcome": outcome,
                "runs": count(runs),
                "share": percent(proportion.rate),
                "95% interval": "" if interval is None else interval_text(interval.low, interval.high),
            }
        )
    return pd.DataFrame(rows, columns=["outcome", "runs", "share", "95% interval"])


def figure(
    mix: pd.DataFrame, window_open: pd.DataFrame | None, releases: pd.DataFrame, span: TimeRange, grain: str
) -> go.Figure:
    """Stacked bars: runs per outcome and period, each with its share of the period's derived runs on hover,
    and the runs still inside their window (when measured)."""
    chart = go.Figure()
    totals = mix.groupby("period_start")["runs"].sum() if not mix.empty else pd.Series(dtype=int)
    for _, outcome in OUTCOME_MIX:
        rows = mix[mix["outcome"] == outcome].sort_values("period_start")
        share = [
            runs / totals[day] if totals.get(day, 0) else None
            for day, runs in zip(rows["period_start"], rows["runs"], strict=True)
        ]
        chart.add_trace(
            go.Bar(
                x=[day.isoformat() for day in rows["period_start"]],
                y=rows["runs"],
                name=outcome,
                marker_color=COLOURS[outcome],
                customdata=share,
                hovertemplate=f"%{{x}}: %{{y}} runs {outcome} (%{{customdata:.1%}})<extra></extra>",
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
        xaxis={"type": "date", "range": rate_chart.x_range(span, grain)},
        legend={"orientation": "h", "y": -0.2},
        margin={"t": 70, "b": 40},
    )
    return chart


def show(
    mix: pd.DataFrame,
    window_open: pd.DataFrame | None,
    releases: pd.DataFrame,
    span: TimeRange,
    grain: str,
    *,
    key: str,
) -> None:
    """The chart over the range and each outcome's share of it; an explicit state when no run has reached the
    end of its window, and when the last measurement did not count the runs inside their window
    (window_open None)."""
    mix = rate_chart.in_range(mix, span, grain)
    if window_open is not None:
        window_open = rate_chart.in_range(window_open, span, grain)
    waiting = None if window_open is None else int(window_open["runs"].sum())
    if mix.empty and not waiting:
        if waiting is None:
            st.info(f"No run has reached the end of its window yet. {NOT_COUNTED}")
        else:
            st.info("No run has reached the end of its window yet, and none is waiting inside it.")
        return
    if mix.empty:
        st.info("No run has reached the end of its window yet: every run that wrote is still inside it.")
    st.plotly_chart(figure(mix, window_open, releases, span, grain), key=key, width="stretch")
    st.dataframe(shares(mix), hide_index=True, key=f"{key}_shares")
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
