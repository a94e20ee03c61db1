"""Alerts after a measurement, on SQLite, MariaDB and PostgreSQL: a significant move of a rate in the newest
closed period (against the four before it) or across a recent release marker is written once per move, never
for a group too small to show; new alerts are POSTed to the webhook; nothing about alerts fails the job."""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest
from click.testing import Result
from sqlalchemy import Engine, func, select, text

from adapters import job_log as job_rows
from adapters.database import make_engine
from adapters.schema import alert, rate
from adapters.webhook import Policy
from core.periods import Grain
from core.time import DAY_S
from data.builder import Installation
from jobs import alerts as alert_job
from jobs import measure, releases
from jobs.job_log import Status, execute
from jobs.measure import measure_rates
from jobs.measure_summary import Summary
from jobs.schema_setup import init_db
from tests.db.conftest import on_sqlite_alone
from tests.webhook_receiver import receiver, silent_endpoint

WINDOW = 7 * DAY_S
NOW_AT = datetime(2026, 12, 2, 12, tzinfo=UTC)  # a Wednesday; no run ends after 2026-11-25 12:00
NOW = int(NOW_AT.timestamp())
NOW_TEXT = "2026-12-02T12:00:00"
NEWEST = date(2026, 11, 23)  # the newest closed week: the current week 11-30 is the first open one
WEEKS_BEFORE = [NEWEST - timedelta(weeks=k) for k in (4, 3, 2, 1)]
PER_WEEK = 50
FAST = Policy(timeout_s=0.3, attempts=3, backoff_s=0.01)
MOVED_GROUPS = {("all", ""), ("configuration", "content-assistant"), ("skill", "")}


def unix(day: date) -> int:
    return int(datetime(day.year, day.month, day.day, tzinfo=UTC).timestamp())


@contextmanager
def installation(engine: Engine) -> Iterator[Installation]:
    with engine.begin() as connection:
        site = Installation(connection)
        yield site
        site.finish()


def talks(site: Installation, week: date, count: int, *, notice: str | None) -> None:
    """`count` conversations from the week's Monday on, an hour apart, each a turn that writes nothing and
    claims nothing, stored with `notice`: nothing_saved_rate's numerator is the ones with the notice."""
    for n in range(count):
        at = unix(week) + n * 3600
        chat = site.conversation(configuration="content-assistant", at=at)
        chat.user("Schlag mir eine Überschrift vor.", at=at)
        run = chat.run()
        run.llm("get_page")
        run.tool("get_page")
        run.answer("Ein Vorschlag: Sommerangebote 2026.", notice=notice)
        run.finish()
        chat.close()


def plant(engine: Engine, weeks: dict[date, tuple[int, bool]]) -> None:
    """Per week: how many conversations, and whether their answers carry the nothingSaved notice."""
    with installation(engine) as site:
        for week, (count, noticed) in weeks.items():
            talks(site, week, count, notice="nothingSaved" if noticed else None)


def measured(engine: Engine, weeks: dict[date, tuple[int, bool]]) -> Engine:
    plant(engine, weeks)
    measure_rates(engine, now=NOW, window_s=WINDOW, grains=(Grain.WEEK,))
    return engine


def check(engine: Engine) -> alert_job.AlertCheck:
    return alert_job.check_alerts(engine, now=NOW, grains=(Grain.WEEK,), webhook_url=None)


def stored_rows(engine: Engine) -> list[dict[str, object]]:
    with engine.connect() as connection:
        return [dict(row._mapping) for row in connection.execute(select(alert).order_by(alert.c.uid))]


def groups_of(rows: list[dict[str, object]]) -> set[tuple[object, object]]:
    return {(row["group_kind"], row["group_value"]) for row in rows}


@pytest.fixture
def moved_engine(installation_engine: Engine) -> Engine:
    """Four weeks in which no answer carries the notice, then a week in which every one does; measured."""
    weeks = dict.fromkeys(WEEKS_BEFORE, (PER_WEEK, False))
    return measured(installation_engine, {**weeks, NEWEST: (PER_WEEK, True)})


@pytest.fixture
def moved_url(moved_engine: Engine) -> str:
    return moved_engine.url.render_as_string(hide_password=False)


def newest_job_run(engine: Engine) -> object:
    with engine.connect() as connection:
        return job_rows.newest(connection, 1)[0]


