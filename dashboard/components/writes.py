"""A run's writes: each record, its stored outcome, reason and edit scope, and the history rows around it."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import streamlit as st

from core.formatting import outcome_label, scope_label
from core.time import DAY_S
from dashboard.components import static_table
from dashboard.queries.common import when
from dashboard.queries.run_writes import NOT_DERIVED, WriteView, duration

# What tells one write's expander from another's: a run that writes one record in four segments would
# otherwise show four expanders that read the same ("pages:2416: —").


NOT_DERIVED_TEXT = "no outcome derived yet"  # in a write's title: its window is open, or not derived yet


def title(view: WriteView, index: int, total: int) -> str:
    """'Write 2 of 4: pages:2416, continuation 2, 2026-11-20 10:12:03 UTC (complete) — edited'."""
    step = "turn" if view.segment == 0 else f"continuation {view.segment}"
    written = when(view.written_at, seconds=True)
    outcome = NOT_DERIVED_TEXT if view.outcome == NOT_DERIVED else outcome_label(view.outcome)
    where = f"{view.record}, {step}, {written} UTC ({view.completeness})"
    return f"Write {index + 1} of {total}: {where} — {outcome}"


def show(views: Sequence[WriteView], window_s: int, *, key: str) -> None:
    """A summary table, then one expander per write with the history rows that decide it."""
    if not views:
        st.info("This run wrote nothing, so it has no observed outcome.")
        return
    summary = pd.DataFrame(
        [
            {
                "record": v.record,
                "written (UTC)": when(v.written_at, seconds=True),
                "completeness": v.completeness,
                "outcome": outcome_label(v.outcome),
                "reason": v.reason,
                "edit scope": scope_label(v.edit_scope),
                "first human change after": ""
                if v.first_change_after_s is None
                else duration(v.first_change_after_s),
                "decided by (history uids)": v.decided_by,
                "rule version": v.rule_version,
            }
            for v in views
        ]
    )
    st.dataframe(summary, hide_index=True, width="stretch", key=f"{key}_summary")
    for index, view in enumerate(views):
        with st.expander(title(view, index, len(views)), expanded=False):
            if view.note:
                st.info(view.note)
            if view.history:
                static_table.show(pd.DataFrame(view.history))  # each row's part read whole
                st.caption(
                    "The record's retained sys_history rows from the write to the end of its "
                    f"{window_s // DAY_S}-day window (and any later delete), and the rows derive-outcomes "
                    "recorded as deciding the outcome; only the names of the changed fields are read, never "
                    "their values."
                )
            else:
                st.caption("No retained history row of this record around the write.")
