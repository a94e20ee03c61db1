"""The open alerts: every rate that moved significantly in the newest closed week or across a recent
release, until someone closes it (`runrecord alerts ack ID`)."""

from __future__ import annotations

import streamlit as st

from dashboard import state
from dashboard.components import guard
from dashboard.queries.common import DataVersion

NOT_STORED = (
    "Alerts are not stored on this database yet: run `runrecord init-db`, then `runrecord measure-rates`."
)
NONE_OPEN = (
    "No open alert: no rate moved significantly in the newest closed week or across a release of the last "
    "eight weeks (`runrecord alerts --all` lists the closed ones too)."
)


def show(version: DataVersion, *, key: str) -> None:
    """The open alerts as a table under a warning, or a caption that there are none."""
    with guard.reading():
        found = state.open_alerts(state.db_url(), version.jobs)
    if found is None:
        st.caption(NOT_STORED)
        return
    if found.empty:
        st.caption(NONE_OPEN)
        return
    st.warning(
        f"{len(found)} open alerts: a rate moved significantly (p < 0.05 and not too few to tell). "
        "Close one with `runrecord alerts ack ID` once it is looked into.",
        icon=":material/notification_important:",
    )
    st.dataframe(found, hide_index=True, width="stretch", key=key)
