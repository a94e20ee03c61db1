"""The Health page (administrators): job runs and freshness, stuck conversations, the history horizon against
the window, pending derivations; each with an explicit state when there is nothing to show."""

from __future__ import annotations

import os
import re
import shutil
import signal
import string
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from sqlalchemy import insert, make_url, select, text
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.element_tree import Table

from adapters.database import make_engine
from adapters.schema import job_run
from core.job_runs import SILENT_AFTER_S
from dashboard.queries import health
from jobs.job_log import JobResult, execute
from jobs.schema_setup import init_db
from tests.app import rendered
from tests.app.conftest import NOW, SMALL_DEMO_CONVERSATIONS
from tests.conftest import REPO_ROOT

# A job that runs until it is killed, recorded as every job run is.
LONG_JOB = """
import sys, time
from adapters.database import make_engine
from jobs.job_log import JobResult, execute
execute(make_engine(sys.argv[1]), "derive-outcomes", lambda: (time.sleep(120), JobResult(0, 0, ""))[1])
"""


def _health(dashboard: Callable[..., AppTest], url: str) -> AppTest:
    return dashboard(url, administrator=True, page="health")


def test_health_lists_every_job_run_and_each_job_s_freshness(
    dashboard: Callable[..., AppTest], measured_db_url: str
) -> None:
    app = _health(dashboard, measured_db_url)

    assert not app.exception
    freshness, runs = rendered.tables(app)[:2]
    assert set(freshness["job"]) >= {"derive-outcomes", "measure-rates", "watch-conversations"}
    assert set(runs["job"]) == {"derive-outcomes", "measure-rates", "watch-conversations"}
    assert set(runs["status"]) == {"ok"}


def test_health_shows_the_history_horizon_against_the_window_and_the_pending_derivations(
    dashboard: Callable[..., AppTest], measured_db_url: str
) -> None:
    app = _health(dashboard, measured_db_url)

    assert any("History retained since" in s.value and "window of 7 days" in s.value for s in app.success)
    labels = {metric.label: metric.value for metric in app.metric}
    assert int(labels["Writes pending derivation"]) > 0  # the runs still inside their window


@pytest.mark.parametrize(
    "statements",
    [
        ("DROP TABLE be_users",),
        ("DROP TABLE be_users", "CREATE TABLE be_users (uid INTEGER PRIMARY KEY)"),
    ],
    ids=["without-be-users", "be-users-without-username"],
)
def test_an_installation_without_a_readable_be_users_reads_every_row_as_human_and_health_says_so(
    dashboard: Callable[..., AppTest], measured_db_url: str, tmp_path: Path, statements: tuple[str, ...]
) -> None:
    copy = tmp_path / "users.sqlite"
    shutil.copy(make_url(measured_db_url).database or "", copy)
    engine = make_engine(f"sqlite:///{copy}")
    with engine.begin() as connection:
        for statement in statements:
            connection.execute(text(statement))
    engine.dispose()

    with_users = _health(dashboard, measured_db_url)
    without = _health(dashboard, f"sqlite:///{copy}")

    assert not any("be_users" in w.value for w in with_users.warning)
    assert any(
        "cannot read a be_users table with uid and username" in w.value and "_cli_" in w.value
        for w in without.warning
    )


def test_health_lists_a_stuck_conversation_by_uid_and_status_only(
    dashboard: Callable[..., AppTest], bad_row_db: tuple[str, dict[str, int | str]]
) -> None:
    url, planted = bad_row_db

    app = _health(dashboard, url)

    stuck = next(t for t in rendered.tables(app) if "stuck for" in t.columns)
    assert list(stuck["conversation"]) == [planted["stuck_conversation"]]
    assert list(stuck.columns) == ["conversation", "status", "since (UTC)", "stuck for"]
    assert any("1 conversation is stuck" in e.value for e in app.error)


def test_health_says_no_job_has_run_and_no_reading_exists_on_a_fresh_installation(
    dashboard: Callable[..., AppTest], demo_db_url: str
) -> None:
    app = _health(dashboard, demo_db_url)

    assert not app.exception
    infos = " ".join(i.value for i in app.info)
    assert "No job has run on this database yet" in infos
    assert "runrecord watch-conversations" in infos


