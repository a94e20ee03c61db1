"""Who is looking: the product team (Rates, Runs) or an administrator (everything).

With Streamlit's OIDC login configured (an [auth] section in .streamlit/secrets.toml) everyone signs in, and
the administrators are the addresses in RUNRECORD_ADMIN_EMAILS; Streamlit's own cookie keeps the login.
Without it the dashboard listens on localhost only: Rates and Runs are open to whoever reaches it, and the
administrator pages ask for the administrator password, checked against RUNRECORD_ADMIN_PASSWORD_HASH
(adapters.passwords: PBKDF2-SHA256, compared in constant time). A right password gives this tab a token
(adapters.admin_sessions: signed, expiring after RUNRECORD_ADMIN_SESSION_MINUTES), which the browser keeps
in a cookie, so that a reload, a bookmark or another tab of the same browser stays signed in; the server
checks it on every run.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

import streamlit as st

from adapters import admin_sessions, clock, settings
from adapters.admin_sessions import TokenCheck
from adapters.database import RunrecordError
from adapters.passwords import PasswordHashError, verify_password
from dashboard.components import browser_cookie

SIGNED_IN_KEY = "runrecord_administrator"  # session state: this tab's administrator token
SIGNED_OUT_KEY = "runrecord_signed_out"  # session state: this tab signed out, so the browser drops the cookie
TOKEN_COOKIE = "runrecord_admin"  # the browser's copy of the token


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


def _now() -> int:
    return clock.unix()


def _checked(token: object) -> TokenCheck:
    """A token's check against the configured key and lifetime; MALFORMED for anything but a token, and for
    every token while a session setting is malformed (guard.show names it on every page)."""
    if not isinstance(token, str):
        return TokenCheck.MALFORMED
    try:
        signing_key = admin_sessions.key(settings.admin_session_secret())
        lifetime_s = settings.admin_session_minutes() * 60
    except RunrecordError:
        return TokenCheck.MALFORMED
    return admin_sessions.check(signing_key, token, now=_now(), lifetime_s=lifetime_s)


def setting_problem() -> str | None:
    """What is wrong with RUNRECORD_ADMIN_SESSION_MINUTES or RUNRECORD_ADMIN_SESSION_SECRET; None: nothing."""
    try:
        settings.admin_session_secret()
        settings.admin_session_minutes()
    except RunrecordError as error:
        return str(error)
    return None


def session_token() -> str | None:
    """This tab's valid administrator token: the one its sign-in made, else the one its browser sent (kept
    for the tab from then on); None when neither is valid."""
    own = st.session_state.get(SIGNED_IN_KEY)
    if own is not None and _checked(own) is TokenCheck.VALID:
        return str(own)
    st.session_state.pop(SIGNED_IN_KEY, None)
    sent = browser_cookie.sent(TOKEN_COOKIE)
    if sent is not None and not st.session_state.get(SIGNED_OUT_KEY) and _checked(sent) is TokenCheck.VALID:
        st.session_state[SIGNED_IN_KEY] = sent
        return sent
    return None


def sign_in_ended() -> bool:
    """Whether the browser sent an administrator token that has expired (the page says so beside the form)."""
    return _checked(browser_cookie.sent(TOKEN_COOKIE)) is TokenCheck.EXPIRED


def viewer() -> Viewer:
    """The viewer of this session."""
    if oidc_configured():
        if not st.user.get("is_logged_in", False):
            return Viewer(None, Method.OIDC)
        email = str(st.user.get("email") or "").strip().lower()
        role = Role.ADMINISTRATOR if email and email in admin_emails() else Role.PRODUCT
        return Viewer(role, Method.OIDC, email)
    if session_token() is not None:
        return Viewer(Role.ADMINISTRATOR, Method.PASSWORD)
    return Viewer(Role.PRODUCT, Method.PASSWORD)


def issue_token() -> str:
    """A new administrator token for a new session, valid for RUNRECORD_ADMIN_SESSION_MINUTES from now;
    RunrecordError when a session setting is malformed."""
    signing_key = admin_sessions.key(settings.admin_session_secret())
    return admin_sessions.issue(signing_key, now=_now(), lifetime_s=settings.admin_session_minutes() * 60)


class SignInResult(StrEnum):
    SIGNED_IN = "signed in"
    WRONG_PASSWORD = "wrong password"
    NOT_CONFIGURED = "no administrator password is configured"
    BAD_HASH = "the configured hash cannot be read"
    BAD_SETTING = "a sign-in setting is malformed"


def sign_in(password: str) -> SignInResult:
    """Check the administrator password against the configured hash; on success, a token for this tab."""
    stored = settings.get("admin_password_hash")
    if not stored.strip():
        return SignInResult.NOT_CONFIGURED
    try:
        matches = verify_password(password, stored)
    except PasswordHashError:
        return SignInResult.BAD_HASH
    if not matches:
        return SignInResult.WRONG_PASSWORD
    try:
        token = issue_token()
    except RunrecordError:
        return SignInResult.BAD_SETTING
    st.session_state[SIGNED_IN_KEY] = token
    st.session_state.pop(SIGNED_OUT_KEY, None)
    return SignInResult.SIGNED_IN


def sign_out(current: Viewer) -> None:
    """End the administrator session everywhere (its token is refused from now on, in every tab) or the
    OIDC login."""
    token = st.session_state.pop(SIGNED_IN_KEY, None)
    parsed = admin_sessions.read(token) if isinstance(token, str) else None
    if parsed is not None:
        admin_sessions.SIGNED_OUT.add(parsed, now=_now())
    st.session_state[SIGNED_OUT_KEY] = True
    if current.method is Method.OIDC:
        st.logout()


@dataclass(frozen=True)
class KeptCookie:
    """What the browser is to keep: the token for `max_age_s` seconds, or (token None) nothing."""

    token: str | None
    max_age_s: int = 0


def cookie_to_keep() -> KeptCookie | None:
    """The token cookie the browser should hold now: this tab's token while it is signed in; removed after a
    sign-out or when the browser sent a token that is no longer valid; None: leave it as it is."""
    token = session_token()
    if token is not None:
        parsed = admin_sessions.read(token)
        return KeptCookie(token, (parsed.expiry - _now()) if parsed is not None else 0)
    if st.session_state.get(SIGNED_OUT_KEY) or browser_cookie.sent(TOKEN_COOKIE) is not None:
        return KeptCookie(None)
    return None


def require_administrator() -> None:
    """Stop a page unless the viewer is an administrator (the app shows the sign-in in its place first)."""
    if not viewer().is_administrator:
        st.error("This page is for administrators.")
        st.stop()
