"""The Rates page's verdicts and its privacy floor: the before/after panel says significant with a wide
interval, no difference within ±5 points, or too few to tell, as compare does; the configuration panel shows
a configuration only when none of its weeks holds one to four runs, and the split by configuration shows a
configuration's week only when it holds five runs or more.

The installation is built at fixed instants long closed (2026), and the jobs run as of a fixed instant."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta

import pytest
from streamlit.testing.v1 import AppTest

from adapters.database import make_engine
from core.time import DAY_S
from core.verdicts import headline
from dashboard.queries.rates import LABELS
from data.builder import Installation
from jobs import releases
from jobs.schema_setup import init_db
from tests.app import rendered
from tests.app.installations import run_the_jobs

NOW = datetime(2026, 11, 30, 12, tzinfo=UTC)
METRIC = "claimed_unwritten_rate"
CLAIM = "Erledigt, die Überschrift ist gespeichert."
NO_CLAIM = "Ein Vorschlag: Sommerangebote."
# (release, label, claims and answers in the 4 weeks before it, the same from it, verdict)
MARKERS = [
    (date(2026, 5, 4), "significant with a wide interval", (6, 20), (16, 20), "rose significantly: worse"),
    (date(2026, 7, 6), "no difference within ±5", (0, 100), (0, 100), "no difference of 5 points or more"),
    (date(2026, 9, 7), "too few to tell", (4, 20), (5, 20), "too few to tell"),
]
STABLE = "stable-assistant"
WEEKS = tuple(date(2026, 10, 5) + timedelta(weeks=k) for k in range(4))  # the configurations' weeks
# (configuration, runs in its third week, shown?): the others hold 10 a week.
FLOOR = [("none-assistant", 0, True), ("one-assistant", 1, False), ("four-assistant", 4, False)]
FLOOR += [("five-assistant", 5, True)]


def unix(day: date) -> int:
    return int(datetime(day.year, day.month, day.day, tzinfo=UTC).timestamp())


def talk(site: Installation, configuration: str, at: int, answer: str) -> None:
    chat = site.conversation(configuration=configuration, at=at)
    chat.user("Ändere die Überschrift.", at=at)
    run = chat.run()
    run.llm("get_page")
    run.tool("get_page")
    run.answer(answer)
    run.finish()
    chat.close()


def side(site: Installation, first: date, claims: int, count: int) -> None:
    """`count` answers over the four weeks from `first`, the first `claims` of them claiming a change."""
    step = 4 * 7 * DAY_S // count
    for n in range(count):
        talk(site, "content-assistant", unix(first) + n * step, CLAIM if n < claims else NO_CLAIM)


@pytest.fixture(scope="module")
def verdicts_db_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    url = f"sqlite:///{tmp_path_factory.mktemp('verdicts') / 'verdicts.sqlite'}"
    engine = make_engine(url)
    init_db(engine, with_upstream=True)
    with engine.begin() as connection:
        site = Installation(connection)
        for released_on, _, before, after, _ in MARKERS:
            side(site, released_on - timedelta(weeks=4), *before)
            side(site, released_on, *after)
        for configuration, small, _ in [(STABLE, 10, True), *FLOOR]:
            for index, week in enumerate(WEEKS):
                for n in range(small if index == 2 else 10):
                    talk(site, configuration, unix(week) + n * 3 * 3600, CLAIM if n % 3 == 0 else NO_CLAIM)
        site.finish()
    for released_on, label, *_ in MARKERS:
        releases.add_release(engine, released_on, label, now=int(NOW.timestamp()))
    engine.dispose()
    run_the_jobs(url, NOW)
    return url


def _texts(app: AppTest) -> str:
    return " ".join(
        element.value for kind in (app.warning, app.info, app.success, app.error) for element in kind
    )


@pytest.mark.parametrize(
    ("index", "verdict"), [(k, row[4]) for k, row in enumerate(MARKERS)], ids=[row[1] for row in MARKERS]
)
def test_the_before_after_panel_says_each_verdict_as_compare_does(
    dashboard: Callable[..., AppTest], verdicts_db_url: str, index: int, verdict: str
) -> None:
    app = dashboard(
        verdicts_db_url, page="rates", query={"tab": "release", "marker": MARKERS[index][0].isoformat()}
    )
    app.selectbox(key="compare_metric").set_value(METRIC).run()

    assert not app.exception
    released_on = MARKERS[index][0].isoformat()
    assert f"**{headline(LABELS[METRIC], verdict)}** across {released_on}, 4 weeks each side." in _texts(app)


@pytest.mark.parametrize(("configuration", "runs", "shown"), FLOOR, ids=[f"{row[1]} runs" for row in FLOOR])
def test_the_configuration_panel_shows_a_configuration_only_without_a_week_of_one_to_four_runs(
    dashboard: Callable[..., AppTest], verdicts_db_url: str, configuration: str, runs: int, shown: bool
) -> None:
    app = dashboard(verdicts_db_url, page="rates", query={"tab": "configurations"})
    app.selectbox(key="between_pair_first").set_value(STABLE).run()
    app.selectbox(key="between_pair_second").set_value(configuration).run()
    app.selectbox(key="between_metric").set_value(METRIC).run()

    assert not app.exception
    values = {metric.label: metric.value for metric in app.metric}
    assert values[STABLE] != "too few to show"
    assert (values[configuration] == "too few to show") is not shown
    assert (f"{configuration} against {STABLE}" in _texts(app)) and (
        ("**too few to show**" in _texts(app)) is not shown
    )


@pytest.mark.parametrize(("configuration", "runs", "shown"), FLOOR, ids=[f"{row[1]} runs" for row in FLOOR])
def test_the_split_by_configuration_shows_a_configurations_week_only_from_five_runs(
    dashboard: Callable[..., AppTest], verdicts_db_url: str, configuration: str, runs: int, shown: bool
) -> None:
    app = dashboard(
        verdicts_db_url,
        page="rates",
        query={"tab": "configurations", "group": "configuration", "range": "all"},
    )
    app.selectbox(key="split_metric").set_value(METRIC).run()

    assert not app.exception
    split = next(table for table in rendered.tables(app) if table.index.name == "period start")
    small, full = split.loc[WEEKS[2].isoformat()], split.loc[WEEKS[1].isoformat()]
    assert full[STABLE].startswith("40.0% (4/10;") and full[configuration].startswith("40.0% (4/10;")
    if runs == 0:  # a week without runs hides nothing and shows nothing
        assert small[configuration] == ""
    elif shown:
        assert small[configuration].startswith(f"40.0% (2/{runs};")
    else:
        assert small[configuration] == "too few to show"
