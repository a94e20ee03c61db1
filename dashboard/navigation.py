"""Which pages a viewer gets: the product team Rates and Runs, administrators all (DESIGN.md, "Privacy").

A page a role does not get is not registered at all, so its URL leads nowhere for that role; the
administrator pages check the role again when they run.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from dashboard.access import Method, Viewer

# Not "pages/": Streamlit treats a pages/ folder beside the entrypoint as a legacy multipage app and runs
# its scripts directly, around the navigation by role (on the first request after a start, and in AppTest).
VIEWS = Path(__file__).parent / "views"

RATES = VIEWS / "rates.py"
RUNS = VIEWS / "runs.py"
RUN = VIEWS / "run.py"
CONVERSATION = VIEWS / "conversation.py"
HEALTH = VIEWS / "health.py"
SIGN_IN = VIEWS / "sign_in.py"


def pages(viewer: Viewer) -> list[st.Page]:
    """The pages of the viewer's role, Rates first; before an OIDC sign-in, only the sign-in page."""
    sign_in = st.Page(SIGN_IN, title="Sign in", icon=":material/login:", url_path="sign-in")
    if viewer.role is None:
        return [sign_in]
    shown = [
        st.Page(RATES, title="Rates", icon=":material/monitoring:", url_path="rates", default=True),
        st.Page(RUNS, title="Runs", icon=":material/table_rows:", url_path="runs"),
        st.Page(RUN, title="Run", icon=":material/receipt_long:", url_path="run", visibility="hidden"),
    ]
    if viewer.is_administrator:
        shown += [
            st.Page(CONVERSATION, title="Conversation", icon=":material/forum:", url_path="conversation"),
            st.Page(HEALTH, title="Health", icon=":material/monitor_heart:", url_path="health"),
        ]
    elif viewer.method is Method.PASSWORD:
        shown.append(
            st.Page(SIGN_IN, title="Administrator sign-in", icon=":material/key:", url_path="sign-in")
        )
    return shown
