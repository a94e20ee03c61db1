"""A rate split by configuration or skill; a group below 5 runs in a period reads "too few to show"."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard.queries.rates import TOO_FEW


def table(frame: pd.DataFrame) -> pd.DataFrame:
    """Periods down, groups across; each cell the rate with its interval and denominator, or TOO_FEW."""

    def cell(row: pd.Series) -> str:
        if not row["shown"]:
            return TOO_FEW
        if row["rate"] is None or pd.isna(row["rate"]):
            return "no data"
        return (
            f"{row['rate']:.1%} ({int(row['numerator'])}/{int(row['denominator'])}; "
            f"{row['low']:.0%}–{row['high']:.0%})"
        )

    cells = frame.assign(cell=frame.apply(cell, axis=1))
    pivot = cells.pivot_table(index="period_start", columns="group", values="cell", aggfunc="first")
    pivot = pivot.sort_index(ascending=False).fillna("")
    pivot.index = [day.isoformat() for day in pivot.index]
    pivot.index.name = "period start"
    pivot.columns.name = None
    return pivot


def show(frame: pd.DataFrame, group_kind: str, *, key: str) -> None:
    """The table, or an explicit state when the metric has no group rows."""
    if frame.empty:
        st.info(f"No rates by {group_kind} measured yet (run `runrecord measure-rates`).")
        return
    st.dataframe(table(frame), key=key, width="stretch")
    hidden = int((~frame["shown"].astype(bool)).sum())
    st.caption(
        f"A {group_kind} with fewer than 5 runs in a period reads '{TOO_FEW}' and carries no figure"
        + (f" ({hidden} here)." if hidden else ".")
    )
