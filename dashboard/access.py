"""Who is looking: the product team (Rates, Runs) or an administrator (everything).

With Streamlit's OIDC login configured (an [auth] section in .streamlit/secrets.toml) everyone signs in, and
the administrators are the addresses in RUNRECORD_ADMIN_EMAILS. Without it the dashboard listens on
localhost only: Rates and Runs are open to whoever reaches it, and the administrator pages ask for the
administrator password, checked against RUNRECORD_ADMIN_PASSWORD_HASH (adapters.passwords: PBKDF2-SHA256,
compared in constant time). The sign-in lasts as long as the browser session.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

import streamlit as st

from adapters import settings
from adapters.passwords import PasswordHashError, verify_password

SIGNED_IN_KEY = "runrecord_administrator"  # session state: the password was given in this session


class Role(StrEnum):
    PRODUCT = "product team"
    ADMINISTRATOR = "administrator"


class Method(StrEnum):
    OIDC = "oidc"
    PASSWORD = "password"


@dataclass(frozen=True)
class Viewer:
    """The person looking: their role (None: they must sign in first) and how they are known."""

    role: Role | None
    method: Method
    email: str = ""

    @property
    def is_administrator(self) -> bool:
        """Administrators see every page."""
        return self.role is Role.ADMINISTRATOR


def oidc_configured() -> bool:
    """Whether st.secrets has an [auth] section; no secrets file at all means no."""
    try:
        return "auth" in st.secrets
    except FileNotFoundError:  # StreamlitSecretNotFoundError is one: no secrets file, or none readable
        return False


def oidc_providers() -> list[str]:
    """The named providers of [auth] ([auth.google], [auth.microsoft], …); empty when [auth] holds one."""
    try:
        section = st.secrets.get("auth", {})
    except FileNotFoundError:
        return []
    return sorted(name for name, value in section.items() if isinstance(value, Mapping))


def admin_emails() -> frozenset[str]:
    """The administrators' addresses from RUNRECORD_ADMIN_EMAILS, compared case-insensitively."""
    return frozenset(part.strip().lower() for part in settings.get("admin_emails").split(",") if part.strip())


def viewer() -> Viewer:
    """The viewer of this session."""
    if oidc_configured():
        if not st.user.get("is_logged_in", False):
            return Viewer(None, Method.OIDC)
        email = str(st.user.get("email") or "").strip().lower()
        role = Role.ADMINISTRATOR if email and email in admin_emails() else Role.PRODUCT
        return Viewer(role, Method.OIDC, email)
    if st.session_state.get(SIGNED_IN_KEY) is True:
        return Viewer(Role.ADMINISTRATOR, Method.PASSWORD)
    return Viewer(Role.PRODUCT, Method.PASSWORD)


class SignInResult(StrEnum):
    SIGNED_IN = "signed in"
    WRONG_PASSWORD = "wrong password"
    NOT_CONFIGURED = "no administrator password is configured"
    BAD_HASH = "the configured hash cannot be read"


def sign_in(password: str) -> SignInResult:
    """Check the administrator password against the configured hash; on success, for this session."""
    stored = settings.get("admin_password_hash")
    if not stored.strip():
        return SignInResult.NOT_CONFIGURED
    try:
        matches = verify_password(password, stored)
    except PasswordHashError:
        return SignInResult.BAD_HASH
    if not matches:
        return SignInResult.WRONG_PASSWORD
    st.session_state[SIGNED_IN_KEY] = True
    return SignInResult.SIGNED_IN


def sign_out(current: Viewer) -> None:
    """End the administrator session (password) or the OIDC login."""
    st.session_state.pop(SIGNED_IN_KEY, None)
    if current.method is Method.OIDC:
        st.logout()


def require_administrator() -> None:
    """Stop a page unless the viewer is an administrator (the navigation does not offer it otherwise)."""
    if not viewer().is_administrator:
        st.error("This page is for administrators.")
        st.stop()
