"""A note under a chart of outcome rates: the periods whose runs were derived under more than one rule
version.

A derived row keeps the rules it was derived under (003_…: the answer is final), so a period that spans a
rise of core.outcomes.RULE_VERSION sums two classifications; the note says so beside the figure. A chart
whose periods are each of one version shows nothing.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard.queries.rates import mixed_periods

PERIOD_NAMES = {"week": "Week of", "day": "Day"}


def show(frame: pd.DataFrame, grain: str, *, key: str) -> None:
    """One caption naming each mixing period of the chart's rows (period_start, rule_versions), if any."""
    notes = mixed_periods(frame)
    if not notes:
        return
    name = PERIOD_NAMES.get(grain, "Period")
    st.caption("; ".join(f"{name} {period.isoformat()} {note}" for period, note in notes) + ".")
