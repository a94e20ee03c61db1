"""The Rates page's split of the stored "go on" messages (dashboard/components/go_on_split.py): beside the
go-on rate only, each path on both sides of the release, and what it says before the paths were counted."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

from streamlit.testing.v1 import AppTest

from adapters.database import make_engine, parse_url, sqlite_path
from core.metrics import DEFINITIONS, Metric
from dashboard.components import go_on_split
from tests.older_marks import left_by_an_older_runrecord

RELEASE_TAB = {"tab": "release"}
WEEKS = 26  # the widest span the panel offers: every "go on" the small demo planted on each side


def _compared(app: AppTest, metric: Metric) -> AppTest:
    app.selectbox(key="compare_metric").set_value(metric.value).run()
    app.select_slider(key="compare_weeks").set_value(WEEKS).run()
    return app


def _subheaders(app: AppTest) -> list[str]:
    return [element.value for element in app.subheader]


def test_the_split_is_shown_beside_the_go_on_rate_with_every_path_on_both_sides_of_the_release(
    dashboard: Callable[..., AppTest], measured_db_url: str
) -> None:
    app = dashboard(measured_db_url, page="rates", query=RELEASE_TAB)

    _compared(app, Metric.GO_ON_WHILE_WAITING)

    assert not app.exception
    assert go_on_split.TITLE in _subheaders(app)
    frame = next(element.value for element in app.dataframe if "What followed" in element.value.columns)
    rows = {
        row["What followed"]: (row[go_on_split.BEFORE], row[go_on_split.AFTER]) for _, row in frame.iterrows()
    }
    outside, second, unknown = (
        DEFINITIONS[metric].short_label
        for metric in (Metric.GO_ON_FINISHED_OUTSIDE, Metric.GO_ON_SECOND_RUN, Metric.GO_ON_UNKNOWN)
    )
    assert set(rows) == {outside, second, unknown}
    assert rows[second][0].endswith("(100.0%)")  # before the release: every "go on" a second run
    assert rows[outside][1] != "no data" and not rows[outside][1].startswith("0 of")  # after it, the line


def test_the_split_is_not_shown_beside_any_other_rate(
    dashboard: Callable[..., AppTest], measured_db_url: str
) -> None:
    app = dashboard(measured_db_url, page="rates", query=RELEASE_TAB)

    _compared(app, Metric.CLAIMED_UNWRITTEN_RATE)

    assert not app.exception
    assert go_on_split.TITLE not in _subheaders(app)


def test_a_database_measured_before_the_paths_were_counted_says_so(
    dashboard: Callable[..., AppTest], measured_db_url: str, tmp_path: Path
) -> None:
    source = sqlite_path(parse_url(measured_db_url))
    assert source is not None
    shutil.copyfile(source, tmp_path / "older.sqlite")
    url = f"sqlite:///{tmp_path / 'older.sqlite'}"
    engine = make_engine(url)
    with engine.begin() as connection:  # as a measure-rates of rates version 3 left it
        left_by_an_older_runrecord(connection, rates_version=3)
    engine.dispose()
    app = dashboard(url, page="rates", query=RELEASE_TAB)

    _compared(app, Metric.GO_ON_WHILE_WAITING)

    assert not app.exception
    assert go_on_split.TITLE in _subheaders(app)
    assert go_on_split.NOT_COUNTED in [element.value for element in app.caption]
