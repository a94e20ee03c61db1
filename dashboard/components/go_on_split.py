"""What followed the stored "go on" messages (core.go_on), before and from a release marker: shown beside the
go-on rate in the before/after panel, as one small table of the three paths of 001_…, "Decision"."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import streamlit as st

from core.formatting import count, percent, plural
from core.two_sided import Side
from dashboard.queries.go_on import GO_ON_METRICS, PathSides

TITLE = 'What followed a "go on" while an approval waited'
NOT_COUNTED = (
    'What followed the "go on" messages is not counted on this database yet: the next '
    "`runrecord measure-rates` of this grain (`--grain day` for days; the scheduler measures both) "
    "counts it."
)
NONE_STORED = 'No "go on" message was stored while an approval waited in these weeks, on either side.'
BEFORE, AFTER = "Before", "From the release on"


def table(split: Sequence[PathSides]) -> pd.DataFrame:
    """One row per path: its share of the stored "go on" messages on each side."""
    return pd.DataFrame(
        [
            {"What followed": item.label, BEFORE: _cell(item.report.before), AFTER: _cell(item.report.after)}
            for item in split
        ],
        columns=["What followed", BEFORE, AFTER],
    )


def _cell(side: Side) -> str:
    if not side.shown:
        return "too few to show"
    proportion = side.proportion
    if proportion.rate is None:
        return "no data"
    return f"{count(proportion.numerator)} of {count(proportion.denominator)} ({percent(proportion.rate)})"


def _messages(side: Side) -> str:
    excluded = f", {count(side.excluded)} unreadable excluded" if side.excluded else ""
    return f"{plural(side.proportion.denominator, 'stored message')}{excluded}"


def show(split: Sequence[PathSides] | None, chosen_metric: str, *, key: str) -> None:
    """The split when the chosen rate is the go-on rate or one of its paths; nothing for any other rate."""
    if chosen_metric not in GO_ON_METRICS:
        return
    st.subheader(TITLE)
    if split is None:
        st.caption(NOT_COUNTED)
        return
    sides = [side for item in split for side in (item.report.before, item.report.after)]
    if all(side.proportion.denominator == 0 and side.excluded == 0 for side in sides):
        st.info(NONE_STORED)
        return
    st.dataframe(table(split), hide_index=True, width="stretch", key=key)
    first = split[0].report
    st.caption(
        f"{BEFORE}: {_messages(first.before)}; {AFTER.lower()}: {_messages(first.after)}. Each share is of "
        'the same "go on" messages, so a side adds up to 100%: a runFinishedOutside line means the run had '
        "been decided elsewhere and had finished; a second run over the same transcript is the duplicate "
        "ADR-017 was written about."
    )
