"""`runrecord scheduler`: APScheduler 3 connecting triggers to the job callables, one scheduler per database.

Wiring only: what a job does is its module's (the contract is in jobs.job_log's docstring); how an execution
is recorded is jobs.job_log's; the lease is adapters.lease's.

* `JOBS` names every job's callable by its textual reference. APScheduler's job store (our table
  tx_runrecord_apscheduler_jobs, in the same database) keeps `jobs.job_log:run_scheduled` with plain arguments
  (job name, reference, the database URL without its password), and the reference is imported only when the
  job runs: a
  module that is missing or broken fails that job, recorded and logged, not the scheduler.
* Schedules come from the settings: a crontab expression per job in the scheduler's time zone (read as
  crontab reads it: jobs.crontab), or
  "after derive-outcomes" — measure-rates by default runs as soon as derive-outcomes has finished without
  an error, so that the rates always see the night's outcomes and never a derivation half done.
* Every job: coalesce (missed runs become one), one instance at a time, a misfire grace time.
* Only the holder of the lease "scheduler" runs jobs; another process waits, polling, and takes over once
  the lease is released or has expired. Losing the lease pauses the jobs until it is held again. Taking it
  marks the job runs of processes that are gone interrupted (adapters.job_liveness): a former holder that was
  killed left its runs running. Taking over alone proves nothing (a holder that lost the lease goes on with
  the job in hand), so each row's own process and heartbeat decide.
* SIGTERM or SIGINT: running jobs are asked to stop after their batch, the scheduler waits for them, the
  lease is released, and the process exits 0.
"""

from __future__ import annotations

import logging
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from types import FrameType
from typing import Any

from apscheduler.events import EVENT_JOB_EXECUTED, JobExecutionEvent
from apscheduler.executors.pool import ThreadPoolExecutor
from apscheduler.jobstores.sqlalchemy import SQLAlchemyJobStore
from apscheduler.schedulers.background import BackgroundScheduler
from apscheduler.schedulers.base import STATE_STOPPED
from apscheduler.triggers.cron import CronTrigger
from apscheduler.triggers.date import DateTrigger
from sqlalchemy import Engine
from sqlalchemy.exc import SQLAlchemyError

from adapters import job_liveness, settings
from adapters.database import RunrecordError, describe, make_engine, one_line
from adapters.job_log import TABLE as JOB_RUN_TABLE
from adapters.lease import Lease, holder_id
from adapters.schema import apscheduler_jobs
from jobs import job_log
from jobs.crontab import crontab_trigger
from jobs.scheduler_config import JobSpec, SchedulerConfig, schedule_of

logger = logging.getLogger(__name__)
logger.addHandler(logging.NullHandler())  # silent unless the application configures logging

RUN_LOGGED = "jobs.job_log:run_scheduled"
LEASE_NAME = "scheduler"
WORKERS = 3  # one per job: the three may overlap, none with itself (max_instances=1)
MIN_LEASE_S = settings.MIN_LEASE_S  # renewed every third of it, so not more than once a second


# --- APScheduler --------------------------------------------------------------------------------------------


class _SteadyScheduler(BackgroundScheduler):
    """A BackgroundScheduler whose loop survives its job store failing.

    APScheduler 3 retries a failing lookup of due jobs, but a database error a moment later (updating a job's
    next run time, reading the next wakeup) ends its thread, and with it every later run. Here such an error
    is logged in one line and the loop tries again after the job store retry interval.
    """

    def _process_jobs(self) -> float | None:
        if self.state == STATE_STOPPED:
            # APScheduler's loop looks for due jobs once more after shutdown: a job due then would be handed
            # to the closed executor, fail to start, and have its next run time moved on, its run lost.
            return None
        try:
            return super()._process_jobs()  # type: ignore[no-any-return]
        except Exception as error:
            logger.warning(
                "scheduler: job store: %s; trying again in %s s",
                one_line(error),
                self.jobstore_retry_interval,
            )
            return float(self.jobstore_retry_interval)


