"""'Data as of': when the last job run finished, so nobody reads yesterday's rates as today's."""

from __future__ import annotations

import streamlit as st

from dashboard import state
from dashboard.queries.common import DataVersion, when


def show(version: DataVersion, *, key: str) -> None:
    """A caption: the end of the newest job run, or that no job has run on this database yet."""
    last = state.last_job_run(state.db_url(), version.jobs)
    if last is None:
        st.caption(
            "Data as of: no job has run on this database yet (`runrecord derive-outcomes`, "
            "`runrecord measure-rates`).",
        )
        return
    status = "" if last.status == "ok" else f", {last.status}"
    st.caption(f"Data as of {when(last.finished)} UTC (the last job run: {last.job}{status}).")
