"""Fixtures for the dashboard: the databases its pages read, chosen through RUNRECORD_DB, and a way to run
the app as either role."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import date
from pathlib import Path

import pytest
from sqlalchemy import Engine, event
from streamlit.testing.v1 import AppTest

from adapters.database import parse_url
from dashboard.access import SIGNED_IN_KEY, issue_token
from dashboard.navigation import SIGN_IN
from data.generate import campaign_tours
from tests.app.installations import SMALL_DEMO, bad_rows, measured_copy, small_demo
from tests.conftest import NOW, REPO_ROOT

APP = str(REPO_ROOT / "dashboard" / "app.py")
TIMEOUT_S = 60
# All the small demo holds: the conversations it asks for and its SEO campaign's tours (data/generate.py).
SMALL_DEMO_CONVERSATIONS = SMALL_DEMO + campaign_tours(SMALL_DEMO)


@pytest.fixture(scope="session")
def demo_db_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A small demo installation (SQLite), built once per session; no job has run on it."""
    url = f"sqlite:///{tmp_path_factory.mktemp('demo') / 'demo.sqlite'}"
    small_demo(url, NOW)
    return url


@pytest.fixture(scope="session")
def measured(tmp_path_factory: pytest.TempPathFactory, demo_db_url: str) -> tuple[str, date]:
    """The demo installation with its release recorded and every job run once: (URL, release day)."""
    return measured_copy(demo_db_url, tmp_path_factory.mktemp("measured") / "measured.sqlite", NOW)


@pytest.fixture(scope="session")
def measured_db_url(measured: tuple[str, date]) -> str:
    """The measured demo installation's URL."""
    return measured[0]


@pytest.fixture(scope="session")
def bad_row_db(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict[str, int | str]]:
    """An installation with bad rows (builder overrides), measured by the jobs: (URL, what was planted)."""
    url = f"sqlite:///{tmp_path_factory.mktemp('bad') / 'bad.sqlite'}"
    return url, bad_rows(url, NOW)


def clear_caches() -> None:
    """Empty the dashboard's cached engines and queries."""
    import streamlit as st

    st.cache_resource.clear()
    st.cache_data.clear()


@pytest.fixture
def use_db(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Clear the dashboard's cached engines and queries around one test."""
    clear_caches()
    yield
    clear_caches()


@pytest.fixture
def empty_sqlite_url(tmp_path: Path) -> str:
    """A SQLite database without any table."""
    path = tmp_path / "empty.sqlite"
    path.touch()
    return str(parse_url(f"sqlite:///{path}"))


def run_dashboard(
    monkeypatch: pytest.MonkeyPatch,
    url: str,
    *,
    administrator: bool = False,
    page: str | None = None,
    query: dict[str, str] | None = None,
) -> AppTest:
    """The app run once on the database, as the product team or as an administrator signed in with the
    password (this tab's token), optionally on one page."""
    monkeypatch.setenv("RUNRECORD_DB", url)
    app = AppTest.from_file(APP, default_timeout=TIMEOUT_S)
    if administrator:
        app.session_state[SIGNED_IN_KEY] = issue_token()
    # Before its first run AppTest finds a page by its file's name, which is every view's url_path but the
    # sign-in's (dashboard.navigation): a view is opened at its own path, as a browser opens a link to it,
    # without running the default page first.
    if page is not None and page != SIGN_IN.stem:
        app.query_params.update(query or {})
        return app.switch_page(f"views/{page}.py").run()
    app.run()
    if page is not None:
        app.query_params.update(query or {})
        app.switch_page(f"views/{page}.py").run()
    return app


@pytest.fixture
def dashboard(monkeypatch: pytest.MonkeyPatch, use_db: None) -> Callable[..., AppTest]:
    """dashboard(url, administrator=False, page=None, query=None): run_dashboard on the database."""
    return lambda url, **options: run_dashboard(monkeypatch, url, **options)


@contextmanager
def recorded_statements() -> Iterator[list[str]]:
    """Every SQL statement any engine sends while inside."""
    sent: list[str] = []

    def record(_conn: object, _cursor: object, statement: str, *_args: object) -> None:
        sent.append(statement)

    event.listen(Engine, "before_cursor_execute", record)
    try:
        yield sent
    finally:
        event.remove(Engine, "before_cursor_execute", record)


@pytest.fixture
def statements() -> Iterator[list[str]]:
    """Every SQL statement any engine sends while the test runs."""
    with recorded_statements() as sent:
        yield sent
