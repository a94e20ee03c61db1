"""The Rates page's configuration against configuration and survival of AI text, in AppTest."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from adapters.database import make_engine
from core.periods import Grain
from dashboard.components import survival_chart
from jobs.measure import measure_rates
from jobs.schema_setup import init_db
from tests.app import rendered
from tests.app.conftest import NOW
from tests.app.installations import WINDOW_S, run_the_jobs
from tests.db.configurations import CANARY, RARE, RUNS_A_WEEK, STABLE, plant_two_configurations

CONFIGURATIONS, SURVIVAL = {"tab": "configurations"}, {"tab": "survival"}


@pytest.fixture(scope="module")
def two_configurations(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A stable configuration and its canary (tests/db/configurations.py), built around the current hour and
    measured by the jobs."""
    url = f"sqlite:///{tmp_path_factory.mktemp('configurations') / 'configurations.sqlite'}"
    engine = make_engine(url)
    try:
        init_db(engine, with_upstream=True)
        plant_two_configurations(engine, now=int(NOW.timestamp()))
    finally:
        engine.dispose()
    run_the_jobs(url, NOW)
    return url


def _texts(app: AppTest) -> str:
    return " ".join(
        str(element.value)
        for kind in (app.warning, app.info, app.success, app.error, app.markdown)
        for element in kind
    )


def _survival(app: AppTest) -> dict[str, Any]:
    return next(
        chart for chart in rendered.figures(app) if chart["layout"]["title"]["text"] == survival_chart.TITLE
    )


def test_the_page_sets_the_newest_configuration_against_the_one_named_like_it(
    dashboard: Callable[..., AppTest], two_configurations: str
) -> None:
    app = dashboard(two_configurations, page="rates", query=CONFIGURATIONS)

    assert not app.exception
    assert (
        app.selectbox(key="between_pair_first").value,
        app.selectbox(key="between_pair_second").value,
    ) == (
        STABLE,
        CANARY,
    )
    labels = [metric.label for metric in app.metric]
    assert STABLE in labels and CANARY in labels and "Difference" in labels
    texts = _texts(app)
    # EDITED 4 of 24 against 20 of 24: significant, however wide the interval, so nothing more is needed
    assert (
        f"{CANARY} against {STABLE} over 4 closed weeks" in texts
        and "**significantly higher: worse**" in texts
    )
    assert "each side needs" not in texts


def test_the_configuration_panel_says_too_few_to_tell_and_what_each_side_needs(
    dashboard: Callable[..., AppTest], two_configurations: str
) -> None:
    app = dashboard(two_configurations, page="rates", query=CONFIGURATIONS)
    app.selectbox(key="between_metric").set_value("discarded_rate").run()

    texts = _texts(app)
    assert not app.exception
    assert "**too few to tell**" in texts  # no write of either was discarded: 0 of 24 against 0 of 24
    assert "each side needs" in texts and f"has {4 * RUNS_A_WEEK}" in texts


def test_a_configuration_under_five_runs_in_a_week_is_too_few_to_show_against_another(
    dashboard: Callable[..., AppTest], two_configurations: str
) -> None:
    app = dashboard(two_configurations, page="rates", query=CONFIGURATIONS)

    app.selectbox(key="between_pair_second").set_value(RARE).run()

    assert not app.exception
    shown = {metric.label: metric.value for metric in app.metric}
    assert shown[RARE] == "too few to show" and shown["Difference"] == "—"


def test_the_survival_chart_draws_both_curves_with_bands_and_the_windows_end_and_tests_them(
    dashboard: Callable[..., AppTest], two_configurations: str
) -> None:
    app = dashboard(two_configurations, page="rates", query=SURVIVAL)

    assert app.multiselect(key="survival_configurations").value == [STABLE, CANARY]
    chart = _survival(app)
    lines = [trace for trace in chart["data"] if trace.get("fill") is None and "customdata" in trace]
    bands = [trace for trace in chart["data"] if trace.get("fill") == "tonexty"]
    assert [line["name"] for line in lines] == [STABLE, CANARY]
    assert len(bands) == 2 and all(trace["line"]["shape"] == "hv" for trace in chart["data"])
    assert any(shape["x0"] == 7 for shape in chart["layout"]["shapes"])  # the window's end, in days
    assert survival_chart.WINDOW_END in [note["text"] for note in chart["layout"]["annotations"]]
    at_risk = next(table for table in rendered.tables(app) if "7 d" in table.columns)
    assert list(at_risk.index) == [STABLE, CANARY]
    assert "Log-rank test" in _texts(app) and "the curves differ significantly" in _texts(app)


def test_without_a_configuration_chosen_the_chart_is_of_all_writes(
    dashboard: Callable[..., AppTest], two_configurations: str
) -> None:
    app = dashboard(two_configurations, page="rates", query=SURVIVAL)

    app.multiselect(key="survival_configurations").set_value([]).run()

    lines = [trace["name"] for trace in _survival(app)["data"] if "customdata" in trace]
    assert lines == ["all writes"] and "Log-rank test" not in _texts(app)


def test_a_configuration_with_fewer_than_five_runs_gets_no_curve(
    dashboard: Callable[..., AppTest], two_configurations: str
) -> None:
    app = dashboard(two_configurations, page="rates", query=SURVIVAL)

    app.multiselect(key="survival_configurations").set_value([STABLE, RARE]).run()

    assert not app.exception
    lines = [trace["name"] for trace in _survival(app)["data"] if "customdata" in trace]
    assert lines == [STABLE]
    assert any(f"{RARE}: too few to show" in str(warning.value) for warning in app.warning)
    assert "Log-rank test" not in _texts(app)


def test_before_any_outcome_is_derived_the_survival_section_says_to_derive_them(
    dashboard: Callable[..., AppTest], tmp_path: Path
) -> None:
    url = f"sqlite:///{tmp_path / 'measured-only.sqlite'}"
    engine = make_engine(url)
    try:
        init_db(engine, with_upstream=True)
        plant_two_configurations(engine, now=int(NOW.timestamp()))
        measure_rates(engine, now=int(NOW.timestamp()), window_s=WINDOW_S, grains=(Grain.WEEK,))
    finally:
        engine.dispose()

    app = dashboard(url, page="rates", query=SURVIVAL)

    assert not app.exception
    assert any("runrecord derive-outcomes" in str(info.value) for info in app.info)
    assert not any(
        chart["layout"]["title"]["text"] == survival_chart.TITLE for chart in rendered.figures(app)
    )
