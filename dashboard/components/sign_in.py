"""The sign-in: OIDC when configured, else the administrator password; on its own page, or in place of a page
the viewer may not see yet (sign_in_gate)."""

from __future__ import annotations

import streamlit as st

from dashboard import access
from dashboard.components import password_form


def show(current: access.Viewer, *, for_page: str | None, key: str) -> None:
    """The sign-in for the viewer; `for_page` names the page it stands in for (None: the sign-in page).
    After a right password the app runs again, on the same address: the page itself then shows."""
    st.title("Signed in" if _signed_in(current, for_page) else "Sign in")
    if current.method is access.Method.OIDC:
        _oidc(current, for_page)
        return
    if current.is_administrator:
        st.success("You are signed in as an administrator.")
        return
    asked = f"The {for_page} page is" if for_page else "The Conversations, Conversation and Health pages are"
    st.write(
        f"Rates and Runs are open on this machine. {asked} for administrators: sign in with the "
        "administrator password (`runrecord demo` and `runrecord dashboard` print one for each start unless "
        "RUNRECORD_ADMIN_PASSWORD_HASH is set)."
    )
    problem = access.setting_problem()
    if problem is not None:
        st.error(f"A setting is malformed: {problem}. Correct it and start the dashboard again.")
        return
    if access.sign_in_ended():
        st.info("Your administrator sign-in has ended. Sign in again to go on.", icon=":material/schedule:")
    result = password_form.show(key=key)
    if result is access.SignInResult.SIGNED_IN:
        st.rerun()
    elif result is access.SignInResult.WRONG_PASSWORD:
        st.error("That is not the administrator password.")
    elif result is access.SignInResult.BAD_SETTING:
        st.error(f"Cannot sign in: {result.value}: {access.setting_problem()}")
    elif result is not None:
        st.error(
            f"Cannot sign in: {result.value}. Set RUNRECORD_ADMIN_PASSWORD_HASH (`runrecord hash-password`)."
        )


def _signed_in(current: access.Viewer, for_page: str | None) -> bool:
    """Whether the sign-in has nothing left to ask: the viewer is signed in with the role it stands for."""
    if current.method is access.Method.OIDC:
        return current.role is not None and (for_page is None or current.is_administrator)
    return current.is_administrator


def _oidc(current: access.Viewer, for_page: str | None) -> None:
    if current.role is not None and for_page is None:
        st.success(f"You are signed in as {current.email or 'this login'} ({current.role.value}).")
        return
    if current.role is not None:
        st.warning(
            f"The {for_page} page is for administrators, and "
            f"{current.email or 'this login'} is not one of the addresses RUNRECORD_ADMIN_EMAILS names."
        )
        return
    then = f" Afterwards the {for_page} page opens." if for_page else ""
    st.write(f"This dashboard asks everyone to sign in with the organisation's identity provider.{then}")
    providers = access.oidc_providers()
    for provider in providers:
        if st.button(f"Sign in with {provider}", key=f"oidc_login_{provider}", type="primary"):
            st.login(provider)
    if not providers and st.button("Sign in with the identity provider", key="oidc_login", type="primary"):
        st.login()
