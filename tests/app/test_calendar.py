"""The pages' answers do not depend on the hour the suite runs: the same installation, generated around each
of several clocks and measured at it, gives the Rates page's same verdicts."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, date, datetime
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from adapters import settings
from adapters.database import make_engine
from core.metrics import Metric
from jobs import releases
from tests.app.conftest import NOW
from tests.app.installations import measured_copy, run_the_jobs, small_demo

# The clocks at which the calendar could tip a verdict: the week boundary from both sides, a day boundary,
# an evening hour (at which a planted "go on" once crossed the release) and a day on which a release was
# marked; each is held against the suite's own clock (tests/conftest.py).
RELEASE_TAB = {"tab": "release"}
CLOCKS = {
    "the first hour of an ISO week": datetime(2026, 11, 23, 0, 20, tzinfo=UTC),
    "the last hour of an ISO week": datetime(2026, 11, 29, 23, 40, tzinfo=UTC),
    "just after midnight UTC": datetime(2026, 11, 26, 0, 1, tzinfo=UTC),
    "an evening hour": datetime(2026, 12, 1, 19, 0, tzinfo=UTC),
    "the day a release was marked": datetime(2026, 12, 3, 9, 30, tzinfo=UTC),
}
MARKED_TODAY = "the day a release was marked"
VERDICT = re.compile(r"\*\*(.+?)\*\*")
COMPARED = (
    Metric.EDITED_RATE,
    Metric.NOTHING_SAVED_RATE,
    Metric.CLAIMED_UNWRITTEN_RATE,
    Metric.GO_ON_WHILE_WAITING,
)
WIDEST = 26  # weeks on each side: every "go on" the small demo planted


def _measured_at(clock: datetime, work: Path, *, mark_today: bool = False) -> tuple[str, date]:
    """The small demo generated around `clock` and measured at it, with the clock set for the jobs and their
    job log; with mark_today, a second release marked on the clock's own day before the jobs run again."""
    demo = f"sqlite:///{work / 'demo.sqlite'}"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(settings.variable("now"), clock.isoformat())
        small_demo(demo, clock)
        url, released_on = measured_copy(demo, work / "measured.sqlite", clock)
        if mark_today:
            engine = make_engine(url)
            releases.add_release(engine, clock.date(), "Marked today", now=int(clock.timestamp()))
            engine.dispose()
            run_the_jobs(url, clock)
    return url, released_on


def _verdicts(app: AppTest, released_on: date) -> dict[str, object]:
    """What the Rates page concludes across the planted release: each compared rate's verdict and which
    "go on" paths it saw on each side; none of the dates and counts that move with the clock."""
    found: dict[str, object] = {}
    app.selectbox(key="filters_marker").set_value(released_on.isoformat()).run()
    for metric in COMPARED:
        app.selectbox(key="compare_metric").set_value(metric.value).run()
        boxes = [str(box.value) for box in (*app.success, *app.warning, *app.info)]
        found[metric.value] = [VERDICT.findall(box) for box in boxes if "weeks each side" in box]
    app.select_slider(key="compare_weeks").set_value(WIDEST).run()
    split = next(element.value for element in app.dataframe if "What followed" in element.value.columns)
    found["go on: paths seen before, after"] = {
        row["What followed"]: tuple(not str(cell).startswith(("0 of", "no data")) for cell in row.iloc[1:])
        for _, row in split.iterrows()
    }
    assert not app.exception
    return found


@pytest.fixture(scope="module")
def at_the_suites_clock(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, date]:
    return _measured_at(NOW, tmp_path_factory.mktemp("calendar"))


@pytest.mark.parametrize("moment", sorted(CLOCKS))
def test_the_rates_page_gives_the_same_verdicts_at_every_clock(
    dashboard: Callable[..., AppTest],
    at_the_suites_clock: tuple[str, date],
    moment: str,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    clock = CLOCKS[moment]
    url, released_on = _measured_at(clock, tmp_path, mark_today=moment == MARKED_TODAY)
    expected = _verdicts(
        dashboard(at_the_suites_clock[0], page="rates", query=RELEASE_TAB), at_the_suites_clock[1]
    )
    monkeypatch.setenv(settings.variable("now"), clock.isoformat())

    found = _verdicts(dashboard(url, page="rates", query=RELEASE_TAB), released_on)

    assert found == expected
    assert expected["go on: paths seen before, after"] == {
        "decided elsewhere and finished": (False, True),
        "a second run started": (True, False),
        "neither can be read": (False, False),
    }
