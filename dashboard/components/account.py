"""The sidebar's account box: who is looking, how to sign out, and the browser's copy of the sign-in."""

from __future__ import annotations

import streamlit as st

from dashboard import access
from dashboard.components import browser_cookie


def show(viewer: access.Viewer, *, key: str) -> None:
    """The role, a sign-out button for an administrator session or an OIDC login, and the token cookie kept
    in step with this tab's sign-in (access.cookie_to_keep)."""
    if viewer.role is None:
        return
    with st.sidebar:
        who = f" ({viewer.email})" if viewer.email else ""
        st.caption(
            f"Signed in as {viewer.role.value}{who}"
            if viewer.method is access.Method.OIDC or viewer.is_administrator
            else f"Viewing as {viewer.role.value}"
        )
        if (viewer.is_administrator or viewer.method is access.Method.OIDC) and st.button(
            "Sign out", key=key
        ):
            access.sign_out(viewer)
            st.rerun()
        kept = access.cookie_to_keep() if viewer.method is access.Method.PASSWORD else None
        if kept is not None:
            browser_cookie.show(
                access.TOKEN_COOKIE, kept.token, max_age_s=kept.max_age_s, key=f"{key}_cookie"
            )
