"""Runs (product team): the runs, filtered and paged, each with what it did and what became of it."""

import streamlit as st

from adapters import schema
from core.formatting import plural
from dashboard import state, url_state
from dashboard.components import data_as_of, guard, pager, run_filters, runs_table
from dashboard.queries.runs import NO_MATCH, NO_RUNS_YET, NOT_MEASURED, PAGE_SIZE

st.title("Runs")
# st.switch_page writes the run's ?run= into this page's entry of the browser's history as it leaves for the
# run (components.runs_table): Back returns here with it.
url_state.drop([url_state.RUN])
version = guard.show([schema.agentrun.name, schema.agentrun_event.name], key="guard")
if version is None:
    st.stop()
url = state.db_url()
data_as_of.show(version, key="as_of")

with guard.reading():
    configurations, skills = state.configurations(url, version.runs), state.skills(url, version.runs)
    chosen = run_filters.show(configurations, skills, key="filters")
    before = pager.bound(url_state.runs_filter_json(chosen), key="pager")
    page = state.runs_page(url, version.runs, chosen, before, state.now(), state.window_s())

if page.problems:
    st.warning(
        f"{plural(page.problems, 'event row')} of these runs cannot be read; the runs are shown without them."
    )
if not page.rows:
    if page.runs == 0:
        st.info(NO_RUNS_YET)
    elif chosen.reads_facts and not version.rates_computed:
        st.info(NOT_MEASURED)
    else:
        st.info(NO_MATCH if page.total == 0 else "No more runs.")
    st.stop()

runs_table.show(page.rows, key="runs_table")
pager.show(page.total, PAGE_SIZE, page.next_bound, len(page.rows), key="pager")
