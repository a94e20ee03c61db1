"""The administrator password, asked for when no OIDC login is configured."""

from __future__ import annotations

import streamlit as st

from dashboard import access


def show(*, key: str) -> access.SignInResult | None:
    """A password form; the result of the check once submitted, None before."""
    with st.form(key):
        password = st.text_input("Administrator password", type="password", key=f"{key}_password")
        submitted = st.form_submit_button("Sign in")
    if not submitted:
        return None
    return access.sign_in(password)
