"""The edit_scope split of EDITED: how much of EDITED touched the fields the AI wrote (DESIGN.md rule 7)."""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from core.formatting import count, interval_text, percent
from core.rates import Proportion
from core.time_range import TimeRange
from dashboard.components import markers, rate_chart

# In the order of core.counting.SCOPE_PRECEDENCE: reverted and same fields stand out, the AI's text was undone
# or changed.
COLOURS = ("#c62828", "#ef6c00", "#bdbdbd", "#42a5f5", "#9e9e9e")


def shares(frame: pd.DataFrame, labels: Mapping[str, str]) -> pd.DataFrame:
    """Each scope's EDITED runs over the range and its share of the EDITED runs, with its Wilson interval."""
    rows = []
    for metric, label in labels.items():
        scoped = frame[frame["metric"] == metric]
        proportion = Proportion(int(scoped["numerator"].sum()), int(scoped["denominator"].sum()))
        interval = proportion.interval
        rows.append(
            {
                "edit scope": label,
                "EDITED runs": count(proportion.numerator),
                "share of EDITED": percent(proportion.rate),
                "95% interval": "" if interval is None else interval_text(interval.low, interval.high),
            }
        )
    return pd.DataFrame(rows, columns=["edit scope", "EDITED runs", "share of EDITED", "95% interval"])


def figure(
    frame: pd.DataFrame, labels: Mapping[str, str], releases: pd.DataFrame, span: TimeRange, grain: str
) -> go.Figure:
    """Stacked bars of EDITED runs per scope and period (the numerators of the scope metrics), each with its
    share of the period's EDITED runs on hover."""
    chart = go.Figure()
    for (metric, label), colour in zip(labels.items(), COLOURS, strict=True):
        rows = frame[frame["metric"] == metric].sort_values("period_start")
        custom = list(zip(rows["numerator"], rows["denominator"], rows["rate"], strict=True))
        chart.add_trace(
            go.Bar(
                x=[day.isoformat() for day in rows["period_start"]],
                y=rows["numerator"],
                name=label,
                marker_color=colour,
                customdata=custom,
                hovertemplate=(
                    f"%{{x}}: %{{customdata[0]}} of %{{customdata[1]}} EDITED runs (%{{customdata[2]:.1%}}), "
                    f"{label}<extra></extra>"
                ),
            )
        )
    markers.add(chart, releases)
    chart.update_layout(
        barmode="stack",
        title={"text": "EDITED by edit scope: what the human changed, against the fields the AI wrote"},
        yaxis={"title": {"text": "EDITED runs"}},
        xaxis={"type": "date", "range": rate_chart.x_range(span, grain)},
        legend={"orientation": "h", "y": -0.2},
        margin={"t": 70, "b": 40},
    )
    return chart


def show(
    frame: pd.DataFrame,
    labels: Mapping[str, str],
    releases: pd.DataFrame,
    span: TimeRange,
    grain: str,
    *,
    key: str,
) -> None:
    """The chart over the range and each scope's share of EDITED in it, or an explicit empty state."""
    frame = rate_chart.in_range(frame, span, grain)
    if frame.empty:
        st.info("No EDITED run in this range has an edit scope measured (run `runrecord measure-rates`).")
        return
    st.plotly_chart(figure(frame, labels, releases, span, grain), key=key, width="stretch")
    st.dataframe(shares(frame, labels), hide_index=True, key=f"{key}_shares")
    st.caption(
        "Shares of the EDITED runs of the range. Only 'reverted' (set back) and 'same fields' say the AI's "
        "own text was changed."
    )
