"""The sidebar's account box: who is looking, and how to sign out."""

from __future__ import annotations

import streamlit as st

from dashboard import access


def show(viewer: access.Viewer, *, key: str) -> None:
    """The role, and a sign-out button for an administrator session or an OIDC login."""
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