def test_health_counts_rows_per_table_only_when_asked(
    dashboard: Callable[..., AppTest], measured_db_url: str
) -> None:
    app = _health(dashboard, measured_db_url)
    before = len(rendered.tables(app))

    app.toggle(key="count_tables").set_value(True).run()

    counts = rendered.tables(app)[-1].set_index("table")["rows"]
    assert len(rendered.tables(app)) == before + 1
    assert counts["tx_nrmcpagent_conversation"] == SMALL_DEMO_CONVERSATIONS


# Markdown, HTML and Streamlit's own directives a job run's message may hold, to be shown as written.
ESCAPED = re.compile(r"\\[!-/:-@\[-`{-~]")
MARKUP = r"**bold** _it_ `code` <b>tag</b> [link](https://example.org) :red[red] :material/home: $x^2$ a\b #"


def test_a_job_runs_message_is_shown_whole_and_as_written_markup_and_all(
    dashboard: Callable[..., AppTest], tmp_path: Path
) -> None:
    url = f"sqlite:///{tmp_path / 'markup.sqlite'}"
    engine = make_engine(url)
    init_db(engine, with_upstream=True)
    execute(engine, "watch-conversations", lambda: JobResult(12345, 0, MARKUP))
    engine.dispose()

    app = _health(dashboard, url)

    assert not app.exception
    runs = next(t for t in rendered.tables(app) if "message" in t.columns)
    assert list(runs["message"]) == [MARKUP]
    assert list(runs["processed"]) == ["12,345"]  # a count as the page's other figures show it
    # CommonMark shows a backslash-escaped ASCII punctuation character as itself: none is left unescaped.
    cell = next(node.value for node in app.get("table") if isinstance(node, Table))["message"].iloc[0]
    assert not any(character in string.punctuation for character in ESCAPED.sub("", cell))


def test_health_says_what_to_do_on_a_database_without_tables(
    dashboard: Callable[..., AppTest], empty_sqlite_url: str
) -> None:
    app = _health(dashboard, empty_sqlite_url)

    assert not app.exception
    assert "runrecord init-db" in app.info[0].value


def test_a_nightly_job_not_run_for_over_a_day_is_stale(measured_db_url: str) -> None:
    engine = make_engine(measured_db_url)
    later = int(NOW.timestamp()) + 27 * 3600

    fresh = health.freshness(engine, now=int(NOW.timestamp())).set_index("job")["state"]
    stale = health.freshness(engine, now=later).set_index("job")["state"]
    engine.dispose()

    assert set(fresh) == {"fresh"}
    assert stale["derive-outcomes"] == stale["measure-rates"] == "stale: expected within 26 hours"
    assert stale["watch-conversations"].startswith("stale")


def test_a_run_whose_process_was_killed_reads_interrupted_marked_or_not_yet_marked(
    dashboard: Callable[..., AppTest], tmp_path: Path
) -> None:
    url = f"sqlite:///{tmp_path / 'killed.sqlite'}"
    engine = make_engine(url)
    init_db(engine, with_upstream=True)
    environment = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    killed = subprocess.Popen([sys.executable, "-c", LONG_JOB, url], env=environment, cwd=REPO_ROOT)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        with engine.connect() as connection:
            if connection.execute(select(job_run.c.uid)).first() is not None:
                break
        time.sleep(0.05)
    killed.send_signal(signal.SIGKILL)
    killed.wait()
    execute(engine, "watch-conversations", lambda: JobResult(1, 0, "the next run"))  # marks the killed one
    silent_since = int(NOW.timestamp()) - SILENT_AFTER_S - 3600
    with engine.begin() as connection:  # as a run on another host, killed an hour ago, leaves its row
        connection.execute(
            insert(job_run).values(
                job="measure-rates",
                started=silent_since,
                status="running",
                host="scheduler-2",
                pid=7,
                heartbeat_at=silent_since,
            )
        )
    engine.dispose()

    app = _health(dashboard, url)

    assert not app.exception
    runs = next(t for t in rendered.tables(app) if "message" in t.columns).set_index("job")
    assert runs.loc["derive-outcomes", "status"] == "interrupted"
    assert f"pid {killed.pid}" in runs.loc["derive-outcomes", "message"]
    assert runs.loc["measure-rates", "status"] == "interrupted"
    assert runs.loc["measure-rates", "message"].endswith("(not marked yet)")
    assert runs.loc["watch-conversations", "status"] == "ok"
    warning = next(w.value for w in app.warning if w.value.startswith("Interrupted:"))
    assert "derive-outcomes started" in warning and "measure-rates started" in warning
