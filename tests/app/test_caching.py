"""The dashboard's caches are keyed on the data the jobs write: a new job result is read at once, and the
five-minute watch does not throw the Rates page's results away; what they keep is what a page shows."""

from __future__ import annotations

import pickle
import shutil
from collections.abc import Callable
from datetime import date
from pathlib import Path

from streamlit.testing.v1 import AppTest

from adapters.database import make_engine, parse_url, sqlite_path
from core.groups import ALL_RUNS
from core.survival import Tally
from core.survival_report import GroupTallies, survival_report
from core.time import DAY_S
from dashboard.queries import survival
from dashboard.queries.common import data_version
from jobs import releases, watch
from tests.app import rendered
from tests.app.conftest import NOW

WEEK_S = 7 * DAY_S


def _copy(url: str, target: Path) -> str:
    source = sqlite_path(parse_url(url))
    assert source is not None
    shutil.copyfile(source, target)
    return f"sqlite:///{target}"


def test_a_release_recorded_after_the_page_was_read_shows_on_the_next_render(
    dashboard: Callable[..., AppTest], measured_db_url: str, tmp_path: Path
) -> None:
    url = _copy(measured_db_url, tmp_path / "copy.sqlite")
    app = dashboard(url)
    engine = make_engine(url)
    releases.add_release(engine, date(2026, 11, 2), "Card texts in English", now=int(NOW.timestamp()))
    engine.dispose()

    app.run()

    labels = [note["text"] for note in rendered.figures(app)[0]["layout"]["annotations"]]
    assert any("Card texts in English" in label for label in labels)


def test_a_watch_reading_changes_what_health_reads_but_not_what_rates_read(
    measured_db_url: str, tmp_path: Path
) -> None:
    url = _copy(measured_db_url, tmp_path / "copy.sqlite")
    engine = make_engine(url)
    before = data_version(engine)

    watch.run_job(url, now=NOW)
    after = data_version(engine)
    engine.dispose()

    assert after.rates == before.rates and after.runs == before.runs
    assert after.jobs != before.jobs


def _cached_survival_size(distinct_times: int) -> int:
    """The bytes the cache copies on each render for a curve of all writes with this many distinct times."""
    spacing = WEEK_S // (distinct_times + 1)
    tallies = tuple(Tally(spacing * (n + 1), 1, 0) for n in range(distinct_times))
    kept = Tally(WEEK_S, 0, distinct_times)
    counted = GroupTallies(
        group=ALL_RUNS,
        tallies=(*tallies, kept),
        runs=2 * distinct_times,
        unknown=0,
        undated=0,
        window_s=WEEK_S,
    )
    return len(pickle.dumps(survival.view(survival_report([counted], window_s=WEEK_S))))


def test_the_survival_chart_is_cached_as_drawn_whatever_the_number_of_distinct_times() -> None:
    few, many = _cached_survival_size(300), _cached_survival_size(30_000)

    assert many < 1.1 * few  # one point an hour of the window, never a step per distinct time
