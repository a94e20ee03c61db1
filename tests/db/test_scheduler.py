"""The scheduler on every dialect: jobs registered from configuration, a failing job recorded while the
scheduler goes on, one scheduler per database, a clean stop.

Jobs are started with `Runner.run_now` (as their trigger would start them) instead of waiting for a cron
time; leases last well under a second so that taking over is quick.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from apscheduler.jobstores.memory import MemoryJobStore
from apscheduler.schedulers.base import STATE_PAUSED
from click.testing import Result
from sqlalchemy import Engine, select
from sqlalchemy.exc import OperationalError

from adapters.database import make_engine
from adapters.lease import Lease
from adapters.schema import apscheduler_jobs, job_run
from adapters.schema import lease as lease_table
from jobs import job_log, watch
from jobs.job_log import JobResult, Status
from jobs.scheduler import LEASE_NAME, Runner, _SteadyScheduler, beside, build_scheduler, register, run_after
from jobs.scheduler_config import JobSpec, SchedulerConfig
from jobs.schema_setup import init_db
from tests.conftest import NOW, REPO_ROOT

LEASE_S = 1.5  # renewed, and polled for, every 0.5 s: a loaded machine may stall a thread for a second
NEVER = "0 0 1 1 *"  # once a year: nothing runs unless the test starts it
GONE_URL = "postgresql+psycopg://postgres@127.0.0.1:1/gone"  # a server that does not answer
WAIT_S = 15


# --- job callables the tests schedule (module-level, referenced by text, as the contract asks) --------------


def explode(db_url: str, *, now: datetime | None = None) -> JobResult:
    raise RuntimeError("the job broke\nin two lines")


EXPLODES_AT = explode.__code__.co_firstlineno + 1  # the line that raises


SERVER_GONE = threading.Event()


def watch_while_the_server_may_be_gone(db_url: str, *, now: datetime | None = None) -> JobResult:
    """watch-conversations, on a server that does not answer while SERVER_GONE is set."""
    return watch.run_job(GONE_URL if SERVER_GONE.is_set() else db_url, now=now)


def mark(db_url: str, *, now: datetime | None = None) -> JobResult:
    return JobResult(0, 0, "marked")


BATCHES_STARTED = threading.Event()


def work_in_batches_until_stopped(db_url: str, *, now: datetime | None = None) -> JobResult:
    BATCHES_STARTED.set()
    batches, deadline = 0, time.monotonic() + WAIT_S
    while not job_log.stop_requested() and time.monotonic() < deadline:
        time.sleep(0.02)  # a batch
        batches += 1
    said = "stopped after batch" if job_log.stop_requested() else "was never asked to stop, after batch"
    return JobResult(batches, 0, f"{said} {batches}")


LAST_BATCH_HOLDER: list[str | None] = []


def finish_a_batch_longer_than_the_lease(db_url: str, *, now: datetime | None = None) -> JobResult:
    """Works until asked to stop, then finishes a batch of two lease lengths and notes who holds the lease."""
    BATCHES_STARTED.set()
    deadline = time.monotonic() + WAIT_S
    while not job_log.stop_requested() and time.monotonic() < deadline:
        time.sleep(0.02)
    time.sleep(2 * LEASE_S)  # the last batch
    engine = make_engine(db_url)
    state = Lease(engine, LEASE_NAME, seconds=LEASE_S, holder="observer").state()
    engine.dispose()
    LAST_BATCH_HOLDER.append(None if state is None else state.holder)
    return JobResult(1, 0, "finished its last batch")


# --- helpers ------------------------------------------------------------------------------------------------


def config_of(*jobs: JobSpec, timezone: str = "UTC", lease_s: float = LEASE_S) -> SchedulerConfig:
    return SchedulerConfig(jobs=jobs, timezone=ZoneInfo(timezone), misfire_grace_s=60, lease_s=lease_s)


class InThread:
    """A scheduler process, played by a thread with its own Runner (and so its own engine)."""

    def __init__(self, url: str, config: SchedulerConfig, holder: str) -> None:
        self.runner = Runner(url, config, holder=holder)
        self.stop = threading.Event()
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, name=holder)

    def _run(self) -> None:
        try:
            self.runner.run(self.stop)
        except BaseException as error:
            self.error = error

    def start(self) -> InThread:
        self.thread.start()
        return self

    def halt(self) -> None:
        self.stop.set()
        if self.thread.ident is not None:
            self.thread.join(timeout=WAIT_S)
        assert not self.thread.is_alive()
        assert self.error is None, self.error


@pytest.fixture
def schedulers() -> Iterator[Callable[[str, SchedulerConfig, str], InThread]]:
    started: list[InThread] = []

    def start(url: str, config: SchedulerConfig, holder: str) -> InThread:
        started.append(InThread(url, config, holder).start())
        return started[-1]

    yield start
    for scheduler in started:
        scheduler.halt()


def eventually(condition: Callable[[], bool], timeout: float = WAIT_S) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


def finished_runs(engine: Engine) -> list[dict[str, object]]:
    with engine.connect() as connection:
        rows = connection.execute(
            select(job_run).where(job_run.c.status != "running").order_by(job_run.c.uid)
        )
        return [dict(row._mapping) for row in rows]


def stored_jobs(engine: Engine) -> set[str]:
    with engine.connect() as connection:
        return set(connection.execute(select(apscheduler_jobs.c.id)).scalars())


# --- registering from configuration -------------------------------------------------------------------------


def test_the_scheduler_registers_its_jobs_from_configuration(
    installation_engine: Engine,
    installation_url: str,
    schedulers: Callable[[str, SchedulerConfig, str], InThread],
) -> None:
    config = config_of(
        JobSpec("derive-outcomes", "jobs.derive:run_job", "15 1 * * 1-5"),
        JobSpec("measure-rates", "jobs.measure:run_job", "after derive-outcomes"),
        JobSpec("watch-conversations", "jobs.watch:run_job", "*/10 * * * *"),
        timezone="Europe/Berlin",
    )

    runner = schedulers(installation_url, config, "first").runner

    assert runner.running.wait(WAIT_S)
    assert runner.scheduler is not None
    jobs = {job.id: job for job in runner.scheduler.get_jobs()}
    assert set(jobs) == stored_jobs(installation_engine) == {"derive-outcomes", "watch-conversations"}
    derive, watch_job = jobs["derive-outcomes"], jobs["watch-conversations"]
    assert derive.func_ref == "jobs.job_log:run_scheduled"
    assert derive.args == ("derive-outcomes", "jobs.derive:run_job", installation_url)
    assert str(derive.trigger) == (
        "cron[month='*', day='*', day_of_week='mon,tue,wed,thu,fri', hour='1', minute='15']"
    )
    assert str(watch_job.trigger) == "cron[month='*', day='*', day_of_week='*', hour='*', minute='*/10']"
    assert derive.trigger.timezone == ZoneInfo("Europe/Berlin")
    assert all((j.coalesce, j.max_instances, j.misfire_grace_time) == (True, 1, 60) for j in jobs.values())


def test_a_restart_keeps_what_is_configured_the_same_replaces_what_changed_and_drops_the_rest(
    installation_engine: Engine, installation_url: str
) -> None:
    measure = JobSpec("measure-rates", "jobs.measure:run_job", "after derive-outcomes")
    before = config_of(
        JobSpec("watch-conversations", "jobs.watch:run_job", "*/5 * * * *"),
        JobSpec("derive-outcomes", "jobs.derive:run_job", "30 2 * * *"),
        measure,
        JobSpec("retired", "jobs.watch:run_job", "0 4 * * *"),
        JobSpec("unconfigured", "jobs.watch:run_job", "0 5 * * *"),
    )
    after = config_of(
        JobSpec("watch-conversations", "jobs.watch:run_job", "*/5 * * * *"),
        JobSpec("derive-outcomes", "jobs.derive:run_job", "45 3 * * *"),
        measure,
        JobSpec("retired", "jobs.watch:run_job", "after derive-outcomes"),  # no longer on a cron of its own
    )
    # A run missed while no scheduler ran. The scheduler stays paused and never fires, so the missed moment
    # need not lie near the system clock APScheduler fires by: the suite's fixed clock, half a minute back.
    missed = NOW - timedelta(seconds=30)
    scheduler = build_scheduler(installation_engine, before)
    scheduler.start(paused=True)
    try:
        register(scheduler, installation_url, before)
        scheduler.modify_job("watch-conversations", next_run_time=missed)
        run_after(scheduler, measure, installation_url, before)  # derive finished; measure had not started

        register(scheduler, installation_url, after)

        jobs = {job.id: job for job in scheduler.get_jobs()}
    finally:
        scheduler.shutdown(wait=True)
    assert set(jobs) == {"watch-conversations", "derive-outcomes", "measure-rates"}
    assert jobs["watch-conversations"].next_run_time == missed  # still due: it runs within the grace time
    assert str(jobs["derive-outcomes"].trigger).endswith("hour='3', minute='45']")
    assert str(jobs["measure-rates"].trigger).startswith("date[")


# --- failing jobs -------------------------------------------------------------------------------------------


def test_a_failing_job_is_recorded_in_one_line_and_the_scheduler_goes_on(
    installation_engine: Engine,
    installation_url: str,
    schedulers: Callable[[str, SchedulerConfig, str], InThread],
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="jobs")
    config = config_of(
        JobSpec("explode", "tests.db.test_scheduler:explode", NEVER),
        JobSpec("not-written-yet", "jobs.not_written_yet:run_job", NEVER),
        JobSpec("watch-conversations", "jobs.watch:run_job", NEVER),
    )
    runner = schedulers(installation_url, config, "first").runner
    assert runner.running.wait(WAIT_S)

    runner.run_now("explode")
    runner.run_now("not-written-yet")
    assert eventually(lambda: len(finished_runs(installation_engine)) == 2)
    runner.run_now("watch-conversations")
    assert eventually(lambda: len(finished_runs(installation_engine)) == 3)

    runs = {str(r["job"]): r for r in finished_runs(installation_engine)}
    assert {job: (r["status"], r["message"]) for job, r in runs.items()} == {
        "explode": ("failed", f"RuntimeError at {__name__}:{EXPLODES_AT}"),
        "not-written-yet": (
            "failed",
            "cannot load jobs.not_written_yet:run_job: No module named 'jobs.not_written_yet'",
        ),
        "watch-conversations": ("ok", runs["watch-conversations"]["message"]),
    }
    assert runs["watch-conversations"]["processed"] == 1
    assert all(isinstance(r["duration_ms"], int) and r["finished"] for r in runs.values())
    assert runner.running.is_set()
    errors = [
        r.getMessage() for r in caplog.records if r.name == "jobs.job_log" and r.levelno == logging.ERROR
    ]
    assert len(errors) == 2 and all("\n" not in line for line in errors)


def test_a_job_whose_database_goes_away_fails_in_one_line_and_the_next_run_completes_the_work(
    installation_engine: Engine,
    installation_url: str,
    schedulers: Callable[[str, SchedulerConfig, str], InThread],
) -> None:
    config = config_of(
        JobSpec("watch-conversations", "tests.db.test_scheduler:watch_while_the_server_may_be_gone", NEVER)
    )
    runner = schedulers(installation_url, config, "first").runner
    assert runner.running.wait(WAIT_S)

    SERVER_GONE.set()
    try:
        runner.run_now("watch-conversations")
        assert eventually(lambda: len(finished_runs(installation_engine)) == 1)
    finally:
        SERVER_GONE.clear()
    runner.run_now("watch-conversations")
    assert eventually(lambda: len(finished_runs(installation_engine)) == 2)

    gone, back = finished_runs(installation_engine)
    assert gone["status"] == "failed"
    assert str(gone["message"]).startswith("database: ") and "\n" not in str(gone["message"])
    assert "127.0.0.1" in str(gone["message"])
    assert back["status"] == "ok"
    assert runner.running.is_set()
    with installation_engine.connect() as connection:
        from adapters.schema import health

        assert len(connection.execute(select(health.c.uid)).all()) == 1


def test_measure_rates_runs_right_after_derive_outcomes_finishes_and_not_after_it_fails(
    installation_engine: Engine,
    installation_url: str,
    schedulers: Callable[[str, SchedulerConfig, str], InThread],
) -> None:
    config = config_of(
        JobSpec("derive-ok", "tests.db.test_scheduler:mark", NEVER),
        JobSpec("measure-after-ok", "tests.db.test_scheduler:mark", "after derive-ok"),
        JobSpec("derive-broken", "tests.db.test_scheduler:explode", NEVER),
        JobSpec("measure-after-broken", "tests.db.test_scheduler:mark", "after derive-broken"),
    )
    runner = schedulers(installation_url, config, "first").runner
    assert runner.running.wait(WAIT_S)

    runner.run_now("derive-broken")
    runner.run_now("derive-ok")

    assert eventually(lambda: len(finished_runs(installation_engine)) == 3)
    time.sleep(0.3)  # time enough for a wrongly started follower to show
    assert sorted(str(r["job"]) for r in finished_runs(installation_engine)) == [
        "derive-broken",
        "derive-ok",
        "measure-after-ok",
    ]


# --- one scheduler per database -----------------------------------------------------------------------------


def test_a_second_scheduler_runs_nothing_while_the_first_holds_the_lease_and_takes_over_when_it_stops(
    installation_engine: Engine,
    installation_url: str,
    schedulers: Callable[[str, SchedulerConfig, str], InThread],
) -> None:
    first_config = config_of(JobSpec("watch-conversations", "jobs.watch:run_job", NEVER))
    second_config = config_of(
        JobSpec("watch-conversations", "jobs.watch:run_job", NEVER),
        JobSpec("marker", "tests.db.test_scheduler:mark", NEVER),
    )
    first = schedulers(installation_url, first_config, "first")
    assert first.runner.running.wait(WAIT_S)
    second = schedulers(installation_url, second_config, "second")
    assert second.runner.waiting.wait(WAIT_S)

    first.runner.run_now("watch-conversations")
    assert eventually(lambda: len(finished_runs(installation_engine)) == 1)
    time.sleep(2 * LEASE_S)  # two lease lengths: the first renews, the second keeps waiting

    assert not second.runner.running.is_set() and second.runner.scheduler is None
    assert stored_jobs(installation_engine) == {"watch-conversations"}
    assert [r["job"] for r in finished_runs(installation_engine)] == ["watch-conversations"]

    first.halt()

    assert second.runner.running.wait(WAIT_S)
    assert stored_jobs(installation_engine) == {"watch-conversations", "marker"}
    second.runner.run_now("marker")
    assert eventually(lambda: len(finished_runs(installation_engine)) == 2)


def test_a_stopping_scheduler_holds_the_lease_until_its_running_job_has_finished_its_batch(
    installation_url: str, schedulers: Callable[[str, SchedulerConfig, str], InThread]
) -> None:
    BATCHES_STARTED.clear()
    LAST_BATCH_HOLDER.clear()
    slow = JobSpec("slow", "tests.db.test_scheduler:finish_a_batch_longer_than_the_lease", NEVER)
    first = schedulers(installation_url, config_of(slow), "first")
    assert first.runner.running.wait(WAIT_S)
    second = schedulers(installation_url, config_of(slow), "second")
    assert second.runner.waiting.wait(WAIT_S)
    first.runner.run_now("slow")
    assert BATCHES_STARTED.wait(WAIT_S)

    first.halt()  # returns once the job has finished its last batch

    assert LAST_BATCH_HOLDER == ["first"]
    assert second.runner.running.wait(WAIT_S)


def test_a_scheduler_takes_over_a_lease_whose_holder_stopped_renewing_it(
    installation_engine: Engine,
    installation_url: str,
    schedulers: Callable[[str, SchedulerConfig, str], InThread],
) -> None:
    crashed = Lease(installation_engine, LEASE_NAME, seconds=1.0, holder="crashed")
    assert crashed.take()
    config = config_of(JobSpec("watch-conversations", "jobs.watch:run_job", NEVER))

    runner = schedulers(installation_url, config, "next").runner

    assert runner.waiting.wait(WAIT_S)
    assert runner.running.wait(WAIT_S)
    state = crashed.state()
    assert state is not None and state.holder == "next"


# --- stopping -----------------------------------------------------------------------------------------------


@pytest.fixture
def sqlite_installation(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'installation.sqlite'}"
    engine = make_engine(url)
    init_db(engine, with_upstream=True)
    engine.dispose()
    return url


def test_stopping_lets_the_running_job_finish_its_batch_and_releases_the_lease(
    sqlite_installation: str,
) -> None:
    config = config_of(JobSpec("batches", "tests.db.test_scheduler:work_in_batches_until_stopped", NEVER))
    scheduler = InThread(sqlite_installation, config, "first").start()
    try:
        assert scheduler.runner.running.wait(WAIT_S)
        BATCHES_STARTED.clear()
        scheduler.runner.run_now("batches")
        assert BATCHES_STARTED.wait(WAIT_S)
    finally:
        scheduler.halt()

    engine = make_engine(sqlite_installation)
    [run] = finished_runs(engine)
    with engine.connect() as connection:
        expires = connection.execute(select(lease_table.c.expires_at_ms)).scalar_one()
    engine.dispose()
    assert (run["status"], str(run["message"]).startswith("stopped after batch")) == ("ok", True)
    assert expires == 0
    assert not job_log.stop_requested()


def test_a_scheduler_that_cannot_renew_its_lease_starts_no_job_until_it_holds_it_again(
    sqlite_installation: str,
) -> None:
    config = config_of(JobSpec("watch-conversations", "jobs.watch:run_job", NEVER))
    scheduler = InThread(sqlite_installation, config, "first").start()
    engine = make_engine(sqlite_installation)
    try:
        assert scheduler.runner.running.wait(WAIT_S)
        with engine.begin() as connection:  # the lease cannot be renewed: the database fails that statement
            connection.exec_driver_sql("ALTER TABLE tx_runrecord_lease RENAME TO tx_runrecord_lease_away")

        stopped_starting_jobs = eventually(lambda: not scheduler.runner.running.is_set())
        paused = scheduler.runner.scheduler is not None and scheduler.runner.scheduler.state == STATE_PAUSED
        with engine.begin() as connection:
            connection.exec_driver_sql("ALTER TABLE tx_runrecord_lease_away RENAME TO tx_runrecord_lease")

        assert (stopped_starting_jobs, paused) == (True, True)
        assert scheduler.runner.running.wait(WAIT_S)
        scheduler.runner.run_now("watch-conversations")
        assert eventually(lambda: len(finished_runs(engine)) == 1)
    finally:
        scheduler.halt()
        engine.dispose()


def test_the_scheduler_runs_beside_another_task_and_stops_with_it(sqlite_installation: str) -> None:
    config = config_of(JobSpec("watch-conversations", "jobs.watch:run_job", NEVER))

    with beside(sqlite_installation, config) as runner:
        held = runner.running.wait(WAIT_S)

    engine = make_engine(sqlite_installation)
    state = Lease(engine, LEASE_NAME, seconds=1, holder="observer").state()
    engine.dispose()
    assert held and not runner.running.is_set()
    assert state is not None and state.expires_at_ms == 0


@pytest.mark.parametrize(
    ("make_url", "complaint"),
    [
        (lambda tmp: f"sqlite:///{tmp / 'empty.sqlite'}", "lacks the upstream tables"),
        (lambda tmp: GONE_URL, "127.0.0.1"),
    ],
    ids=["not-initialised", "unreachable"],
)
def test_the_scheduler_command_on_a_database_it_cannot_use_fails_in_one_line(
    tmp_path: Path,
    run_cli: Callable[..., Result],
    make_url: Callable[[Path], str],
    complaint: str,
) -> None:
    url = make_url(tmp_path)
    if url.startswith("sqlite"):
        (tmp_path / "empty.sqlite").touch()

    result = run_cli("scheduler", "--db", url)

    assert result.exit_code == 1
    [line] = result.stderr.splitlines()
    assert line.startswith("runrecord: error: ") and complaint in line


def test_sigterm_stops_the_scheduler_command_cleanly(sqlite_installation: str) -> None:
    environment = {**os.environ, "RUNRECORD_SCHEDULER_LEASE_SECONDS": "3", "PYTHONPATH": str(REPO_ROOT)}
    command = [
        sys.executable,
        "-c",
        "from jobs.cli import main; main()",
        "scheduler",
        "--db",
        sqlite_installation,
    ]
    process = subprocess.Popen(command, env=environment, stderr=subprocess.PIPE, text=True, cwd=REPO_ROOT)
    engine = make_engine(sqlite_installation)
    try:
        lease = Lease(engine, LEASE_NAME, seconds=3, holder="observer")
        assert eventually(lambda: (s := lease.state()) is not None and f":{process.pid}:" in s.holder)

        process.send_signal(signal.SIGTERM)
        code = process.wait(timeout=WAIT_S)
        state = lease.state()
    finally:
        if process.poll() is None:
            process.kill()
        engine.dispose()
    _, stderr = process.communicate()

    assert code == 0, stderr
    assert "SIGTERM received" in stderr and "Traceback" not in stderr
    assert state is not None and state.expires_at_ms == 0


# --- the APScheduler loop outlives a failing job store ------------------------------------------------------


class StoreThatFailsOnce(MemoryJobStore):
    """A job store whose database goes away once, between handing out due jobs and the next wakeup."""

    def __init__(self) -> None:
        super().__init__()
        self.failed = False

    def get_next_run_time(self) -> datetime | None:
        if not self.failed:
            self.failed = True
            raise OperationalError("SELECT next_run_time", {}, Exception("server closed the connection"))
        return super().get_next_run_time()  # type: ignore[no-any-return]


RUNS: list[float] = []


def count_a_run() -> None:
    RUNS.append(time.monotonic())


def test_the_scheduler_loop_survives_its_job_store_failing() -> None:
    RUNS.clear()
    scheduler = _SteadyScheduler(jobstores={"default": StoreThatFailsOnce()}, jobstore_retry_interval=0.1)
    scheduler.add_job(count_a_run, "interval", seconds=0.2)
    scheduler.start()
    try:
        survived = eventually(lambda: len(RUNS) >= 3, timeout=5)
    finally:
        scheduler.shutdown(wait=True)

    assert survived


def test_a_job_run_the_database_could_not_take_is_recorded_as_the_scheduler_stops(
    sqlite_installation: str,
) -> None:
    engine = make_engine(sqlite_installation)
    with engine.begin() as connection:
        connection.exec_driver_sql(f"ALTER TABLE {job_run.name} RENAME TO away")
    while_away = job_log.execute(engine, "watch-conversations", lambda: JobResult(1, 0, "while away"))
    with engine.begin() as connection:
        connection.exec_driver_sql(f"ALTER TABLE away RENAME TO {job_run.name}")
    config = config_of(JobSpec("watch-conversations", "jobs.watch:run_job", NEVER))

    with beside(sqlite_installation, config) as runner:
        held = runner.running.wait(WAIT_S)

    assert held and while_away.status is Status.OK
    assert [(run["status"], run["message"]) for run in finished_runs(engine)] == [("ok", "while away")]
    engine.dispose()
