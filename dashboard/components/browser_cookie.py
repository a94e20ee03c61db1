"""A cookie of the dashboard's own in the browser: read as the browser sent it, written by a few lines of JS.

Streamlit hands a script the cookies the browser sent when its tab connected (`st.context.cookies`), and
has no call that sets one; a component (`st.components.v2`, whose JS runs in the page itself) writes it.
What it writes is data (a name from this module, a token of adapters.admin_sessions), never code. A
cookie so written is SameSite=Strict, on the app's path, Secure over https, and not HttpOnly (JS cannot
write one that is): it holds only what may be shown to the browser that holds it.
"""

from __future__ import annotations

import streamlit as st

_JS = """
export default function ({ data }) {
    const secure = window.location.protocol === "https:" ? "; Secure" : "";
    const value = data.value === null ? "" : encodeURIComponent(data.value);
    const maxAge = data.value === null ? 0 : data.maxAge;
    document.cookie = `${data.name}=${value}; Path=${data.path}; Max-Age=${maxAge}; SameSite=Strict${secure}`;
}
"""

_COMPONENT = st.components.v2.component("runrecord_cookie", js=_JS)


def sent(name: str) -> str | None:
    """The cookie's value as the browser sent it when this tab connected; None when it sent none."""
    value = st.context.cookies.get(name)
    return value if isinstance(value, str) and value else None


def _path() -> str:
    base = str(st.get_option("server.baseUrlPath") or "").strip("/")
    return f"/{base}" if base else "/"


def show(name: str, value: str | None, *, max_age_s: int, key: str) -> None:
    """Keep the cookie in the browser with this value for `max_age_s` seconds, or remove it (value None)."""
    _COMPONENT(
        data={"name": name, "value": value, "maxAge": max(int(max_age_s), 0), "path": _path()},
        key=key,
        height=0,
    )
