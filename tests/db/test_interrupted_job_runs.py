"""A job run whose process was killed is marked interrupted by the next run, on every dialect; a running row
of a live process never is (core.job_runs, adapters.job_liveness)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy import Engine, insert, select, update

from adapters import job_liveness, processes
from adapters.schema import job_run
from core.job_runs import SILENT_AFTER_S
from core.time import DAY_S
from jobs.job_log import JobResult, Status, execute
from jobs.scheduler import Runner
from jobs.scheduler_config import JobSpec, SchedulerConfig
from tests.conftest import NOW as CLOCK
from tests.conftest import REPO_ROOT

WAIT_S = 30
NOW = int(CLOCK.timestamp())  # runrecord's clock in the tests (tests/conftest.py)
OTHER_HOST = "scheduler-2 pid:[4026531836]"

# A job that runs until it is killed: recorded as every job run is (jobs.job_log.execute).
LONG_JOB = """
import sys, time
from adapters.database import make_engine
from jobs.job_log import JobResult, execute

def work():
    time.sleep(120)
    return JobResult(0, 0, "never reached")

execute(make_engine(sys.argv[1]), "derive-outcomes", work)
"""


def eventually(condition: Callable[[], bool], timeout: float = WAIT_S) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


def statuses(engine: Engine) -> dict[int, str]:
    with engine.connect() as connection:
        return dict(connection.execute(select(job_run.c.uid, job_run.c.status)).all())  # type: ignore[arg-type]


def row_of(engine: Engine, uid: int) -> Any:
    with engine.connect() as connection:
        return connection.execute(select(job_run).where(job_run.c.uid == uid)).one()


def running_row(engine: Engine, **columns: Any) -> int:
    """A running row as a run would have left it: started two days ago unless told otherwise."""
    values = {"job": "derive-outcomes", "started": NOW - 2 * DAY_S, "status": "running", **columns}
    values.setdefault("heartbeat_at", values["started"])
    with engine.begin() as connection:
        key = connection.execute(insert(job_run).values(**values)).inserted_primary_key
    assert key is not None
    return int(key[0])


def ended_pid() -> int:
    """The pid of a process of this host that has ended (and been reaped)."""
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


@pytest.fixture
def live_process() -> Iterator[subprocess.Popen[bytes]]:
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    yield process
    process.kill()
    process.wait()


# --- a real process, killed ---------------------------------------------------------------------------------


def test_a_run_left_running_by_a_process_killed_with_sigkill_is_marked_interrupted_by_the_next_run(
    installation_engine: Engine, installation_url: str
) -> None:
    environment = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    process = subprocess.Popen(
        [sys.executable, "-c", LONG_JOB, installation_url], env=environment, cwd=REPO_ROOT
    )
    try:
        assert eventually(lambda: "running" in statuses(installation_engine).values())
        [killed] = statuses(installation_engine)
        execute(installation_engine, "watch-conversations", lambda: JobResult(1, 0, "while it runs"))
        while_alive = statuses(installation_engine)[killed]

        process.send_signal(signal.SIGKILL)
        process.wait(timeout=WAIT_S)
        execute(installation_engine, "derive-outcomes", lambda: JobResult(0, 0, "the next run"))
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()

    row = row_of(installation_engine, killed)
    assert while_alive == "running"
    assert (row.status, row.pid) == ("interrupted", process.pid)
    assert row.message == (
        f"interrupted: its process (pid {process.pid} on {processes.HOST}) ended without finishing it"
    )
    assert row.finished is None
    assert sorted(statuses(installation_engine).values()) == ["interrupted", "ok", "ok"]


# --- rows as a dead run, and as a live one, would leave them ------------------------------------------------


def test_the_rows_of_processes_that_are_gone_are_marked_and_those_of_live_ones_are_not(
    installation_engine: Engine, live_process: subprocess.Popen[bytes]
) -> None:
    here = processes.process_columns()
    silent = NOW - SILENT_AFTER_S - 60
    gone = {
        "ended on this host": running_row(
            installation_engine, host=here["host"], pid=ended_pid(), token="0" * 16
        ),
        "our pid, an earlier process": running_row(installation_engine, **here | {"token": "f" * 16}),
        "another host, silent": running_row(installation_engine, host=OTHER_HOST, pid=7, heartbeat_at=silent),
        "written before rows named a process": running_row(installation_engine, heartbeat_at=0),
    }
    live = {
        "another host, beating": running_row(
            installation_engine, host=OTHER_HOST, pid=7, heartbeat_at=NOW - 60
        ),
        "a live process here": running_row(
            installation_engine, host=here["host"], pid=live_process.pid, heartbeat_at=NOW - 5
        ),
        "this process's own, silent": running_row(installation_engine, **here, heartbeat_at=silent),
        "started a minute ago elsewhere": running_row(
            installation_engine, host=OTHER_HOST, pid=9, started=NOW - 60, heartbeat_at=0
        ),
    }

    marked = job_liveness.mark_interrupted(installation_engine, now=NOW)

    now_stored = statuses(installation_engine)
    assert sorted(marked) == sorted(gone.values())
    assert {what: now_stored[uid] for what, uid in gone.items()} == dict.fromkeys(gone, "interrupted")
    assert {what: now_stored[uid] for what, uid in live.items()} == dict.fromkeys(live, "running")


def test_a_silent_run_of_another_host_is_marked_with_its_last_sign_of_life(
    installation_engine: Engine,
) -> None:
    uid = running_row(
        installation_engine, host=OTHER_HOST, pid=7, started=1_789_999_000, heartbeat_at=1_790_000_000
    )

    job_liveness.mark_interrupted(installation_engine, now=1_790_000_000 + SILENT_AFTER_S + 1)

    assert row_of(installation_engine, uid).message == (
        "interrupted: no sign of life since 2026-09-21T14:13:20Z (a running job renews it every 30 s)"
    )


def test_a_run_that_beat_after_it_was_read_is_not_marked(
    installation_engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    uid = running_row(installation_engine, host=OTHER_HOST, pid=7)
    original = job_liveness.interruption

    def beat_meanwhile(*args: Any, **kwargs: Any) -> str | None:
        with installation_engine.begin() as connection:
            connection.execute(update(job_run).where(job_run.c.uid == uid).values(heartbeat_at=NOW))
        return original(*args, **kwargs)

    monkeypatch.setattr(job_liveness, "interruption", beat_meanwhile)

    marked = job_liveness.mark_interrupted(installation_engine, now=NOW)

    assert marked == [] and statuses(installation_engine)[uid] == "running"


# --- the running job's own side -----------------------------------------------------------------------------


def test_a_running_job_names_its_process_and_renews_its_heartbeat(installation_engine: Engine) -> None:
    uid = running_row(installation_engine, heartbeat_at=0)

    with job_liveness.heartbeat(installation_engine, uid, every_s=0.05):
        renewed = eventually(lambda: row_of(installation_engine, uid).heartbeat_at >= NOW)

    assert renewed


def test_a_job_run_records_this_process_and_its_end_overwrites_a_mark_made_while_it_was_cut_off(
    installation_engine: Engine,
) -> None:
    def marked_meanwhile() -> JobResult:
        with installation_engine.begin() as connection:
            connection.execute(update(job_run).values(status="interrupted", message="silent too long"))
        return JobResult(3, 0, "done")

    execution = execute(installation_engine, "measure-rates", marked_meanwhile)

    [row] = list(statuses(installation_engine))
    stored = row_of(installation_engine, row)
    assert execution.status is Status.OK
    assert (stored.status, stored.message) == ("ok", "done")
    assert (stored.host, stored.pid, stored.token) == (
        processes.HOST,
        os.getpid(),
        processes.TOKEN,
    )


def test_a_scheduler_that_takes_the_lease_marks_the_runs_of_a_killed_holder_interrupted(
    installation_engine: Engine, installation_url: str
) -> None:
    uid = running_row(installation_engine, host=OTHER_HOST, pid=7)
    config = SchedulerConfig(
        jobs=(JobSpec("watch-conversations", "jobs.watch:run_job", "0 0 1 1 *"),),
        timezone=ZoneInfo("UTC"),
        misfire_grace_s=60,
        lease_s=0.6,
    )
    runner, stop = Runner(installation_url, config, holder="taking over"), threading.Event()
    thread = threading.Thread(target=runner.run, args=(stop,))
    thread.start()
    try:
        assert runner.running.wait(WAIT_S)
        after_taking = statuses(installation_engine)[uid]
    finally:
        stop.set()
        thread.join(WAIT_S)

    assert after_taking == "interrupted"