class _OneLine(logging.Filter):
    """APScheduler's own log lines on one line (a database error's text spans several), an exception it logs
    with its traceback named by its type and message instead."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if record.exc_info and record.exc_info[1] is not None:
            error = record.exc_info[1]
            message = f"{message}: {type(error).__name__}: {one_line(error)}"
        record.msg, record.args = " ".join(message.split()), None
        record.exc_info, record.exc_text = None, None
        return True


APSCHEDULER_LOGGERS = (
    "apscheduler.scheduler",
    "apscheduler.executors.default",
    "apscheduler.jobstores.default",
)


def build_scheduler(engine: Engine, config: SchedulerConfig) -> BackgroundScheduler:
    """An APScheduler (not started) with its job store in the database and the job defaults."""
    for name in APSCHEDULER_LOGGERS:
        target = logging.getLogger(name)
        if not any(isinstance(existing, _OneLine) for existing in target.filters):
            target.addFilter(_OneLine())
    return _SteadyScheduler(
        jobstores={"default": SQLAlchemyJobStore(engine=engine, tablename=apscheduler_jobs.name)},
        executors={"default": ThreadPoolExecutor(WORKERS)},
        job_defaults={"coalesce": True, "max_instances": 1, "misfire_grace_time": config.misfire_grace_s},
        timezone=config.timezone,
    )


def register(scheduler: BackgroundScheduler, db_url: str, config: SchedulerConfig) -> None:
    """Make the job store hold exactly the configured jobs.

    A stored job that is configured the same way keeps its next run time, so that a run missed while no
    scheduler ran still starts within the misfire grace time; a changed one is replaced, one no longer
    configured removed. A pending "after" run stays.
    """
    configured = {spec.name: spec for spec in config.jobs}
    for job in scheduler.get_jobs():
        spec = configured.get(job.id)
        pending_after = (
            spec is not None
            and spec.after is not None
            and isinstance(job.trigger, DateTrigger)
            and tuple(job.args) == _args(spec, db_url)
        )
        if spec is None or (spec.after is not None and not pending_after):
            logger.info("scheduler: removing the stored job %s: not configured so", job.id)
            scheduler.remove_job(job.id)
    for spec in config.jobs:
        if spec.after is not None:
            continue
        trigger = crontab_trigger(spec.schedule, config.timezone, named=schedule_of(spec.name))
        stored = scheduler.get_job(spec.name)
        if stored is not None and _same(stored, trigger, _args(spec, db_url), config):
            continue
        scheduler.add_job(
            RUN_LOGGED,
            trigger,
            args=_args(spec, db_url),
            id=spec.name,
            name=spec.name,
            replace_existing=True,
        )


def run_after(scheduler: BackgroundScheduler, spec: JobSpec, db_url: str, config: SchedulerConfig) -> None:
    """Run the job once, now (a follower, or a job started by hand)."""
    scheduler.add_job(
        RUN_LOGGED,
        DateTrigger(datetime.now(config.timezone), timezone=config.timezone),
        args=_args(spec, db_url),
        id=spec.name,
        name=spec.name,
        replace_existing=True,
    )


def _args(spec: JobSpec, db_url: str) -> tuple[str, str, str]:
    # The job store pickles the arguments into the installation's database: the URL goes there without its
    # password, and job_log.run_scheduled finds the full URL this process registered under that form.
    return (spec.name, spec.target, describe(db_url))


def _same(stored: Any, trigger: CronTrigger, args: tuple[str, ...], config: SchedulerConfig) -> bool:
    return bool(
        stored.func_ref == RUN_LOGGED
        and tuple(stored.args) == args
        and repr(stored.trigger) == repr(trigger)
        and stored.misfire_grace_time == config.misfire_grace_s
        and stored.coalesce is True
        and stored.max_instances == 1
    )


# --- one scheduler per database -----------------------------------------------------------------------------


class Runner:
    """Waits for the lease, runs the jobs while it holds it, and stops cleanly when asked."""

    def __init__(
        self,
        db_url: str,
        config: SchedulerConfig,
        *,
        holder: str | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.db_url = db_url
        self.config = config
        self.holder = holder or holder_id()
        self.clock = clock
        self.running = threading.Event()  # set while this process holds the lease and runs jobs
        self.waiting = threading.Event()  # set while another process holds the lease
        self.scheduler: BackgroundScheduler | None = None

    def run(self, stop: threading.Event) -> None:
        """Run until `stop` is set; a database that is not at our newest revision fails at once."""
        engine = make_engine(self.db_url)
        job_log.use_database(self.db_url)
        try:
            _check_revision(engine)
            logger.info("scheduler: started on %s", describe(engine.url))
            lease = Lease(
                engine, LEASE_NAME, seconds=self.config.lease_s, holder=self.holder, clock=self.clock
            )
            try:
                while self._wait_for_lease(lease, stop):
                    self._run_while_held(engine, lease, stop)
            finally:
                self._shut_down(engine, lease)
        finally:
            engine.dispose()

    def run_now(self, name: str) -> None:
        """Start a configured job now, as its trigger would."""
        if self.scheduler is None or not self.running.is_set():
            raise RunrecordError("the scheduler is not running jobs: it does not hold the lease")
        spec = self.config.job(name)
        if spec.after is None:
            self.scheduler.modify_job(name, next_run_time=datetime.now(self.config.timezone))
        else:
            run_after(self.scheduler, spec, self.db_url, self.config)

    def _wait_for_lease(self, lease: Lease, stop: threading.Event) -> bool:
        announced: str | None = None
        while not stop.is_set():
            try:
                if lease.take():
                    self.waiting.clear()
                    logger.info("scheduler: holding the lease as %s", self.holder)
                    return True
                state = lease.state()
            except SQLAlchemyError as error:
                logger.warning("scheduler: cannot take the lease: database: %s", one_line(error))
            else:
                if state is not None and state.holder != announced:
                    until = datetime.fromtimestamp(state.expires_at_ms / 1000, self.config.timezone)
                    logger.info(
                        "scheduler: waiting, the lease is held by %s (until %s unless renewed)",
                        state.holder,
                        until.isoformat(timespec="seconds"),
                    )
                    announced = state.holder
            self.waiting.set()
            stop.wait(self.config.renew_every_s)
        return False

    def _run_while_held(self, engine: Engine, lease: Lease, stop: threading.Event) -> None:
        try:
            job_liveness.mark_interrupted(engine)
        except SQLAlchemyError as error:
            logger.warning("scheduler: cannot look for interrupted job runs: database: %s", one_line(error))
        try:
            self._start_jobs(engine)
        except SQLAlchemyError as error:
            logger.warning("scheduler: cannot start the jobs: database: %s", one_line(error))
            stop.wait(self.config.renew_every_s)
            return
        renewed_at, failing = self.clock(), False
        while not stop.wait(self.config.renew_every_s):
            try:
                held = lease.renew()
            except SQLAlchemyError as error:
                logger.warning("scheduler: cannot renew the lease: database: %s", one_line(error))
                failing = True
                if self.clock() - renewed_at < self.config.lease_s:
                    continue  # until it runs out nobody else can take it; after that somebody may have
                held = False
            if held:
                renewed_at = self.clock()
                if failing:
                    logger.info("scheduler: the lease is renewed again")
                    failing = False
                continue
            logger.warning("scheduler: the lease is lost; no job starts until it is held again")
            self._pause()
            return

    def _start_jobs(self, engine: Engine) -> None:
        if self.scheduler is None:
            self.scheduler = build_scheduler(engine, self.config)
            self.scheduler.add_listener(self._on_executed, EVENT_JOB_EXECUTED)
            self.scheduler.start(paused=True)
        register(self.scheduler, self.db_url, self.config)
        self.scheduler.resume()
        self.running.set()
        for job in self.scheduler.get_jobs():
            logger.info("scheduler: %s, next run %s", job.id, job.next_run_time)
        for spec in self.config.jobs:
            if spec.after is not None:
                logger.info("scheduler: %s, %s", spec.name, spec.schedule)

    def _pause(self) -> None:
        self.running.clear()
        if self.scheduler is not None:
            self.scheduler.pause()

    def _on_executed(self, event: JobExecutionEvent) -> None:
        followers = [spec for spec in self.config.jobs if spec.after == event.job_id]
        execution = event.retval
        if not followers or self.scheduler is None or not self.running.is_set():
            return
        if not isinstance(execution, job_log.Execution) or execution.status is not job_log.Status.OK:
            names = ", ".join(spec.name for spec in followers)
            logger.warning("scheduler: %s not started: %s did not finish ok", names, event.job_id)
            return
        for spec in followers:
            try:
                run_after(self.scheduler, spec, self.db_url, self.config)
            except SQLAlchemyError as error:
                logger.error("scheduler: cannot start %s: database: %s", spec.name, one_line(error))

    def _keep_lease(self, lease: Lease, finished: threading.Event) -> None:
        """Renew the lease at once, then every third of its length, until `finished` is set."""
        while not finished.is_set():
            try:
                if not lease.renew():
                    logger.warning("scheduler: the lease is lost while the running jobs finish their batch")
                    return
            except SQLAlchemyError as error:
                logger.warning("scheduler: cannot renew the lease: database: %s", one_line(error))
            finished.wait(self.config.renew_every_s)

    def _shut_down(self, engine: Engine, lease: Lease) -> None:
        self.running.clear()
        self.waiting.clear()
        if self.scheduler is not None:
            logger.info("scheduler: stopping; running jobs finish their batch")
            job_log.request_stop()
            # The lease is renewed until the running jobs have finished their batch: a batch longer than the
            # lease would otherwise let another scheduler start jobs beside them.
            finished = threading.Event()
            keeper = threading.Thread(
                target=self._keep_lease, args=(lease, finished), name="scheduler-lease", daemon=True
            )
            keeper.start()
            try:
                self.scheduler.shutdown(wait=True)
            finally:
                finished.set()
                keeper.join()
                job_log.clear_stop()
            self.scheduler = None
        try:
            self._record_undelivered(engine)
        except Exception as error:  # the lease is released all the same
            logger.warning(
                "scheduler: cannot record the executions kept in memory: %s", job_log.failure_line(error)
            )
        try:
            lease.release()
        except SQLAlchemyError as error:
            logger.warning("scheduler: cannot release the lease (it expires by itself): %s", one_line(error))
        else:
            logger.info("scheduler: stopped")

    @staticmethod
    def _record_undelivered(engine: Engine) -> None:
        """Record the executions the database could not take as they ended: no later one of ours will."""
        waiting, why = job_log.deliver_undelivered(engine)
        if waiting:
            logger.warning(
                "scheduler: %s of a job not recorded in %s, and lost: %s",
                "an execution" if waiting == 1 else f"{waiting} executions",
                JOB_RUN_TABLE,
                why,
            )


def _check_revision(engine: Engine) -> None:
    """The jobs' own check (jobs.schema_setup.require_head), once as the scheduler starts."""
    from jobs.schema_setup import require_head

    require_head(engine, "the scheduler")


def run_in_foreground(db_url: str, config: SchedulerConfig) -> None:
    """Run the scheduler until SIGTERM or SIGINT (Ctrl-C), then stop cleanly."""
    stop = threading.Event()

    logger.info("scheduler: SIGTERM or Ctrl-C stops it")

    def request_stop(signum: int, _frame: FrameType | None) -> None:
        logger.info("scheduler: %s received", signal.Signals(signum).name)
        stop.set()

    previous = {sig: signal.signal(sig, request_stop) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        Runner(db_url, config).run(stop)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


@contextmanager
def beside(db_url: str, config: SchedulerConfig) -> Iterator[Runner]:
    """The scheduler in a thread of this process while the block runs (`runrecord demo`)."""
    stop = threading.Event()
    runner = Runner(db_url, config)

    def run() -> None:
        try:
            runner.run(stop)
        except RunrecordError as error:
            logger.error("scheduler: %s", error)

    thread = threading.Thread(target=run, name="runrecord-scheduler")
    thread.start()
    try:
        yield runner
    finally:
        stop.set()
        thread.join()
