"""Tables: how many rows the installation's tables and ours hold."""

import streamlit as st

from dashboard import state
from jobs.database import describe

st.title("Tables")
st.caption(f"Database: {describe(state.engine().url)}")
counts = state.table_counts()
if counts["rows"].isna().all():
    st.info("This database has none of the tables runrecord reads. Run `runrecord init-db` first.")
else:
    st.dataframe(counts, hide_index=True, width="stretch")
