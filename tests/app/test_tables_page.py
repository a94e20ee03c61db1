"""The Tables page: row counts of the installation's tables and ours, on any database."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from tests.conftest import REPO_ROOT

APP = str(REPO_ROOT / "dashboard" / "app.py")


def _run(monkeypatch: pytest.MonkeyPatch, url: str) -> AppTest:
    monkeypatch.setenv("RUNRECORD_DB", url)
    return AppTest.from_file(APP, default_timeout=30).run()


def test_the_tables_page_counts_the_rows_of_every_table(
    monkeypatch: pytest.MonkeyPatch, use_db: None, demo_db_url: str
) -> None:
    app = _run(monkeypatch, demo_db_url)

    assert not app.exception
    counts = app.dataframe[0].value.set_index("table")["rows"]
    assert counts["tx_nrmcpagent_conversation"] == 120
    assert counts["sys_history"] > 0


def test_the_tables_page_says_what_to_do_on_a_database_without_tables(
    monkeypatch: pytest.MonkeyPatch, use_db: None, empty_sqlite_url: str
) -> None:
    app = _run(monkeypatch, empty_sqlite_url)

    assert not app.exception
    assert "runrecord init-db" in app.info[0].value
