"""The Runs page: a filtered table of runs, paged by keyset (never all runs), each opening its own page."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from sqlalchemy import select
from streamlit.testing.v1 import AppTest

from adapters import schema
from adapters.database import make_engine
from dashboard.queries.runs import NO_RUNS_YET, NOT_MEASURED, PAGE_SIZE
from jobs.schema_setup import init_db
from tests.app import rendered


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


def test_the_filter_for_runs_without_an_outcome_says_it_holds_those_without_writes_and_those_still_open(
    dashboard: Callable[..., AppTest], measured_db_url: str
) -> None:
    app = dashboard(measured_db_url, page="runs")

    app.selectbox(key="filters_outcome").select("none yet").run()

    assert "none (no writes, or window not closed)" in app.selectbox(key="filters_outcome").options
    outcomes = set(_runs(app)["outcome"])
    assert "no writes" in outcomes and any(outcome.startswith("window closes on") for outcome in outcomes)


def test_a_filter_in_the_url_is_applied(dashboard: Callable[..., AppTest], measured_db_url: str) -> None:
    app = dashboard(measured_db_url, page="runs", query={"runs": '{"status": "failed"}'})

    table = _runs(app)
    assert len(table) > 0 and all(status.startswith("failed") for status in table["status"])


def test_a_second_link_followed_in_the_same_session_opens_its_own_filter_not_the_first_ones(
    dashboard: Callable[..., AppTest], measured_db_url: str
) -> None:
    app = dashboard(measured_db_url, page="runs", query={"runs": '{"outcome": "edited"}'})
    assert set(_runs(app)["outcome"]) == {"edited"}

    app.query_params["runs"] = '{"status": "failed"}'  # a link from Rates or an alert, or Back
    app.switch_page("views/runs.py").run()

    table = _runs(app)
    assert len(table) > 0 and all(status.startswith("failed") for status in table["status"])
    assert app.selectbox(key="filters_outcome").value == "any"  # the first link's outcome is gone
    assert json.loads(app.query_params["runs"]) == {"status": "failed"}

    del app.query_params["runs"]  # the menu's link: the session's filter stays
    app.switch_page("views/runs.py").run()

    assert json.loads(app.query_params["runs"]) == {"status": "failed"}


@pytest.mark.parametrize(
    "raw",
    [
        '{"status": "exploded"}',
        "not json",
        '["a"]',
        '{"be_user": 90001}',
        '{"from": "2026-13-01", "to": "2026-12-01"}',
        '{"from": "2026-01-01", "to": "9999-12-31"}',
        '{"ended_to": "9999-12-31"}',
        '{"from": "2026-11-20"}',
        '{"to": "2026-08-01"}',
    ],
)
def test_a_filter_in_the_url_that_does_not_validate_is_ignored_with_a_warning(
    dashboard: Callable[..., AppTest], measured_db_url: str, raw: str
) -> None:
    app = dashboard(measured_db_url, page="runs", query={"runs": raw})

    assert not app.exception
    assert any("?runs= was ignored" in warning.value for warning in app.warning)
    assert len(_runs(app)) == PAGE_SIZE


def test_a_filter_with_unknown_keys_is_ignored_without_showing_them(
    dashboard: Callable[..., AppTest], measured_db_url: str
) -> None:
    planted = "**Session expired** [sign in again](https://example.invalid/login)"
    app = dashboard(measured_db_url, page="runs", query={"runs": json.dumps({planted: 1})})

    assert not app.exception
    [warning] = [str(warning.value) for warning in app.warning]
    assert warning.startswith("?runs= was ignored: an unknown key; it takes ")
    assert "Session" not in warning and "example.invalid" not in warning


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


# --- sorted by time, filtered by what measure-rates found, found by uuid ------------------------------------


def _started(url: str) -> dict[str, int]:
    engine = make_engine(url)
    run = schema.agentrun.c
    with engine.connect() as connection:
        found = {
            str(row.uuid): int(row.started_at) for row in connection.execute(select(run.uuid, run.started_at))
        }
    engine.dispose()
    return found


def _with_fact(url: str, where: object) -> set[str]:
    engine = make_engine(url)
    run, fact = schema.agentrun.c, schema.measure_fact.c
    query = select(run.uuid).join_from(schema.agentrun, schema.measure_fact, fact.run_uid == run.uid)
    with engine.connect() as connection:
        found = set(connection.execute(query.where(where)).scalars())
    engine.dispose()
    return found


def test_runs_are_listed_newest_start_first_on_every_page_whatever_their_uid(
    dashboard: Callable[..., AppTest], measured_db_url: str
) -> None:
    started = _started(measured_db_url)
    app = dashboard(measured_db_url, page="runs")

    first = list(_runs(app)["uuid"])
    app.button(key="pager_older").click().run()
    second = list(_runs(app)["uuid"])

    times = [started[uuid] for uuid in first + second]
    assert times == sorted(times, reverse=True)
    assert max(started.values()) == times[0]


def test_the_status_column_holds_the_status_and_the_outcome_its_label(
    dashboard: Callable[..., AppTest], measured_db_url: str
) -> None:
    app = dashboard(measured_db_url, page="runs", query={"runs": '{"outcome": "accepted_unchanged"}'})

    table = _runs(app)
    assert "ended" not in table.columns
    assert set(table["status"]) <= {"completed", "failed", "cancelled", "waiting_for_approval"} | {
        status for status in table["status"] if " (" in status
    }
    assert set(table["outcome"]) == {"accepted unchanged"}


@pytest.mark.parametrize(
    ("flag", "where"),
    [
        ("claim", schema.measure_fact.c.claim == "nothing_saved"),
        ("denial", schema.measure_fact.c.denial == "denies"),
        ("notice", schema.measure_fact.c.notice == 1),
    ],
    ids=["claim", "denial", "notice"],
)
def test_a_flag_filter_shows_exactly_the_runs_whose_answer_measure_rates_found_so(
    dashboard: Callable[..., AppTest], measured_db_url: str, flag: str, where: object
) -> None:
    expected = _with_fact(measured_db_url, where)
    app = dashboard(measured_db_url, page="runs")

    app.checkbox(key=f"filters_{flag}").check().run()

    assert expected and set(_runs(app)["uuid"]) == expected
    assert json.loads(app.query_params["runs"]) == {flag: True}


def test_the_disagreement_filter_shows_the_runs_whose_stored_notice_the_recomputation_contradicts(
    dashboard: Callable[..., AppTest], measured_db_url: str
) -> None:
    fact = schema.measure_fact.c
    contradicted = (fact.claim == "nothing_saved") & (fact.notice == 0)
    unfounded = fact.claim.in_(["no_claim", "wrote"]) & (fact.notice == 1)
    engine = make_engine(measured_db_url)
    with engine.connect() as connection:
        first = connection.execute(
            select(fact.ended_at)
            .where(fact.notice == 1, fact.answer == "read")
            .order_by(fact.ended_at)
            .limit(1)
        ).scalar_one()
    engine.dispose()
    expected = _with_fact(measured_db_url, (contradicted | unfounded) & (fact.ended_at >= first))

    app = dashboard(measured_db_url, page="runs", query={"runs": '{"disagreement": true}'})

    assert expected and set(_runs(app)["uuid"]) == expected


def test_the_skill_filter_shows_the_runs_of_that_skill_and_no_skill_is_a_choice(
    dashboard: Callable[..., AppTest], measured_db_url: str
) -> None:
    app = dashboard(measured_db_url, page="runs")

    app.selectbox(key="filters_skill").select("seo-check").run()
    chosen = set(_runs(app)["uuid"])
    app.selectbox(key="filters_skill").select("").run()

    fact = schema.measure_fact.c
    assert chosen and chosen <= _with_fact(measured_db_url, fact.skill_identifier == "seo-check")
    assert json.loads(app.query_params["runs"]) == {"skill": "(no skill)"}
    assert set(_runs(app)["uuid"]) <= _with_fact(measured_db_url, fact.skill_identifier == "")
    assert "(no skill)" in app.selectbox(key="filters_skill").options


@pytest.mark.parametrize("length", [36, 8], ids=["full uuid", "short id"])
def test_a_run_is_found_by_its_uuid_or_the_short_id_the_table_shows(
    dashboard: Callable[..., AppTest], measured_db_url: str, length: int
) -> None:
    wanted = _uuids(measured_db_url)[PAGE_SIZE + 3]
    app = dashboard(measured_db_url, page="runs")

    app.text_input(key="filters_uuid").input(wanted[:length].upper()).run()

    assert list(_runs(app)["uuid"]) == [wanted]
    assert json.loads(app.query_params["runs"]) == {"uuid": wanted[:length]}


def test_text_that_is_no_uuid_is_ignored_with_a_warning(
    dashboard: Callable[..., AppTest], measured_db_url: str
) -> None:
    app = dashboard(measured_db_url, page="runs")

    app.text_input(key="filters_uuid").input("x' OR 1=1 --").run()

    assert any("not a run's uuid or short id" in warning.value for warning in app.warning)
    assert len(_runs(app)) == PAGE_SIZE


def test_the_short_id_the_table_shows_opens_the_run_as_its_run_parameter(
    dashboard: Callable[..., AppTest], measured_db_url: str
) -> None:
    short = str(_runs(dashboard(measured_db_url, page="runs"))["run"].iloc[0])
    shown = short.rsplit("=", 1)[-1][:8]

    app = dashboard(measured_db_url, page="run", query={"run": shown})

    assert not app.exception and not app.warning
    assert [title.value for title in app.title] == ["Run"]
    assert _uuids(measured_db_url)[0] in rendered.text(app)


def test_an_installation_without_runs_says_it_has_none_yet_not_that_none_matches(
    dashboard: Callable[..., AppTest], tmp_path: Path
) -> None:
    url = f"sqlite:///{tmp_path / 'no-runs.sqlite'}"
    engine = make_engine(url)
    init_db(engine, with_upstream=True)
    engine.dispose()

    app = dashboard(url, page="runs")

    assert not app.exception
    assert [info.value for info in app.info] == [NO_RUNS_YET]


def test_a_filter_no_run_matches_says_so(dashboard: Callable[..., AppTest], measured_db_url: str) -> None:
    app = dashboard(measured_db_url, page="runs", query={"runs": '{"uuid": "00000000"}'})

    assert "No run matches these filters." in [info.value for info in app.info]


def test_a_filter_on_what_measure_rates_finds_says_it_has_not_run_yet(
    dashboard: Callable[..., AppTest], demo_db_url: str
) -> None:
    app = dashboard(demo_db_url, page="runs", query={"runs": '{"claim": true}'})

    assert not app.exception
    assert [info.value for info in app.info] == [NOT_MEASURED]
