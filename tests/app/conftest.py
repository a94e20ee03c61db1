"""Fixtures for the dashboard: a demo database the pages read, chosen through RUNRECORD_DB."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from jobs.database import parse_url
from jobs.installation.generate import default_manifest, generate

NOW = datetime(2026, 11, 29, tzinfo=UTC)


@pytest.fixture(scope="session")
def demo_db_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A small demo installation (SQLite), built once per session."""
    url = f"sqlite:///{tmp_path_factory.mktemp('demo') / 'demo.sqlite'}"
    generate(url, conversations=120, seed=1, now=NOW, manifest=default_manifest(parse_url(url)))
    return url


@pytest.fixture
def use_db(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Point the dashboard at a database for one test; its cached engine and queries are cleared."""
    import streamlit as st

    st.cache_resource.clear()
    st.cache_data.clear()
    yield
    st.cache_resource.clear()
    st.cache_data.clear()


@pytest.fixture
def empty_sqlite_url(tmp_path: Path) -> str:
    """A SQLite database without any table."""
    path = tmp_path / "empty.sqlite"
    path.touch()
    return str(parse_url(f"sqlite:///{path}"))
