"""Every page has a path of its own that opens it: /rates as much as the root, which Streamlit reserves for
its default page whatever path that page declares."""

from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

from dashboard import navigation
from tests.app.conftest import TIMEOUT_S

ROLES = ["product team", "administrator", None]


def _registered(role: str | None) -> None:
    """The pages as registered for a viewer of `role`, each as [path, script, visibility, title]."""
    import json

    import streamlit as st

    from dashboard import navigation
    from dashboard.access import Method, Role, Viewer

    viewer = Viewer(None if role is None else Role(role), Method.PASSWORD if role else Method.OIDC)
    rows = [
        [page.url_path, str(page._page), page.visibility, page.title] for page in navigation.pages(viewer)
    ]
    st.text(json.dumps(rows))


def _pages(role: str | None) -> list[list[str]]:
    app = AppTest.from_function(_registered, args=(role,), default_timeout=TIMEOUT_S).run()
    assert not app.exception
    return list(json.loads(app.text[0].value))


@pytest.mark.parametrize("role", ROLES, ids=["product team", "administrator", "signed out (OIDC)"])
def test_every_page_script_has_a_path_of_its_own_and_rates_has_one_besides_the_root(role: str | None) -> None:
    registered = _pages(role)

    paths = {path: script for path, script, _, _ in registered}

    assert paths[""] == str(navigation.RATES)  # the root runs Rates
    assert paths["rates"] == str(navigation.RATES)  # and so does /rates, which the menu links
    for script in (navigation.RUNS, navigation.RUN, navigation.CONVERSATION, navigation.HEALTH):
        assert paths[script.stem] == str(script)
    assert paths[navigation.SIGN_IN_PATH] == str(navigation.SIGN_IN)
    assert len(paths) == len(registered)  # no two pages share a path


def test_the_menu_lists_rates_once_and_links_it_at_its_own_path() -> None:
    registered = _pages("product team")

    listed = [(path, title) for path, script, visibility, title in registered if visibility == "visible"]

    assert [path for path, title in listed if title == "Rates"] == ["rates"]
