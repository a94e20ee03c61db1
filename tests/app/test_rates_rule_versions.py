"""The Rates page beside figures whose runs were derived under two rule versions, in AppTest: a note under
each outcome chart naming the periods that mix them, and under each compared side that does; nothing on a
database whose runs are all of one version."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from adapters.database import make_engine
from core.outcomes import RULE_VERSION
from core.periods import Grain
from dashboard.components import rates_tab
from jobs.derive import derive_outcomes
from jobs.measure import measure_rates
from jobs.releases import add_release
from jobs.schema_setup import init_db
from tests.app.conftest import NOW
from tests.app.installations import WINDOW_S
from tests.db.configurations import (
    OLD_RULE_VERSION,
    derived_under_two_rule_versions,
    mixed_week,
    plant_two_configurations,
)

AT = int(NOW.timestamp())
MIXED = mixed_week(AT)
RELEASE = MIXED + timedelta(weeks=1)  # the weeks before it hold the mixed one, those from it one version
BOTH = f"mixes runs derived under rules {OLD_RULE_VERSION} and {RULE_VERSION}"


def _built(path: Path, derive: Callable[[str], None]) -> str:
    url = f"sqlite:///{path}"
    engine = make_engine(url)
    try:
        init_db(engine, with_upstream=True)
        plant_two_configurations(engine, now=AT)
        add_release(engine, RELEASE, "prompt 2", now=AT)
    finally:
        engine.dispose()
    derive(url)
    return url


def _two_nights(url: str) -> None:
    engine = make_engine(url)
    try:
        derived_under_two_rule_versions(engine, now=AT, window_s=WINDOW_S)
    finally:
        engine.dispose()


def _one_night(url: str) -> None:
    engine = make_engine(url)
    try:
        derive_outcomes(engine, now=AT, window_s=WINDOW_S)
        measure_rates(engine, now=AT, window_s=WINDOW_S, grains=(Grain.WEEK, Grain.DAY))
    finally:
        engine.dispose()


@pytest.fixture(scope="module")
def two_versions(tmp_path_factory: pytest.TempPathFactory) -> str:
    """Two configurations (tests/db/configurations.py) whose runs two nights derived under two versions."""
    return _built(tmp_path_factory.mktemp("two_versions") / "two.sqlite", _two_nights)


@pytest.fixture(scope="module")
def one_version(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The same installation, every run derived in one night under the current rules."""
    return _built(tmp_path_factory.mktemp("one_version") / "one.sqlite", _one_night)


def _captions(app: AppTest) -> list[str]:
    return [str(caption.value) for caption in app.caption]


def test_a_period_whose_runs_were_derived_under_two_rule_versions_says_so_beside_its_rate(
    dashboard: Callable[..., AppTest], two_versions: str
) -> None:
    apps = [
        dashboard(two_versions, page="rates", query={"tab": tab, "range": "all"})
        for tab in ("overview", "outcomes", "release", "configurations")
    ]

    assert not any(app.exception for app in apps)
    captions = [caption for app in apps for caption in _captions(app)]
    period_note = f"Week of {MIXED.isoformat()} {BOTH}."
    # under the EDITED chart, the outcome mix and the edit scopes: each counts derived runs
    assert captions.count(period_note) == 3
    # the side before the release, and both configurations over every closed week they share
    assert captions.count(f"This side {BOTH}.") == 3


def test_a_period_of_one_rule_version_says_nothing(
    dashboard: Callable[..., AppTest], one_version: str
) -> None:
    apps = [dashboard(one_version, page="rates", query={"tab": tab}) for tab in rates_tab.NAMES]

    assert not any(app.exception for app in apps)
    assert not any("mixes runs derived" in caption for app in apps for caption in _captions(app))
