"""watch-conversations on every dialect: stuck conversations, the history horizon, pending derivations; one
health row written, nothing of the chat's touched."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime

import pytest
from click.testing import Result
from sqlalchemy import Engine, func, insert, select, update

from adapters import schema
from core.health import HorizonLevel
from core.time import DAY_S
from data.agent_run import Write
from data.builder import Installation
from data.records import Record
from jobs.watch import watch
from tests.db.conftest import on_sqlite_alone

NOW = 1_800_000_000
DAY = DAY_S
WEEK = 7 * DAY
AT_NOW = datetime.fromtimestamp(NOW, UTC)


def a_chat_writing(site: Installation, page: Record, *times: int) -> list[Write]:
    """A conversation whose one run writes to the page at each of the times."""
    chat = site.conversation(configuration="seo-assistant", at=times[0], page=page)
    chat.user("Setze den Titel.", at=times[0])
    run = chat.run(at=times[0])
    writes = []
    for at in times:
        run.clock = max(run.clock, float(at))
        writes.append(run.write(page, ("title",)))
    run.finish()
    chat.close()
    return writes


def rows_of(engine: Engine, table: schema.Table) -> list[dict[str, object]]:
    with engine.connect() as connection:
        return [dict(row._mapping) for row in connection.execute(select(table).order_by(table.c.uid))]


def upstream_rows(engine: Engine) -> dict[str, list[dict[str, object]]]:
    return {name: rows_of(engine, table) for name, table in schema.upstream.tables.items()}


def test_stuck_conversations_are_those_claimed_for_more_than_five_minutes(
    installation_engine: Engine,
) -> None:
    with installation_engine.begin() as connection:
        site = Installation(connection)
        page = site.page("Produkte", at=NOW - 100 * DAY)
        statuses = {
            "processing for weeks": ("processing", NOW - 30 * DAY),
            "locked for 200 s": ("locked", NOW - 200),
            "tool_loop for 301 s": ("tool_loop", NOW - 301),
            "idle for weeks": ("idle", NOW - 40 * DAY),
            "deleted, processing": ("processing", NOW - 50 * DAY),
        }
        chats = {}
        for name, (status, since) in statuses.items():
            chat = site.conversation(configuration="seo-assistant", at=since - 60, page=page)
            chat.user(name, at=since - 60)
            chat.stuck(status, since=since)
            chat.close()
            chats[name] = chat
        site.finish()
        connection.execute(
            update(schema.conversation)
            .where(schema.conversation.c.uid == chats["deleted, processing"].uid)
            .values(deleted=1)
        )

    reading = watch(installation_engine, now=AT_NOW, window_s=WEEK)

    weeks, loop = chats["processing for weeks"].uid, chats["tool_loop for 301 s"].uid
    assert [(c.uid, c.status, c.stuck_for_s) for c in reading.stuck] == [
        (weeks, "processing", 30 * DAY),
        (loop, "tool_loop", 301),
    ]
    [row] = rows_of(installation_engine, schema.health)
    assert (row["status"], row["stuck_conversations"], row["stuck_since"]) == ("warning", 2, NOW - 30 * DAY)
    assert f"uid {weeks}, {loop};" in str(row["message"])


@pytest.mark.parametrize(
    ("retained_days", "level"),
    [
        (None, HorizonLevel.EMPTY),
        (3, HorizonLevel.UNKNOWN_NOW),
        (10, HorizonLevel.WARNING),
        (14, HorizonLevel.OK),
    ],
)
def test_the_horizon_warns_when_the_history_retains_less_than_two_windows(
    installation_engine: Engine, retained_days: int | None, level: HorizonLevel
) -> None:
    with installation_engine.begin() as connection:
        site = Installation(connection)
        if retained_days is not None:
            site.page("Produkte", at=NOW - retained_days * DAY)
            site.page("Später", at=NOW - DAY)
        site.finish()

    reading = watch(installation_engine, now=AT_NOW, window_s=WEEK)

    oldest = None if retained_days is None else NOW - retained_days * DAY
    assert (reading.horizon.level, reading.horizon.oldest) == (level, oldest)
    [row] = rows_of(installation_engine, schema.health)
    assert (row["horizon"], row["horizon_warning"], row["oldest_history"], row["window_s"]) == (
        level.value,
        int(level is not HorizonLevel.OK),
        oldest,
        WEEK,
    )
    assert row["status"] == ("ok" if level is HorizonLevel.OK else "warning")


def test_pending_writes_are_those_without_an_outcome_and_overdue_once_their_runs_window_closed_a_day_ago(
    installation_engine: Engine,
) -> None:
    with installation_engine.begin() as connection:
        site = Installation(connection)
        page = site.page("Produkte", at=NOW - 30 * DAY)
        a_chat_writing(site, page, NOW - 10 * DAY)  # due for two days: overdue
        a_chat_writing(site, page, NOW - 7 * DAY - DAY // 2)  # due for half a day: pending, not overdue
        a_chat_writing(site, page, NOW - DAY)  # its window is open
        a_chat_writing(site, page, NOW - 10 * DAY, NOW - 2 * DAY)  # rule 1: its LAST write decides
        [derived] = a_chat_writing(site, page, NOW - 12 * DAY)
        a_chat_writing(site, page, NOW + 3600)  # after `now`: not there yet
        site.finish()
        connection.execute(insert(schema.write_outcome).values(event_uid=derived.event_uid, outcome="edited"))

    reading = watch(installation_engine, now=AT_NOW, window_s=WEEK)

    assert (reading.pending_writes, reading.overdue_writes) == (5, 1)
    [row] = rows_of(installation_engine, schema.health)
    assert (row["pending_writes"], row["overdue_writes"], row["status"]) == (5, 1, "warning")


def test_the_writes_of_a_run_still_waiting_are_pending_but_never_overdue(installation_engine: Engine) -> None:
    with installation_engine.begin() as connection:
        site = Installation(connection)
        page = site.page("Produkte", at=NOW - 30 * DAY)
        a_chat_writing(site, page, NOW - 10 * DAY)
        site.finish()
        connection.execute(update(schema.agentrun).values(status="waiting_for_approval"))

    reading = watch(installation_engine, now=AT_NOW, window_s=WEEK)

    assert (reading.pending_writes, reading.overdue_writes) == (1, 0)


@pytest.mark.parametrize("status", ["paused", "", "Completed "])
def test_the_writes_of_a_run_with_a_status_nr_llm_does_not_write_are_overdue_a_day_past_their_window(
    installation_engine: Engine, status: str
) -> None:
    with installation_engine.begin() as connection:
        site = Installation(connection)
        page = site.page("Produkte", at=NOW - 30 * DAY)
        a_chat_writing(site, page, NOW - 10 * DAY)  # due for two days
        a_chat_writing(site, page, NOW - 7 * DAY - DAY // 2)  # due for half a day
        site.finish()
        connection.execute(update(schema.agentrun).values(status=status))

    reading = watch(installation_engine, now=AT_NOW, window_s=WEEK)

    assert (reading.pending_writes, reading.overdue_writes) == (2, 1)


def test_watch_writes_one_health_row_and_changes_nothing_of_the_chats(installation_engine: Engine) -> None:
    with installation_engine.begin() as connection:
        site = Installation(connection)
        page = site.page("Produkte", at=NOW - 30 * DAY)
        chat = site.conversation(configuration="seo-assistant", at=NOW - DAY, page=page)
        chat.user("Prüfe die SEO-Felder", at=NOW - DAY)
        chat.stuck("processing", since=NOW - DAY)
        chat.close()
        a_chat_writing(site, page, NOW - 10 * DAY)
        site.finish()
    upstream_before = {
        name: rows_of(installation_engine, table) for name, table in schema.upstream.tables.items()
    }

    watch(installation_engine, now=AT_NOW, window_s=WEEK)
    watch(installation_engine, now=AT_NOW, window_s=WEEK)

    upstream_after = {
        name: rows_of(installation_engine, table) for name, table in schema.upstream.tables.items()
    }
    assert upstream_after == upstream_before
    with installation_engine.connect() as connection:
        assert connection.execute(select(func.count()).select_from(schema.health)).scalar_one() == 2


def test_the_command_prints_the_reading_stores_it_and_records_the_execution(
    installation_engine: Engine, installation_url: str, run_cli: Callable[..., Result]
) -> None:
    with installation_engine.begin() as connection:
        site = Installation(connection)
        page = site.page("Produkte", at=NOW - 10 * DAY)
        chat = site.conversation(configuration="seo-assistant", at=NOW - DAY, page=page)
        chat.user("Prüfe die SEO-Felder", at=NOW - DAY)
        chat.stuck("locked", since=NOW - DAY)
        chat.close()
        site.finish()

    text = run_cli("watch-conversations", "--db", installation_url, "--now", "2027-01-15T08:00:00")
    as_json = run_cli("watch-conversations", "--db", installation_url, "--now", AT_NOW.isoformat(), "--json")

    assert text.exit_code == 0, text.stderr
    assert text.stdout.splitlines()[0].endswith("at 2027-01-15T08:00:00Z: warning")
    assert as_json.exit_code == 0, as_json.stderr
    reading = json.loads(as_json.stdout)
    assert reading["status"] == "warning"
    assert reading["stuck_conversations"] == [
        {"uid": chat.uid, "status": "locked", "since": "2027-01-14T08:00:00Z", "stuck_for_s": DAY}
    ]
    assert reading["history"] | {"oldest": None} == {
        "oldest": None,
        "retained_s": 10 * DAY,
        "window_s": WEEK,
        "horizon": "warning",
        "warning": True,
    }
    assert "be_user" not in as_json.stdout and "editor" not in as_json.stdout
    runs = rows_of(installation_engine, schema.job_run)
    assert [(r["job"], r["status"], r["processed"], r["failed"]) for r in runs] == [
        ("watch-conversations", "ok", 1, 0)
    ] * 2
    assert all(isinstance(r["duration_ms"], int) and r["finished"] for r in runs)
    assert len(rows_of(installation_engine, schema.health)) == 2


# Only SQLite stores such a stamp: the other engines' int(11) refuses it.
@on_sqlite_alone
def test_a_history_stamp_outside_the_calendar_is_shown_as_its_number_and_the_command_succeeds(
    installation_engine: Engine, installation_url: str, run_cli: Callable[..., Result]
) -> None:
    with installation_engine.begin() as connection:
        site = Installation(connection)
        site.page("Produkte", at=NOW - 10 * DAY)
        site.finish()
        h = schema.sys_history
        oldest = connection.execute(select(func.min(h.c.uid))).scalar_one()
        connection.execute(update(h).where(h.c.uid == oldest).values(tstamp=-99_999_999_999))

    result = run_cli("watch-conversations", "--db", installation_url, "--now", AT_NOW.isoformat(), "--json")

    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["history"]["oldest"] == "unix -99999999999"


# Only SQLite stores such a stamp: the other engines' int(11) refuses it.
@on_sqlite_alone
def test_a_claimed_conversation_whose_stamp_holds_text_is_named_by_its_row_never_quoted(
    installation_engine: Engine, installation_url: str, run_cli: Callable[..., Result]
) -> None:
    with installation_engine.begin() as connection:
        site = Installation(connection)
        chat = site.conversation(configuration="seo-assistant", at=NOW - DAY)
        chat.user("Prüfe die SEO-Felder", at=NOW - DAY)
        chat.stuck("locked", since=NOW - DAY)
        chat.close()
        site.finish()
        c = schema.conversation.c
        connection.execute(update(schema.conversation).where(c.uid == chat.uid).values(tstamp="Jane Doe"))

    result = run_cli("watch-conversations", "--db", installation_url, "--now", AT_NOW.isoformat())

    assert result.exit_code == 1
    assert result.stderr.endswith(
        f"tx_nrmcpagent_conversation.tstamp of uid {chat.uid} holds text, not a number (only SQLite keeps "
        "either in an INTEGER column): mend the row, then check again\n"
    )
    (run,) = rows_of(installation_engine, schema.job_run)
    assert run["status"] == "failed" and "Jane" not in str(run["message"]) + result.stderr


def test_the_command_on_a_server_that_is_not_there_fails_in_one_line(run_cli: Callable[..., Result]) -> None:
    result = run_cli("watch-conversations", "--db", "postgresql+psycopg://postgres@127.0.0.1:1/gone")

    assert result.exit_code == 1
    assert result.stderr.startswith("runrecord: error: watch-conversations on postgresql+psycopg://")
    assert len(result.stderr.splitlines()) == 1
    assert "Traceback" not in result.stderr
