"""A rate split by configuration or skill; a group below 5 runs in a period reads "too few to show".
Selecting a cell that shows a figure puts a link beside the table to the Runs page with the runs its n counts
(queries.drill_down, components.drill_link)."""

from __future__ import annotations

from datetime import date

import pandas as pd
import streamlit as st

from adapters.runs import RunFilter
from core.formatting import count, percent
from core.groups import Group, GroupKind
from core.periods import Grain, last_day
from dashboard.components import drill_link
from dashboard.queries import drill_down
from dashboard.queries.rates import LABELS, TOO_FEW


def table(frame: pd.DataFrame) -> pd.DataFrame:
    """Periods down, groups across; each cell the rate with its interval and denominator, or TOO_FEW."""

    def cell(row: pd.Series) -> str:
        if not row["shown"]:
            return TOO_FEW
        if row["rate"] is None or pd.isna(row["rate"]):
            return "no data"
        return (
            f"{percent(row['rate'])} ({count(int(row['numerator']))}/{count(int(row['denominator']))}; "
            f"{percent(row['low'], 0)}–{percent(row['high'], 0)})"
        )

    cells = frame.assign(cell=frame.apply(cell, axis=1))
    pivot = cells.pivot_table(index="period_start", columns="group", values="cell", aggfunc="first")
    pivot = pivot.sort_index(ascending=False).fillna("")
    pivot.index = [day.isoformat() for day in pivot.index]
    pivot.index.name = "period start"
    pivot.columns.name = None
    return pivot


def cell_runs(
    frame: pd.DataFrame, metric: str, grain: str, group_kind: str, period: str, group: str
) -> RunFilter | None:
    """The runs behind a cell (its period and group, the metric's denominator); None for a cell that shows no
    figure (too few to show, no data, or none)."""
    cell = _cell(frame, period, group)
    return None if cell is None else _runs(cell, metric, grain, group_kind, period)


def _cell(frame: pd.DataFrame, period: str, group: str) -> pd.Series | None:
    """The frame's row of a cell that shows a figure; None for any other."""
    rows = frame[(frame["group"] == group) & (frame["period_start"] == date.fromisoformat(period))]
    if rows.empty or not bool(rows.iloc[0]["shown"]) or pd.isna(rows.iloc[0]["rate"]):
        return None
    return rows.iloc[0]


def _runs(cell: pd.Series, metric: str, grain: str, group_kind: str, period: str) -> RunFilter:
    first = date.fromisoformat(period)
    last = last_day(first, Grain(grain))
    chosen = Group(GroupKind(group_kind), str(cell["group_value"]))
    return drill_down.counted_runs(metric, chosen, first, last)


def show(frame: pd.DataFrame, metric: str, grain: str, group_kind: str, *, key: str) -> None:
    """The table, or an explicit state when the metric has no group rows; a selected cell with a figure
    gets a link to its runs."""
    if frame.empty:
        st.info(f"No rates by {group_kind} measured yet (run `runrecord measure-rates`).")
        return
    shown = table(frame)
    event = st.dataframe(shown, key=key, width="stretch", on_select="rerun", selection_mode="single-cell")
    cells = event.selection.get("cells", []) if event is not None else []
    if cells:
        row, group = cells[0]
        period = str(shown.index[int(row)])
        cell = _cell(frame, period, str(group))
        if cell is not None:
            what = f"{LABELS.get(metric, metric)}, {grain} of {period}, {group_kind} {group}"
            drill_link.show(_runs(cell, metric, grain, group_kind, period), int(cell["denominator"]), what)
    hidden = int((~frame["shown"].astype(bool)).sum())
    st.caption(
        f"A {group_kind} with fewer than 5 runs in a period reads '{TOO_FEW}' and carries no figure, and so"
        " does the smallest other where all runs less the groups shown would give a figure of fewer than 5"
        " runs away"
        + (f" ({hidden} here)." if hidden else ".")
        + " Select a cell with a figure for a link to the runs it counts (its denominator)."
    )
