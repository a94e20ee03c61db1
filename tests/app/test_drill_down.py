"""A cell of a split opens the Runs page filtered to exactly the runs behind its figure; a cell without a
figure (too few to show) opens nothing."""

from __future__ import annotations

import json
import re
from collections.abc import Callable

import pandas as pd
from streamlit.testing.v1 import AppTest

from dashboard.components.group_split import cell_runs
from dashboard.queries.rates import TOO_FEW
from tests.app import rendered


def _split(app: AppTest) -> pd.DataFrame:
    return next(table for table in rendered.tables(app) if table.index.name == "period start")


def _select(app: AppTest, row: int, column: str) -> AppTest:
    app.session_state["split"] = {"selection": {"rows": [], "columns": [], "cells": [[row, column]]}}
    return app.run()


def test_a_split_cell_opens_the_runs_of_its_period_group_and_numerator(
    dashboard: Callable[..., AppTest], measured_db_url: str
) -> None:
    app = dashboard(measured_db_url, page="rates", query={"tab": "configurations", "group": "skill"})
    app.selectbox(key="split_metric").set_value("edited_rate").run()
    split = _split(app)
    row, column = next(
        (index, name)
        for index, (_, cells) in enumerate(split.iterrows())
        for name, cell in cells.items()
        if re.match(r"\d+\.\d% \([1-9]", str(cell))
    )
    numerator = int(re.match(r"[\d.]+% \(([\d,]+)/", split.iloc[row][column])[1])  # type: ignore[index]

    _select(app, row, column)

    assert not app.exception
    assert [title.value for title in app.title] == ["Runs"]
    chosen = json.loads(app.query_params["runs"])
    assert chosen["outcome"] == "edited" and chosen["ended_from"] == split.index[row]
    assert chosen["skill"] == column
    assert any(f"· {numerator:,} run" in text.value for text in app.markdown)


def test_a_cell_too_few_to_show_opens_no_runs(measured_db_url: str) -> None:
    frame = pd.DataFrame(
        [
            {
                "period_start": pd.Timestamp("2026-11-09").date(),
                "group": "small-assistant",
                "group_value": "small-assistant",
                "runs": None,
                "numerator": None,
                "denominator": None,
                "rate": None,
                "low": None,
                "high": None,
                "shown": False,
            }
        ]
    )

    found = cell_runs(frame, "edited_rate", "week", "configuration", "2026-11-09", "small-assistant")

    assert found is None and TOO_FEW == "too few to show"
