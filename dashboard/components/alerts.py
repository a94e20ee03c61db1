"""The open alerts: every rate that moved significantly in the newest closed week or across a recent
release, each row leading with the verdict, before, after and the difference, with a link to the runs behind
it; until someone closes it (an administrator here, or `runrecord alerts ack ID`)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from core.formatting import plural
from dashboard import access, navigation, state, url_state
from dashboard.components import guard
from dashboard.queries.common import DataVersion

NOT_STORED = (
    "Alerts are not stored on this database yet: run `runrecord init-db`, then `runrecord measure-rates`."
)
NONE_OPEN = (
    "No open alert: no rate moved significantly in the newest closed week or across a release of the last "
    "eight weeks (`runrecord alerts --all` lists the closed ones too)."
)
RUNS_LINK = "Open its runs"


def runs_links(found: pd.DataFrame) -> list[str]:
    """Each alert's runs as a link to the Runs page with its filter (?runs=)."""
    return [url_state.runs_link(chosen) for chosen in found["runs"]]


def _text_width(texts: pd.Series) -> int:
    """Pixels for a column that shows its longest text whole (the grid fits a column to its cells only up
    to a limit): about 7.5 a character of its font, and the cell's padding."""
    return round(max(len(str(text)) for text in texts) * 7.5) + 24


def notice(version: DataVersion, *, key: str) -> None:
    """One line above the tabs while an alert is open: how many, and where they are listed."""
    with guard.reading():
        listed = state.open_alerts(state.db_url(), version.jobs)
    if listed is not None and not listed.table.empty:
        count = plural(len(listed.table), "open alert")
        st.warning(
            f"{count}: a rate moved significantly; the Alerts tab lists them.",
            icon=":material/notification_important:",
        )


def show(version: DataVersion, *, key: str) -> None:
    """The open alerts as a table under a warning, or a caption that there are none; administrators can
    acknowledge (close) them."""
    with guard.reading():
        listed = state.open_alerts(state.db_url(), version.jobs)
    if listed is None:
        st.caption(NOT_STORED)
        return
    if listed.unreadable:
        st.error(f"{listed.unreadable}.", icon=":material/error:")
    found = listed.table
    if found.empty:
        st.caption(NONE_OPEN)
        return
    st.warning(
        f"{plural(len(found), 'open alert')}: a rate moved significantly (p < 0.05 and not too few to tell). "
        "An administrator closes one once it is looked into.",
        icon=":material/notification_important:",
    )
    st.dataframe(
        found.assign(runs=runs_links(found)),
        hide_index=True,
        width="stretch",
        column_config={
            "verdict": st.column_config.TextColumn("verdict", width=_text_width(found["verdict"])),
            "runs": st.column_config.LinkColumn(
                "runs", display_text=RUNS_LINK, help="The runs behind the after side, on the Runs page"
            ),
            "alert": st.column_config.NumberColumn("alert", help="Its id (runrecord alerts ack ID)"),
        },
        key=key,
    )
    for _, row in found.iterrows():
        st.page_link(
            str(navigation.RUNS),
            label=f"Runs of alert #{row['alert']}: {row['verdict']}, {row['group']}",
            query_params={url_state.RUNS_FILTER: url_state.runs_filter_json(row["runs"])},
            icon=":material/table_rows:",
        )
    if access.viewer().is_administrator:
        _acknowledge(list(found["alert"]), key=f"{key}_acknowledge")


def _acknowledge(uids: list[int], *, key: str) -> None:
    chosen, done = st.columns([4, 1], vertical_alignment="bottom")
    picked = chosen.multiselect("Acknowledge alerts", uids, format_func=lambda uid: f"#{uid}", key=key)
    if done.button("Acknowledge", key=f"{key}_button", disabled=not picked, width="stretch"):
        with guard.reading():
            closed = state.acknowledge_alerts(state.db_url(), [int(uid) for uid in picked])
        st.toast(f"{plural(closed, 'alert')} closed.")
        st.rerun()
