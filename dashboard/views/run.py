"""A run (?run=<uuid>): its segments' record entries, the refused-call reading, each write and its outcome;
for administrators, what each model round was offered."""

import streamlit as st

from adapters import schema
from dashboard import access, navigation, state, url_state
from dashboard.components import guard, model_rounds, run_header, segments, writes
from dashboard.queries.run import RunNotFoundError

st.title("Run")
st.page_link(str(navigation.RUNS), label="Back to the runs", icon=":material/arrow_back:")
version = guard.show([schema.agentrun.name, schema.agentrun_event.name], key="guard")
if version is None:
    st.stop()

param = url_state.run_uuid()
if param.refused:
    st.warning(param.refused)
if param.value is None:
    st.info("Open a run from the Runs table; its address carries ?run=<uuid>.")
    st.stop()

found: tuple[str, ...] = ()
try:
    with guard.reading():
        found = state.full_uuids(state.db_url(), version.runs, param.value)  # a short id names a run too
        if len(found) != 1:
            raise RunNotFoundError(param.value)
        detail = state.run_detail(state.db_url(), version.runs, found[0], state.now(), state.window_s())
except RunNotFoundError:
    if len(found) > 1:
        st.warning(
            f"Several runs start with {param.value}: give more of the uuid, or find them on the Runs page."
        )
    else:
        st.warning(f"There is no run {param.value} in this database.")
    st.stop()

administrator = access.viewer().is_administrator
run_header.show(detail, show_conversation=administrator, key="header")
for problem in detail.problems:
    st.warning(problem)
st.header("Segments")
segments.show(detail.segments, key="segments")
if administrator:  # remote tool names are operator configuration (001_…): offered lists for administrators
    st.header("Model rounds: offered, asked for, ran")
    model_rounds.show(detail.rounds, key="rounds")
st.header("Writes and their observed outcomes")
writes.show(detail.writes, detail.window_s, key="writes")
