"""Release markers on a plotly chart: a dashed vertical line per marker, labelled at the top."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

MARKER_COLOUR = "#b45309"


def add(figure: go.Figure, releases: pd.DataFrame) -> None:
    """Every release marker on the figure: shapes and annotations (add_vline cannot label a date axis)."""
    for released_on, label in zip(releases["released_on"], releases["label"], strict=True):
        day = released_on.isoformat()
        figure.add_shape(
            type="line",
            x0=day,
            x1=day,
            y0=0,
            y1=1,
            yref="paper",
            line={"dash": "dash", "color": MARKER_COLOUR, "width": 1.5},
        )
        figure.add_annotation(
            x=day,
            y=1,
            yref="paper",
            text=f"release {day}: {label}",
            showarrow=False,
            xanchor="left",
            yanchor="bottom",
            font={"size": 11, "color": MARKER_COLOUR},
        )
