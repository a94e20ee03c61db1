"""Which pages a viewer gets: the product team Rates and Runs, administrators all (DESIGN.md, "Privacy").

Every page is registered for every viewer, so that a link to any of them leads somewhere: a page the viewer
may not see yet is hidden from the menu, and the app shows the sign-in in its place (sign_in_gate) without
running it. The administrator pages check the role again when they run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import streamlit as st

from dashboard import url_state
from dashboard.access import Method, Viewer

PRODUCT = "runrecord"
# Not "pages/": Streamlit treats a pages/ folder beside the entrypoint as a legacy multipage app and runs
# its scripts directly, around the navigation by role (on the first request after a start, and in AppTest).
VIEWS = Path(__file__).parent / "views"
FAVICON = Path(__file__).parent / "favicon.png"

RATES = VIEWS / "rates.py"
RUNS = VIEWS / "runs.py"
RUN = VIEWS / "run.py"
CONVERSATIONS = VIEWS / "conversations.py"
CONVERSATION = VIEWS / "conversation.py"
HEALTH = VIEWS / "health.py"
SIGN_IN = VIEWS / "sign_in.py"

SIGN_IN_PATH = "sign-in"
ADMINISTRATOR_PATHS = frozenset({"conversations", "conversation", "health"})
# Streamlit serves its default page at the root only, never at the path it declares: the root is a hidden
# page of its own that runs Rates, so that /rates (the path the menu links) opens Rates too. The declared
# path of the root page is reserved and unused.
ROOT_PATH = "start"

Visibility = Literal["visible", "hidden"]


def pages(viewer: Viewer) -> list[st.Page]:
    """Every page, Rates first (at /rates and at the root); the menu lists those of the viewer's role
    (before an OIDC sign-in, none)."""
    signed_in: Visibility = "visible" if viewer.role is not None else "hidden"
    administrator: Visibility = "visible" if viewer.is_administrator else "hidden"
    asks_password = viewer.method is Method.PASSWORD and not viewer.is_administrator
    return [
        st.Page(
            RATES,
            title="Rates",
            icon=":material/monitoring:",
            url_path=ROOT_PATH,
            default=True,
            visibility="hidden",
        ),
        st.Page(RATES, title="Rates", icon=":material/monitoring:", url_path="rates", visibility=signed_in),
        st.Page(RUNS, title="Runs", icon=":material/table_rows:", url_path="runs", visibility=signed_in),
        st.Page(RUN, title="Run", icon=":material/receipt_long:", url_path="run", visibility="hidden"),
        # The list and one conversation are pages of their own, as Runs and Run are: choosing a conversation
        # switches the page, and Back returns to the list (on one page, Back from a conversation chosen in
        # the list stayed on the conversation).
        st.Page(
            CONVERSATIONS,
            title="Conversations",
            icon=":material/forum:",
            url_path="conversations",
            visibility=administrator,
        ),
        st.Page(
            CONVERSATION,
            title="Conversation",
            icon=":material/chat:",
            url_path="conversation",
            visibility="hidden",
        ),
        st.Page(
            HEALTH,
            title="Health",
            icon=":material/monitor_heart:",
            url_path="health",
            visibility=administrator,
        ),
        st.Page(
            SIGN_IN,
            title="Administrator sign-in" if viewer.method is Method.PASSWORD else "Sign in",
            icon=":material/key:" if viewer.method is Method.PASSWORD else ":material/login:",
            url_path=SIGN_IN_PATH,
            visibility="visible" if asks_password else "hidden",
        ),
    ]


def may_see(page: st.Page, viewer: Viewer) -> bool:
    """Whether the viewer may see the page now: the sign-in always, every other page once signed in (OIDC),
    the administrator pages only as an administrator."""
    if page.url_path == SIGN_IN_PATH:
        return True
    if viewer.role is None:
        return False
    return page.url_path not in ADMINISTRATOR_PATHS or viewer.is_administrator


def tab_title(page: st.Page) -> str:
    """The browser tab's title: the page, then the product."""
    return f"{page.title} · {PRODUCT}"


def open_conversation(uid: int) -> None:
    """Switch to the Conversation page showing conversation `uid`."""
    st.switch_page(str(CONVERSATION), query_params={url_state.CONVERSATION: str(uid)})
