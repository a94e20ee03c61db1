"""The sign-in in place of a page the viewer may not see yet, so that a link to it works once signed in.

With the password, the sign-in happens on the page's own address: after it the app runs again there, with the
same query parameters, and the page itself shows. With OIDC, st.login always comes back to the app's root
(Streamlit's callback redirects there), so the page asked for is kept in a short-lived cookie before the
login and opened, with its parameters, once the login is back.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from urllib.parse import parse_qsl, urlencode

import streamlit as st

from dashboard import access, navigation, url_state
from dashboard.components import browser_cookie, sign_in

RETURN_COOKIE = "runrecord_return"
RETURN_MAX_AGE_S = 600  # a login at the identity provider takes a minute, not an hour
RETURNED_KEY = "runrecord_returned"  # session state: this tab has opened the page the cookie kept
RETURN_PARAMS = frozenset({url_state.RUN, url_state.CONVERSATION, url_state.RUNS_FILTER})
MAX_RETURN_CHARS = 600  # a page's path and a runs filter (url_state.MAX_PARAM_CHARS) with their escapes


def show(viewer: access.Viewer, page: st.Page, registered: Sequence[st.Page], *, key: str) -> bool:
    """Whether the page may run; if not, the sign-in is shown in its place, and nothing of the page."""
    if viewer.method is access.Method.OIDC and viewer.role is not None:
        _return_after_login(page, registered, key=key)
    if navigation.may_see(page, viewer):
        return True
    if viewer.method is access.Method.OIDC and viewer.role is None and page.url_path:
        target = return_target(page.url_path, st.query_params.to_dict())
        browser_cookie.show(RETURN_COOKIE, target, max_age_s=RETURN_MAX_AGE_S, key=f"{key}_return")
    sign_in.show(viewer, for_page=page.title, key="password")
    return False


def return_target(url_path: str, query: Mapping[str, str]) -> str:
    """The page to come back to: its path and the query parameters a page reads, as a relative URL."""
    kept = sorted((name, value) for name, value in query.items() if name in RETURN_PARAMS)
    return f"{url_path}?{urlencode(kept)}" if kept else url_path


def parse_return_target(text: str, registered: Sequence[st.Page]) -> tuple[st.Page, dict[str, str]] | None:
    """The registered page and the parameters a kept target names; None for anything else."""
    if len(text) > MAX_RETURN_CHARS:
        return None
    url_path, _, query = text.partition("?")
    page = next((p for p in registered if p.url_path and p.url_path == url_path), None)
    if page is None or url_path == navigation.SIGN_IN_PATH:
        return None
    try:
        pairs = parse_qsl(query, strict_parsing=bool(query), max_num_fields=len(RETURN_PARAMS))
    except ValueError:
        return None
    params = dict(pairs)
    if len(params) != len(pairs) or not set(params) <= RETURN_PARAMS:
        return None
    return page, params  # each page validates its own parameters (url_state)


def _return_after_login(page: st.Page, registered: Sequence[st.Page], *, key: str) -> None:
    """Once per tab after an OIDC login: open the page kept before it, then drop the cookie."""
    kept = browser_cookie.sent(RETURN_COOKIE)
    if kept is None:
        return
    if not st.session_state.get(RETURNED_KEY):
        st.session_state[RETURNED_KEY] = True
        target = parse_return_target(kept, registered)
        if target is not None and not page.url_path:  # only where the login lands: the root
            st.switch_page(target[0], query_params=target[1])
    browser_cookie.show(RETURN_COOKIE, None, max_age_s=0, key=f"{key}_return")
