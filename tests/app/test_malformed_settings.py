"""A malformed setting on the dashboard: every page says so in one error line, never an exception."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from streamlit.testing.v1 import AppTest


@pytest.mark.parametrize("page", [None, "runs", "run", "conversations", "conversation", "health"])
def test_a_malformed_window_setting_is_one_error_line_on_every_page(
    monkeypatch: pytest.MonkeyPatch, dashboard: Callable[..., AppTest], demo_db_url: str, page: str | None
) -> None:
    monkeypatch.setenv("RUNRECORD_WINDOW_DAYS", "abc")

    app = dashboard(demo_db_url, administrator=True, page=page)

    assert not app.exception
    assert [error.value for error in app.error] == [
        "A setting is malformed: RUNRECORD_WINDOW_DAYS='abc' is not a whole number of days, from 1 to 3650. "
        "Correct it and start the dashboard again."
    ]
