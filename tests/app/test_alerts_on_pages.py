"""The open alerts on the Rates page and on the Health page: each rate that moved significantly, with both
sides' figures, until it is closed; an explicit line when there is none."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from streamlit.testing.v1 import AppTest

from adapters.database import make_engine
from adapters.schema import alert
from core.metrics import DEFINITIONS, Metric
from core.periods import Grain, period_start
from jobs import alerts
from tests.app import rendered
from tests.app.conftest import NOW
from tests.app.installations import released

PER_WEEK = 50
# A Monday six weeks back: the four weeks from it have closed, and it is a release of the last eight weeks.
RELEASED_ON = period_start(int(NOW.timestamp()), Grain.WEEK) - timedelta(weeks=6)
LABEL = "Prompt rule: claim a change only on a write result"
ALERTS_TAB = {"tab": "alerts"}  # the Rates page lists them there (the Health page takes no tab)


@pytest.fixture(scope="session")
def alerted_db_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    """Four weeks in which no answer carries the nothingSaved notice, a release, four weeks in which every
    one does; the release recorded and the jobs run: an alert for all runs, the configuration, the skill."""
    url = f"sqlite:///{tmp_path_factory.mktemp('alerted') / 'alerted.sqlite'}"
    released(url, NOW, RELEASED_ON, LABEL, notice_after=True, per_week=PER_WEEK)
    return url


def _copied(url: str, copy: Path) -> str:
    """A copy of the SQLite database at `url`, for a test that changes it: its URL."""
    copy.write_bytes(Path(url.removeprefix("sqlite:///")).read_bytes())
    return f"sqlite:///{copy}"


def _alert_table(app: AppTest) -> object:
    return next(table for table in rendered.tables(app) if "compared" in table.columns)


def test_the_rates_page_lists_each_open_alert_with_both_sides_and_the_difference(
    dashboard: Callable[..., AppTest], alerted_db_url: str
) -> None:
    app = dashboard(alerted_db_url, page="rates", query=ALERTS_TAB)

    assert not app.exception
    table = _alert_table(app)
    assert list(table.columns)[:4] == ["verdict", "before", "after", "difference"]
    assert set(table.columns) >= {
        "group",
        "runs",
        "compared",
        "p",
        "adjusted p",
        "since (UTC)",
        "alert",
        "rate",
    }
    assert set(table["group"]) == {"all runs", "configuration content-assistant", "(no skill)"}
    assert set(table["rate"]) == {DEFINITIONS[Metric.NOTHING_SAVED_RATE].label}
    assert all(
        value.startswith(f"release {RELEASED_ON.isoformat()} ({LABEL})") for value in table["compared"]
    )
    assert set(table["before"]) == {"0.0% (0/200, 95% CI 0.0% – 1.9%)"}
    assert set(table["after"]) == {"100.0% (200/200, 95% CI 98.1% – 100.0%)"}
    assert set(table["p"]) == set(table["adjusted p"]) == {"p < 0.0001"}
    assert any(w.value.startswith("3 open alerts: a rate moved significantly") for w in app.warning)


def test_an_alert_says_which_way_its_rate_moved_and_that_it_is_worse(
    dashboard: Callable[..., AppTest], alerted_db_url: str
) -> None:
    app = dashboard(alerted_db_url, page="rates", query=ALERTS_TAB)

    table = _alert_table(app)
    label = DEFINITIONS[Metric.NOTHING_SAVED_RATE].label
    assert set(table["verdict"]) == {f"{label} rose significantly: worse"}
    assert set(table["difference"]) == {"+100.0 points (95% CI +97.3 to +100.0)"}


def test_an_alerts_link_filters_the_runs_to_its_group_its_after_side_and_its_numerator(
    dashboard: Callable[..., AppTest], alerted_db_url: str
) -> None:
    app = dashboard(alerted_db_url, page="rates", query=ALERTS_TAB)

    table = _alert_table(app)
    filters = {
        row["group"]: json.loads(parse_qs(urlsplit(row["runs"]).query)["runs"][0])
        for _, row in table.iterrows()
    }
    after_to = (RELEASED_ON + timedelta(weeks=4) - timedelta(days=1)).isoformat()
    period = {"ended_from": RELEASED_ON.isoformat(), "ended_to": after_to, "notice": True}
    assert filters == {
        "all runs": period,
        "configuration content-assistant": {**period, "configuration": "content-assistant"},
        "(no skill)": {**period, "skill": "(no skill)"},
    }


def test_an_alerts_link_opens_exactly_the_runs_of_its_after_side(
    dashboard: Callable[..., AppTest], alerted_db_url: str
) -> None:
    link = _alert_table(dashboard(alerted_db_url, page="rates", query=ALERTS_TAB))["runs"].iloc[0]

    app = dashboard(alerted_db_url, page="runs", query={"runs": parse_qs(urlsplit(link).query)["runs"][0]})

    assert not app.exception and not app.warning
    assert any(f"{4 * PER_WEEK:,} runs" in text.value for text in app.markdown)  # the after side: 200 of 200


def test_an_administrator_acknowledges_an_alert_on_the_page(
    dashboard: Callable[..., AppTest], alerted_db_url: str, tmp_path: Path
) -> None:
    url = _copied(alerted_db_url, tmp_path / "acknowledged.sqlite")
    app = dashboard(url, administrator=True, page="health")
    first = int(_alert_table(app)["alert"].iloc[0])

    app.multiselect(key="alerts_acknowledge").select(first).run()
    app.button(key="alerts_acknowledge_button").click().run()

    assert not app.exception
    assert first not in set(_alert_table(app)["alert"]) and len(_alert_table(app)) == 2
    engine = make_engine(url)
    closed = [stored for stored in alerts.list_alerts(engine, closed_too=True).alerts if stored.uid == first]
    engine.dispose()
    assert closed and closed[0].closed_at == int(NOW.timestamp()) // 60 * 60


def test_the_product_team_cannot_acknowledge_an_alert(
    dashboard: Callable[..., AppTest], alerted_db_url: str
) -> None:
    app = dashboard(alerted_db_url, page="rates", query=ALERTS_TAB)

    assert not [widget for widget in app.multiselect if widget.key == "alerts_acknowledge"]
    assert not [widget for widget in app.button if widget.key == "alerts_acknowledge_button"]


def test_the_health_page_lists_the_open_alerts_too(
    dashboard: Callable[..., AppTest], alerted_db_url: str
) -> None:
    app = dashboard(alerted_db_url, administrator=True, page="health")

    assert not app.exception
    assert len(_alert_table(app)) == 3
    assert any(w.value.startswith("3 open alerts") for w in app.warning)


def test_a_closed_alert_leaves_the_pages(
    dashboard: Callable[..., AppTest], alerted_db_url: str, tmp_path: Path
) -> None:
    url = _copied(alerted_db_url, tmp_path / "closed.sqlite")
    engine = make_engine(url)
    first = alerts.list_alerts(engine).alerts[0]
    alerts.close_alert(engine, first.uid, now=int(NOW.timestamp()))
    engine.dispose()

    app = dashboard(url, page="rates", query=ALERTS_TAB)

    table = _alert_table(app)
    assert len(table) == 2 and first.uid not in set(table["alert"])


def test_an_alert_row_runrecord_did_not_write_is_named_above_the_others(
    dashboard: Callable[..., AppTest], alerted_db_url: str, tmp_path: Path
) -> None:
    url = _copied(alerted_db_url, tmp_path / "spoiled.sqlite")
    engine = make_engine(url)
    first = alerts.list_alerts(engine).alerts[0]
    with engine.begin() as connection:
        connection.execute(alert.update().where(alert.c.uid == first.uid).values(kind="spike"))
    engine.dispose()

    app = dashboard(url, page="rates", query=ALERTS_TAB)

    assert not app.exception
    table = _alert_table(app)
    assert len(table) == 2 and first.uid not in set(table["alert"])
    assert [e.value for e in app.error] == [
        f"tx_runrecord_alert row #{first.uid} cannot be read (a kind, status, date or figure runrecord does "
        "not write) and left out."
    ]


@pytest.mark.parametrize(
    ("administrator", "page"), [(False, "rates"), (True, "health")], ids=["rates", "health"]
)
def test_without_an_open_alert_the_page_says_so(
    dashboard: Callable[..., AppTest],
    bad_row_db: tuple[str, dict[str, int | str]],
    administrator: bool,
    page: str | None,
) -> None:
    app = dashboard(bad_row_db[0], administrator=administrator, page=page, query=ALERTS_TAB)

    assert not app.exception
    assert any(c.value.startswith("No open alert:") for c in app.caption)
    assert not any("compared" in table.columns for table in rendered.tables(app))


def test_the_alerts_table_gives_its_verdict_column_the_width_of_its_longest_verdict(
    dashboard: Callable[..., AppTest], alerted_db_url: str
) -> None:
    # The grid fits a column to its cells only up to a limit, and cut the verdict there.
    app = dashboard(alerted_db_url, page="rates", query=ALERTS_TAB)

    longest = max(len(verdict) for verdict in _alert_table(app)["verdict"])
    widths = [widths for widths in rendered.column_widths(app) if "verdict" in widths]
    assert len(widths) == 1 and widths[0]["verdict"] >= 7 * longest