def run_the_job(url: str) -> object:
    """measure-rates as the scheduler runs it (jobs.measure.run_job), recorded; its job run row."""
    engine = make_engine(url)
    try:
        execution = execute(engine, measure.JOB, lambda: measure.run_job(url, now=NOW_AT))
        assert execution.status is Status.OK, execution.result.message
        return newest_job_run(engine)
    finally:
        engine.dispose()


# --- what is written ----------------------------------------------------------------------------------------


def test_a_planted_move_writes_one_alert_for_each_group_it_moved(moved_engine: Engine) -> None:
    result = check(moved_engine)

    rows = stored_rows(moved_engine)
    assert result.failure == ""
    assert len(result.new) == len(rows) == 3
    assert groups_of(rows) == MOVED_GROUPS
    for row in rows:
        assert (row["metric"], row["grain"], row["kind"], row["at_date"]) == (
            "nothing_saved_rate",
            "week",
            "trend",
            NEWEST,
        )
        assert (row["before_numerator"], row["before_denominator"]) == (0, 4 * PER_WEEK)
        assert (row["after_numerator"], row["after_denominator"]) == (PER_WEEK, PER_WEEK)
        assert (row["before_from"], row["before_to"]) == (WEEKS_BEFORE[0], NEWEST - timedelta(days=1))
        assert row["difference"] == pytest.approx(1.0)
        assert row["difference_low"] < row["difference"] <= row["difference_high"]
        assert row["p_value"] < 0.05
        assert row["p_value"] <= row["adjusted_p_value"] <= 0.05
        assert (row["status"], row["closed_at"]) == ("open", 0)


@on_sqlite_alone
def test_a_measurement_of_the_day_grain_alone_checks_no_alert(installation_engine: Engine) -> None:
    plant(installation_engine, {**dict.fromkeys(WEEKS_BEFORE, (PER_WEEK, False)), NEWEST: (PER_WEEK, True)})
    measure_rates(installation_engine, now=NOW, window_s=WINDOW, grains=(Grain.DAY,))

    result = alert_job.check_alerts(installation_engine, now=NOW, grains=(Grain.DAY,), webhook_url=None)

    assert (result.grains, result.comparisons, result.new) == ((), 0, [])
    assert (
        alert_job.check_line(result)
        == "alerts: not checked (alerts compare closed weeks, measured at that grain)"
    )
    assert stored_rows(installation_engine) == []


# --- done when: a +20-point week at 120 runs a week ---------------------------------------------------

SMALL_WEEK = 120  # the moving configuration's runs a week, as on an ordinary installation
STEADY_WEEK = 480  # the other configuration's: they dilute all runs' move to +4 points (p ≈ 0.06)
BEFORE_SHARE, AFTER_SHARE = 0.30, 0.50  # claimed-but-unwritten answers: +20 points in the moved week
# A Monday noon: the week of 11-30 (back to 30%) holds runs inside their window, so it is the first open
# one, and the week of 11-23, whose runs all ended a week ago, is the newest closed week.
MOVE_NOW = int(datetime(2026, 12, 7, 12, tzinfo=UTC).timestamp())


