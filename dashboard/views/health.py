"""Health (administrators): job runs, freshness, stuck conversations, history horizon, pending derivations."""

import streamlit as st

from adapters import schema
from dashboard import access, state, url_state
from dashboard.components import alerts, data_as_of, guard, health_panels

access.require_administrator()
# A stuck conversation's link switches pages, and Streamlit adds an entry of this page with the
# conversation's uid first: Back returns to it.
url_state.drop([url_state.CONVERSATION])
st.title("Health")
version = guard.show([schema.job_run.name], key="guard")
if version is None:
    st.stop()
url = state.db_url()
data_as_of.show(version, key="as_of")

with guard.reading():
    freshness = state.freshness(url, version.jobs, state.now())
    runs = state.job_runs(url, version.jobs, state.now())
    reading = state.health_reading(url, version.jobs)
    stuck = (
        state.stuck_conversations(url, version.jobs, state.now())
        if schema.conversation.name in version.tables
        else None
    )
    horizon = state.horizon(url, version.jobs, state.now(), state.window_s())
    automation = state.reads_automation_user(url, version.jobs)

st.header("Jobs")
health_panels.jobs(freshness, runs, key="jobs")
alerts.show(version, key="alerts")
st.header("Stuck conversations")
health_panels.stuck(stuck, key="stuck")
st.header("History horizon against the window")
health_panels.horizon(horizon, key="horizon")
if not automation:
    # DESIGN.md rule 4: only be_users names the `_cli_` user that scheduler tasks and CLI commands act as.
    st.warning(
        "runrecord cannot read a be_users table with uid and username here (the database has none, or this "
        "account may not read it), so it cannot tell a scheduler task or a CLI command (the _cli_ user) from "
        "a person: every sys_history row that is no AI write's own counts as a human change."
    )
st.header("Pending derivations")
health_panels.pending(reading, key="pending")
st.header("Tables")
if st.toggle("Count the rows of every table (reads each table once)", key="count_tables"):
    with guard.reading():
        st.dataframe(state.table_counts(url, version.jobs), hide_index=True, width="stretch")
st.caption(f"Database: {state.location()}")
