"""The panels of the Health page: jobs, stuck conversations, the history horizon, pending derivations."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from adapters.health import Reading
from core.formatting import plural
from core.time import DAY_S
from dashboard import navigation
from dashboard.components import static_table
from dashboard.queries.common import when
from dashboard.queries.health import HorizonView


def jobs(freshness: pd.DataFrame, runs: pd.DataFrame, *, key: str) -> None:
    """Each job's freshness, then the newest job runs, with a warning for those interrupted."""
    stale = freshness[freshness["state"] != "fresh"]
    if not stale.empty:
        st.warning(
            "Not fresh: " + ", ".join(f"{j} ({s})" for j, s in zip(stale["job"], stale["state"], strict=True))
        )
    st.dataframe(freshness, hide_index=True, width="stretch", key=f"{key}_freshness")
    if runs.empty:
        st.info("No job has run on this database yet (`runrecord scheduler`, or each job's command).")
        return
    interrupted = runs[runs["status"] == "interrupted"]
    if not interrupted.empty:
        started = zip(interrupted["job"], interrupted["started (UTC)"], strict=True)
        st.warning(
            "Interrupted: "
            + ", ".join(f"{job} started {at} UTC" for job, at in started)
            + ". The process ended without finishing the run; the next run of the job carries on from what "
            "was committed."
        )
    static_table.show(runs, counts=("processed", "failed", "seconds"))


def stuck(found: pd.DataFrame | None, *, key: str) -> None:
    """The conversations stuck now, each a link to the Conversation page."""
    if found is None:
        st.info("This database has no conversation table.")
        return
    if found.empty:
        st.success("No conversation is stuck in processing, locked or tool_loop.")
        return
    stuck = plural(len(found), "conversation is stuck", "conversations are stuck")
    st.error(f"{stuck}: ai-chat:cleanup has not run for them.")
    event = st.dataframe(
        found, hide_index=True, width="stretch", on_select="rerun", selection_mode="single-row", key=key
    )
    chosen = event.selection.rows if event is not None else []
    if chosen:
        navigation.open_conversation(int(found["conversation"].iloc[chosen[0]]))
    st.caption("Select a conversation to open it.")


def horizon(view: HorizonView, *, key: str) -> None:
    """The oldest retained history row against the window, and what it means for the derivation."""
    window = view.window_s / DAY_S
    if view.oldest is None:
        st.error(f"sys_history is empty: every write judged now is unknown (window {window:.0f} days).")
        return
    span = (view.span_s or 0) / DAY_S
    text = (
        f"History retained since {when(view.oldest)} UTC: {span:.1f} days, for a window of {window:.0f} days."
    )
    if view.level == "ok":
        st.success(text)
    elif view.level == "warning":
        st.warning(text + " Less than two windows: trimming will produce unknown outcomes soon.")
    else:
        st.error(text + " Less than one window: writes judged now come out unknown (history_trimmed).")


def pending(reading: Reading | None, *, key: str) -> None:
    """Writes waiting for their observed outcome, from the newest watch-conversations reading."""
    if reading is None:
        st.info(
            "No health reading yet: run `runrecord watch-conversations` "
            "(the scheduler runs it every 5 minutes)."
        )
        return
    columns = st.columns(3)
    columns[0].metric("Writes pending derivation", f"{reading.pending_writes:,}")
    columns[1].metric("Overdue (window closed over a day ago)", f"{reading.overdue_writes:,}")
    columns[2].metric("Stuck conversations at the reading", f"{reading.stuck_conversations:,}")
    st.caption(f"Reading of {when(reading.checked_at)} UTC ({reading.status}): {reading.message}")
