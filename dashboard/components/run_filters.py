"""The Runs table's filters: configuration, status, outcome and period, kept in the URL as JSON (?runs=)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from adapters.runs import NO_OUTCOME, OUTCOMES, RunFilter
from dashboard import url_state
from dashboard.queries.runs import STATUSES

ANY = "any"


def show(configurations: Sequence[str], *, key: str) -> RunFilter:
    """The chosen filter; on a session's first run it starts from the URL, and it is written back to it."""
    if key not in st.session_state:
        param = url_state.runs_filter()
        if param.refused:
            st.warning(param.refused)
        st.session_state[key] = param.value
    start: RunFilter = st.session_state[key]
    columns = st.columns(4)
    configuration = _choose(
        columns[0], "Configuration", [*configurations], start.configuration, f"{key}_configuration"
    )
    status = _choose(columns[1], "Status", list(STATUSES), start.status, f"{key}_status")
    outcome = _choose(
        columns[2], "Observed outcome", [*OUTCOMES, NO_OUTCOME], start.outcome, f"{key}_outcome"
    )
    period = columns[3].date_input(
        "Started between",
        value=(start.started_from, start.started_to) if start.started_from and start.started_to else (),
        key=f"{key}_period",
        format="YYYY-MM-DD",
    )
    started_from, started_to = _period(period)
    chosen = RunFilter(configuration, status, outcome, started_from, started_to)
    st.session_state[key] = chosen
    url_state.keep_runs_filter(chosen)
    return chosen


def _choose(
    column: DeltaGenerator, label: str, options: list[str], current: str | None, key: str
) -> str | None:
    choices = [ANY, *options]
    if current is not None and current not in choices:
        choices.append(current)
    index = choices.index(current) if current is not None else 0
    chosen = column.selectbox(label, choices, index=index, key=key)
    return None if chosen in (None, ANY) else str(chosen)


def _period(value: object) -> tuple[date | None, date | None]:
    if isinstance(value, tuple | list) and len(value) == 2 and all(isinstance(d, date) for d in value):
        return value[0], value[1]
    return None, None