def claims(site: Installation, week: date, configuration: str, count: int, share: float) -> None:
    """`count` conversations over the week, each a turn that writes nothing, the first `share` of them
    answering that it saved the change, spread evenly over the week so that no day stands out:
    claimed_unwritten_rate's numerator. No answer carries a notice, so nothing_saved_rate and
    notice_agreement do not move; no conversation has a skill."""
    for n in range(count):
        claiming = math.floor((n + 1) * share + 1e-9) > math.floor(n * share + 1e-9)
        at = unix(week) + n * (7 * DAY_S // count) + (0 if configuration == "content-assistant" else 600)
        chat = site.conversation(configuration=configuration, at=at)
        chat.user("Ändere die Überschrift.", at=at)
        run = chat.run()
        run.llm("get_page")
        run.tool("get_page")
        run.answer("Erledigt, die Überschrift ist gespeichert." if claiming else "Ein Vorschlag: Sommer.")
        run.finish()
        chat.close()


@on_sqlite_alone
def test_a_twenty_point_week_at_120_runs_a_week_raises_exactly_one_alert_for_the_group_that_moved(
    installation_engine: Engine,
) -> None:
    with installation(installation_engine) as site:
        for week in [*WEEKS_BEFORE, NEWEST, NEWEST + timedelta(weeks=1)]:
            share = AFTER_SHARE if week == NEWEST else BEFORE_SHARE
            claims(site, week, "content-assistant", SMALL_WEEK, share)
            claims(site, week, "seo-assistant", STEADY_WEEK, BEFORE_SHARE)
    grains = (Grain.WEEK, Grain.DAY)
    measure_rates(installation_engine, now=MOVE_NOW, window_s=WINDOW, grains=grains)

    first = alert_job.check_alerts(installation_engine, now=MOVE_NOW, grains=grains, webhook_url=None)
    measure_rates(installation_engine, now=MOVE_NOW + 3600, window_s=WINDOW, grains=grains)
    second = alert_job.check_alerts(installation_engine, now=MOVE_NOW + 3600, grains=grains, webhook_url=None)

    rows = stored_rows(installation_engine)
    assert first.failure == second.failure == ""
    # The rates with data (claimed_unwritten_rate, nothing_saved_rate) of all runs, both configurations and
    # skill none, on the closed weeks only: the day grain measured beside them raises no alert.
    assert first.tested == second.tested == 2 * 4
    assert [
        (row["metric"], row["group_kind"], row["group_value"], row["kind"], row["at_date"]) for row in rows
    ] == [("claimed_unwritten_rate", "configuration", "content-assistant", "trend", NEWEST)]
    assert (rows[0]["before_numerator"], rows[0]["before_denominator"]) == (4 * 36, 4 * SMALL_WEEK)
    assert (rows[0]["after_numerator"], rows[0]["after_denominator"]) == (60, SMALL_WEEK)
    assert rows[0]["p_value"] <= rows[0]["adjusted_p_value"] <= 0.05
    assert len(first.new) == 1 and second.new == []


def test_a_rerun_writes_no_alert_for_a_move_written_already(moved_engine: Engine) -> None:
    first = check(moved_engine)

    again = check(moved_engine)

    assert (len(first.new), len(again.new)) == (3, 0)
    assert len(stored_rows(moved_engine)) == 3


def test_two_checks_at_the_same_time_write_each_move_once(moved_engine: Engine) -> None:
    start = threading.Barrier(2)
    results: list[alert_job.AlertCheck] = []

    def run() -> None:
        start.wait()
        results.append(check(moved_engine))

    threads = [threading.Thread(target=run) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert [result.failure for result in results] == ["", ""]
    assert sorted(len(result.new) for result in results) == [0, 3]
    assert len(stored_rows(moved_engine)) == 3


@on_sqlite_alone
def test_rates_that_do_not_move_write_no_alert(installation_engine: Engine) -> None:
    measured(installation_engine, dict.fromkeys([*WEEKS_BEFORE, NEWEST], (PER_WEEK, False)))

    result = check(installation_engine)

    assert result.failure == "" and result.comparisons > 0
    assert result.new == [] and stored_rows(installation_engine) == []


def test_a_group_with_a_week_under_five_runs_gets_no_alert_though_all_runs_do(
    installation_engine: Engine,
) -> None:
    weeks = dict.fromkeys(WEEKS_BEFORE, (PER_WEEK, False))
    weeks[WEEKS_BEFORE[0]] = (3, False)  # the configuration and the skill have 3 runs in that week
    measured(installation_engine, {**weeks, NEWEST: (PER_WEEK, True)})

    check(installation_engine)

    assert groups_of(stored_rows(installation_engine)) == {("all", "")}


def test_a_move_across_a_release_of_the_last_eight_weeks_writes_a_release_alert(
    installation_engine: Engine,
) -> None:
    released_on = date(2026, 11, 2)  # a Monday, 30 days before NOW
    before = {released_on - timedelta(weeks=k): (PER_WEEK, False) for k in (4, 3, 2, 1)}
    after = {released_on + timedelta(weeks=k): (PER_WEEK, True) for k in range(4)}
    measured(installation_engine, {**before, **after})
    releases.add_release(installation_engine, released_on, "Prompt rule", now=NOW)

    result = check(installation_engine)

    rows = [row for row in stored_rows(installation_engine) if row["kind"] == "release"]
    trends = [row for row in stored_rows(installation_engine) if row["kind"] == "trend"]
    assert groups_of(rows) == MOVED_GROUPS
    assert {(row["at_date"], row["label"]) for row in rows} == {(released_on, "Prompt rule")}
    assert {
        (row["before_denominator"], row["after_numerator"], row["after_denominator"]) for row in rows
    } == {(4 * PER_WEEK, 4 * PER_WEEK, 4 * PER_WEEK)}
    # The newest week (every answer noticed) against the four before it, one of them before the release
    # (150 of 200): a significant rise too, however wide its interval.
    assert groups_of(trends) == MOVED_GROUPS and {row["at_date"] for row in trends} == {NEWEST}
    assert {(row["before_numerator"], row["before_denominator"]) for row in trends} == {(150, 200)}
    assert len(result.new) == len(rows) + len(trends) == 6


# --- the job ----------------------------------------------------------------------------------------------


@on_sqlite_alone
def test_the_scheduled_job_writes_the_alerts_and_names_them_in_its_job_run_message(moved_url: str) -> None:
    row = run_the_job(moved_url)

    assert row.status == "ok"
    assert "alerts: 3 new (3 trend) of " in row.message


def test_a_failed_alert_check_leaves_the_measurement_done_and_says_so_in_the_message(
    empty_db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = make_engine(empty_db_url)
    init_db(engine, with_upstream=True)
    plant(engine, {**dict.fromkeys(WEEKS_BEFORE, (PER_WEEK, False)), NEWEST: (PER_WEEK, True)})
    measure_first = measure.measure_rates

    def then_the_alerts_table_gone(measured: Engine, **options: Any) -> Summary:
        summary = measure_first(measured, **options)
        with measured.begin() as connection:  # where the check writes the move it found
            connection.execute(text(f"DROP TABLE {alert.name}"))
        return summary

    monkeypatch.setattr(measure, "measure_rates", then_the_alerts_table_gone)

    row = run_the_job(empty_db_url)

    with engine.connect() as connection:
        rates_written = connection.execute(select(func.count()).select_from(rate)).scalar_one()
    engine.dispose()
    assert row.status == "ok"
    assert "; alert check failed: database: " in row.message
    assert rates_written > 0


@on_sqlite_alone
def test_each_new_alert_is_posted_to_the_webhook_as_json_and_a_rerun_posts_none(
    moved_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with receiver(200) as endpoint:
        monkeypatch.setenv("RUNRECORD_ALERT_WEBHOOK", endpoint.url)
        first = run_the_job(moved_url)
        again = run_the_job(moved_url)

    bodies = endpoint.bodies
    assert len(bodies) == 3
    assert {body["group"] for body in bodies} == {"all", "configuration:content-assistant", "skill:none"}
    assert {(body["metric"], body["kind"], body["at"]) for body in bodies} == {
        ("nothing_saved_rate", "trend", NEWEST.isoformat())
    }
    assert bodies[0]["after"] == {
        "from": NEWEST.isoformat(),
        "to": "2026-11-29",
        "numerator": PER_WEEK,
        "denominator": PER_WEEK,
        "rate": 1.0,
        "wilson_95": bodies[0]["after"]["wilson_95"],
    }
    assert f"webhook {endpoint.url.split('/hooks')[0]}: 3 of 3 delivered" in first.message
    assert "token" not in first.message
    assert "alerts: 0 new" in again.message


@on_sqlite_alone
def test_a_webhook_that_answers_500_leaves_the_job_ok_with_the_failure_in_its_message(
    moved_engine: Engine, moved_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(alert_job, "DELIVERY", FAST)
    with receiver(500) as endpoint:
        monkeypatch.setenv("RUNRECORD_ALERT_WEBHOOK", endpoint.url)
        row = run_the_job(moved_url)

    assert row.status == "ok"
    assert "0 of 3 delivered, failed at alert #" in row.message
    assert "HTTP 500 (3 tries), 2 not tried" in row.message
    assert len(endpoint.posts) == 3  # the tries are bounded; after a failed alert the others are not tried
    assert len(stored_rows(moved_engine)) == 3


@on_sqlite_alone
def test_a_webhook_that_does_not_answer_leaves_the_job_ok_with_the_timeout_in_its_message(
    moved_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(alert_job, "DELIVERY", FAST)
    with silent_endpoint() as url:
        monkeypatch.setenv("RUNRECORD_ALERT_WEBHOOK", url)
        row = run_the_job(moved_url)

    assert row.status == "ok"
    assert "timed out after 0.3 s (3 tries)" in row.message


@on_sqlite_alone
def test_a_malformed_webhook_setting_fails_the_scheduled_run_before_it_measures_anything(
    moved_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RUNRECORD_ALERT_WEBHOOK", "ftp://hooks.example.org/secret")
    engine = make_engine(moved_url)

    try:
        before = _stored(engine)
        execution = execute(engine, measure.JOB, lambda: measure.run_job(moved_url, now=NOW_AT))
        after = _stored(engine)
    finally:
        engine.dispose()

    assert execution.status is Status.FAILED
    assert "RUNRECORD_ALERT_WEBHOOK is not an http(s) URL" in execution.result.message
    assert "secret" not in execution.result.message
    assert after == before  # no rate and no alert written


def _stored(engine: Engine) -> tuple[int, int]:
    """How many rate rows and alerts are stored."""
    with engine.connect() as connection:
        count = [connection.execute(select(func.count()).select_from(t)).scalar_one() for t in (rate, alert)]
    return count[0], count[1]


# --- the command line -------------------------------------------------------------------------------------


def test_alerts_lists_the_open_alerts_newest_first_and_ack_closes_one(
    moved_engine: Engine, moved_url: str, run_cli: Callable[..., Result]
) -> None:
    check(moved_engine)
    uids = [int(row["uid"]) for row in stored_rows(moved_engine)]

    listed = run_cli("alerts", "--db", moved_url)
    closed = run_cli("alerts", "ack", str(uids[0]), "--db", moved_url)
    again = run_cli("alerts", "--db", moved_url, "ack", str(uids[0]))
    still_open = run_cli("alerts", "--db", moved_url, "--json")
    every = run_cli("alerts", "--all", "--db", moved_url)

    lines = listed.output.splitlines()
    assert listed.exit_code == 0, listed.stderr
    assert [int(line.split()[0][1:]) for line in lines] == sorted(uids, reverse=True)
    assert all(line.split()[1] == "nothing_saved_rate," for line in lines)
    assert any(
        ", all runs, week of 2026-11-23 against 2026-10-26 – 2026-11-22 (weeks): " in line for line in lines
    )
    assert all(
        "0.0% (0/200, 95% CI 0.0% – 1.9%) → 100.0% (50/50, 95% CI 92.9% – 100.0%), rise of +100.0 points"
        in line
        for line in lines
    )
    assert all("p < 0.0001, adjusted p < 0.0001; since " in line for line in lines)
    assert closed.output.startswith(f"closed: #{uids[0]} ")
    assert again.output.startswith(f"closed already: #{uids[0]} ")
    assert sorted(item["id"] for item in json.loads(still_open.output)) == sorted(uids[1:])
    assert len(every.output.splitlines()) == 3 and "; closed " in every.output


def _spoil(engine: Engine, uid: int, **values: object) -> None:
    with engine.begin() as connection:
        connection.execute(alert.update().where(alert.c.uid == uid).values(**values))


@pytest.mark.parametrize(
    "spoiled",
    [{"kind": "spike"}, {"group_kind": "editor"}, {"status": "OPEN"}],
    ids=["unknown kind", "unknown group kind", "unknown status"],
)
def test_an_alert_row_runrecord_did_not_write_is_named_and_left_out_while_the_rest_is_listed(
    moved_engine: Engine, moved_url: str, run_cli: Callable[..., Result], spoiled: dict[str, object]
) -> None:
    check(moved_engine)
    uids = [int(row["uid"]) for row in stored_rows(moved_engine)]
    _spoil(moved_engine, uids[0], **spoiled)

    every = ("--all",) if "status" in spoiled else ()  # a status it does not know is no open alert
    listed = run_cli("alerts", "--db", moved_url, *every)
    as_json = run_cli("alerts", "--db", moved_url, "--json", *every)

    assert listed.exit_code == 1
    assert [int(line.split()[0][1:]) for line in listed.stdout.splitlines()] == sorted(uids[1:], reverse=True)
    assert listed.stderr.strip() == (
        f"runrecord: error: tx_runrecord_alert row #{uids[0]} cannot be read (a kind, status, date or figure "
        "runrecord does not write) and left out"
    )
    assert as_json.exit_code == 1
    assert sorted(item["id"] for item in json.loads(as_json.stdout)) == uids[1:]


@on_sqlite_alone  # MariaDB and PostgreSQL keep no such value in a DATE column
@pytest.mark.parametrize("column", ["at_date", "after_to"])
def test_an_alert_row_whose_date_is_no_date_is_named_and_left_out_while_the_rest_is_listed(
    moved_engine: Engine, moved_url: str, run_cli: Callable[..., Result], column: str
) -> None:
    check(moved_engine)
    uids = [int(row["uid"]) for row in stored_rows(moved_engine)]
    with moved_engine.begin() as connection:
        spoil = text(f"UPDATE {alert.name} SET {column} = '2026-99-99' WHERE uid = :uid")
        connection.execute(spoil, {"uid": uids[0]})

    listed = run_cli("alerts", "--db", moved_url)

    assert listed.exit_code == 1 and "Traceback" not in listed.output + listed.stderr
    assert [int(line.split()[0][1:]) for line in listed.stdout.splitlines()] == sorted(uids[1:], reverse=True)
    assert listed.stderr.strip() == (
        f"runrecord: error: tx_runrecord_alert row #{uids[0]} cannot be read (a kind, status, date or figure "
        "runrecord does not write) and left out"
    )


def test_acknowledging_an_alert_row_runrecord_did_not_write_changes_nothing(
    moved_engine: Engine, moved_url: str, run_cli: Callable[..., Result]
) -> None:
    check(moved_engine)
    uid = int(stored_rows(moved_engine)[0]["uid"])
    _spoil(moved_engine, uid, kind="spike")
    before = stored_rows(moved_engine)

    result = run_cli("alerts", "ack", str(uid), "--db", moved_url)

    assert result.exit_code == 1
    assert f"tx_runrecord_alert row #{uid} cannot be read" in result.stderr
    assert len(result.stderr.splitlines()) == 1
    assert stored_rows(moved_engine) == before  # still open


@on_sqlite_alone
def test_an_alert_written_before_the_adjusted_p_was_kept_says_so(
    moved_engine: Engine, moved_url: str, run_cli: Callable[..., Result]
) -> None:
    check(moved_engine)
    with moved_engine.begin() as connection:
        connection.execute(alert.update().values(adjusted_p_value=None))  # as migration 0011 leaves a row

    listed = run_cli("alerts", "--db", moved_url)
    as_json = run_cli("alerts", "--db", moved_url, "--json")

    assert listed.exit_code == 0, listed.stderr
    assert all(", p < 0.0001, adjusted p not kept; " in line for line in listed.output.splitlines())
    assert {item["difference"]["adjusted_p_value"] for item in json.loads(as_json.output)} == {None}


@on_sqlite_alone
def test_alerts_says_when_there_is_none(installation_url: str, run_cli: Callable[..., Result]) -> None:
    result = run_cli("alerts", "--db", installation_url)

    assert result.exit_code == 0
    assert result.output.startswith("no open alert")


@on_sqlite_alone
def test_ack_of_an_alert_that_does_not_exist_is_one_error_line(
    installation_url: str, run_cli: Callable[..., Result]
) -> None:
    result = run_cli("alerts", "ack", "999", "--db", installation_url)

    assert result.exit_code == 1
    assert result.stderr.splitlines() == [
        "runrecord: error: no alert #999 (runrecord alerts --all lists every alert)"
    ]


@on_sqlite_alone
def test_measure_rates_prints_the_new_alerts_and_gives_them_in_its_json(
    installation_engine: Engine, installation_url: str, run_cli: Callable[..., Result]
) -> None:
    weeks = dict.fromkeys(WEEKS_BEFORE, (PER_WEEK, False))
    plant(installation_engine, {**weeks, NEWEST: (PER_WEEK, True)})

    printed = run_cli("measure-rates", "--db", installation_url, "--now", NOW_TEXT)
    as_json = run_cli("measure-rates", "--db", installation_url, "--now", NOW_TEXT, "--json")

    assert printed.exit_code == 0, printed.stderr
    assert "  alerts: 3 new (3 trend) of " in printed.output
    assert sum(line.startswith("    #") for line in printed.output.splitlines()) == 3
    document = json.loads(as_json.output)["alerts"]
    assert document["grains"] == ["week"] and document["new"] == [] and document["failure"] is None


@on_sqlite_alone
def test_measure_rates_with_a_malformed_webhook_is_one_error_line_and_measures_nothing(
    installation_engine: Engine,
    installation_url: str,
    run_cli: Callable[..., Result],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    plant(installation_engine, {NEWEST: (PER_WEEK, True)})
    monkeypatch.setenv("RUNRECORD_ALERT_WEBHOOK", "hooks.example.org/secret")

    result = run_cli("measure-rates", "--db", installation_url, "--now", NOW_TEXT)

    assert result.exit_code == 1
    assert len(result.stderr.splitlines()) == 1
    assert result.stderr.startswith("runrecord: error: RUNRECORD_ALERT_WEBHOOK is not an http(s) URL")
    with installation_engine.connect() as connection:
        assert connection.execute(select(func.count()).select_from(rate)).scalar_one() == 0
