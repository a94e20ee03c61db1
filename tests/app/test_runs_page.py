"""The Runs page: a filtered table of runs, paged by keyset (never all runs), each opening its own page."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator

import pytest
from sqlalchemy import Engine, event, select
from streamlit.testing.v1 import AppTest

from adapters import schema
from adapters.database import make_engine
from dashboard.queries.runs import PAGE_SIZE
from tests.app import rendered


@pytest.fixture
def statements() -> Iterator[list[str]]:
    """Every SQL statement any engine sends while the test runs."""
    sent: list[str] = []

    def record(_conn: object, _cursor: object, statement: str, *_args: object) -> None:
        sent.append(statement)

    event.listen(Engine, "before_cursor_execute", record)
    yield sent
    event.remove(Engine, "before_cursor_execute", record)


def _runs(app: AppTest):  # noqa: ANN202
    return rendered.tables(app)[0]


def _uuids(url: str, where: object = None) -> list[str]:
    engine = make_engine(url)
    run = schema.agentrun.c
    query = select(run.uuid).order_by(run.started_at.desc(), run.uid.desc())
    with engine.connect() as connection:
        found = list(connection.execute(query if where is None else query.where(where)).scalars())
    engine.dispose()
    return found


def test_the_table_shows_one_page_of_the_newest_started_runs_with_short_uuids(
    dashboard: Callable[..., AppTest], measured_db_url: str
) -> None:
    app = dashboard(measured_db_url, page="runs")

    assert not app.exception
    table = _runs(app)
    newest = _uuids(measured_db_url)
    assert len(table) == PAGE_SIZE
    assert list(table["uuid"]) == newest[:PAGE_SIZE]
    assert all(link.endswith(uuid) for link, uuid in zip(table["run"], table["uuid"], strict=True))
    assert set(table.columns) >= {
        "configuration",
        "started",
        "status",
        "tools ran",
        "failed",
        "records written",
        "outcome",
    }
    pages = -(-len(newest) // PAGE_SIZE)
    assert any(f"Page 1 of {pages}" in text.value for text in app.markdown)


def test_older_pages_through_the_runs_by_keyset_and_newer_comes_back(
    dashboard: Callable[..., AppTest], measured_db_url: str
) -> None:
    newest = _uuids(measured_db_url)
    app = dashboard(measured_db_url, page="runs")

    app.button(key="pager_older").click().run()
    second = list(_runs(app)["uuid"])
    app.button(key="pager_newer").click().run()

    assert second == newest[PAGE_SIZE : 2 * PAGE_SIZE]
    assert list(_runs(app)["uuid"]) == newest[:PAGE_SIZE]


def test_paging_never_selects_a_run_without_a_limit(
    dashboard: Callable[..., AppTest], measured_db_url: str, statements: list[str]
) -> None:
    app = dashboard(measured_db_url, page="runs")
    app.button(key="pager_older").click().run()

    runs = [s for s in statements if "FROM tx_nrllm_agentrun " in s or "FROM tx_nrllm_agentrun\n" in s]
    assert runs
    for statement in runs:
        assert "LIMIT" in statement or "count(" in statement.lower(), statement


def test_the_outcome_filter_shows_only_runs_with_that_outcome_and_keeps_it_in_the_url(
    dashboard: Callable[..., AppTest], measured_db_url: str
) -> None:
    app = dashboard(measured_db_url, page="runs")

    app.selectbox(key="filters_outcome").select("edited").run()

    assert set(_runs(app)["outcome"]) == {"edited"}
    assert json.loads(app.query_params["runs"]) == {"outcome": "edited"}


def test_a_filter_in_the_url_is_applied(dashboard: Callable[..., AppTest], measured_db_url: str) -> None:
    app = dashboard(measured_db_url, page="runs", query={"runs": '{"status": "failed"}'})

    table = _runs(app)
    assert len(table) > 0 and all(status.startswith("failed") for status in table["status"])


@pytest.mark.parametrize(
    "raw",
    ['{"status": "exploded"}', "not json", '["a"]', '{"be_user": 90001}', '{"from": "2026-13-01"}'],
)
def test_a_filter_in_the_url_that_does_not_validate_is_ignored_with_a_warning(
    dashboard: Callable[..., AppTest], measured_db_url: str, raw: str
) -> None:
    app = dashboard(measured_db_url, page="runs", query={"runs": raw})

    assert not app.exception
    assert any("?runs= was ignored" in warning.value for warning in app.warning)
    assert len(_runs(app)) == PAGE_SIZE


def test_a_run_still_inside_its_window_says_when_it_closes(
    dashboard: Callable[..., AppTest], measured_db_url: str
) -> None:
    app = dashboard(measured_db_url, page="runs")

    outcomes = set(_runs(app)["outcome"])
    assert any(outcome.startswith("window closes on ") for outcome in outcomes)
    assert "no writes" in outcomes


def test_runs_say_what_to_do_on_a_database_without_tables(
    dashboard: Callable[..., AppTest], empty_sqlite_url: str
) -> None:
    app = dashboard(empty_sqlite_url, page="runs")

    assert not app.exception
    assert "runrecord init-db" in app.info[0].value


def test_runs_show_the_runs_of_a_database_no_job_has_run_on(
    dashboard: Callable[..., AppTest], demo_db_url: str
) -> None:
    app = dashboard(demo_db_url, page="runs")

    assert not app.exception
    assert len(_runs(app)) == PAGE_SIZE


def test_runs_survive_a_database_with_bad_rows(
    dashboard: Callable[..., AppTest], bad_row_db: tuple[str, dict[str, int | str]]
) -> None:
    url, planted = bad_row_db

    app = dashboard(url, page="runs")

    assert not app.exception
    assert planted["broken_run"] in set(_runs(app)["uuid"])
    assert any("cannot be read" in warning.value for warning in app.warning)
