"""Every job execution, recorded in tx_runrecord_job_run; and the contract every job callable keeps.

The job-callable contract
-------------------------

A job the scheduler runs (derive-outcomes, measure-rates, watch-conversations, …) is one module-level
function, named in `jobs.scheduler_config.JOBS` by its textual reference ("jobs.derive:run_job"):

    def run_job(db_url: str, *, now: datetime | None = None) -> JobResult

* Plain arguments only: APScheduler's persistent job store keeps the reference and the arguments, never a
  live object. The job runs on `with adapters.database.job_engine(db_url) as engine:` (one engine per URL
  in the process, which keeps the statements it compiled from one night to the next; its connections are
  closed when no job runs on it).
* `now` is the time the job acts at (aware; None means the current time in UTC); the CLI passes `--now`.
  Other options come from `adapters.settings` inside the job: it is an entry point, the edge that reads them.
* It returns `JobResult(processed, failed, message)`: how many items it handled, how many of those it could
  not (counted; the batch goes on), and one line that says what it did. No be_user, name or editor id.
* It raises when the job as a whole fails (the database gone, a bug). It need not catch anything to
  protect the scheduler: `run_logged` records the failure in one line and returns.
* It works in batches, one transaction each, so that what is committed stays done and the next run
  carries on from there; between batches it asks `stop_requested()` and, when the scheduler is stopping
  (SIGTERM), returns after the batch in hand with a JobResult saying so.
* It does not write tx_runrecord_job_run: `run_logged` (scheduler) and `execute` (CLI) do, around it.

Recording
---------

`execute` writes a row with status "running" when the job starts and completes it with "ok" or "failed",
the counts, the message and the duration. When the database cannot take a row (it went away), the one log
line says so and the row is kept in memory and written before the next execution in this process records
its own, or as the scheduler stops, so that a short outage loses no execution from the log.

The running row names its process and carries a heartbeat the process renews while the job runs; before
it records its own row, every execution marks the rows of processes that are gone "interrupted"
(adapters.job_liveness, core.job_runs), so that a job killed mid-run is not shown as running for ever.
"""

from __future__ import annotations

import importlib
import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import Engine
from sqlalchemy.exc import SQLAlchemyError

from adapters import clock, job_liveness
from adapters import job_log as job_rows
from adapters.database import RunrecordError, describe, make_engine, missing_table_hint, one_line
from core import job_runs

logger = logging.getLogger(__name__)
logger.addHandler(logging.NullHandler())  # silent unless the application configures logging

MAX_MESSAGE_CHARS = 1000  # one line, readable in a table cell; a driver's message can be longer
MAX_UNDELIVERED = 100  # rows kept in memory while the database is away; beyond that the oldest are dropped


@dataclass(frozen=True)
class JobResult:
    """What a job did: items handled, items of those that failed, and one line about it."""

    processed: int
    failed: int
    message: str


class Status(StrEnum):
    RUNNING = job_runs.RUNNING
    OK = job_runs.OK  # the job returned (its `failed` count may still be above 0)
    FAILED = job_runs.FAILED  # the job raised, or could not be loaded
    INTERRUPTED = job_runs.INTERRUPTED  # its process ended while it ran (written by a later run)


@dataclass(frozen=True)
class Execution:
    """One execution of a job as recorded."""

    job: str
    status: Status
    result: JobResult
    duration_ms: int


class JobLoadError(RunrecordError):
    """A job's textual reference names no callable that can be imported."""


# --- stopping between batches -------------------------------------------------------------------------------

_STOP = threading.Event()


def stop_requested() -> bool:
    """True while the scheduler is stopping: a job returns after the batch in hand."""
    return _STOP.is_set()


def request_stop() -> None:
    """Ask running jobs to return after their current batch (the scheduler does, on SIGTERM)."""
    _STOP.set()


def clear_stop() -> None:
    """Let jobs run to the end again (once the stopping scheduler has finished)."""
    _STOP.clear()


# --- running a job ------------------------------------------------------------------------------------------


def resolve(target: str) -> Callable[..., JobResult]:
    """The callable a textual reference "package.module:function" names; JobLoadError in one line if none."""
    module_name, _, attribute = target.partition(":")
    if not module_name or not attribute:
        raise JobLoadError(f"{target!r} is not a job reference of the form module:function")
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise JobLoadError(f"cannot load {target}: {one_line(error)}") from error
    function = getattr(module, attribute, None)
    if not callable(function):
        raise JobLoadError(f"cannot load {target}: {module_name} has no function {attribute}")
    return function  # type: ignore[no-any-return]


# The database URLs of this process's schedulers, by their form without a password: the job store keeps only
# that form, so that no password is written into the installation's database.
_DATABASES: dict[str, str] = {}


def use_database(db_url: str) -> str:
    """Register a scheduler's database URL; returns the password-less form its stored jobs name."""
    stored = describe(db_url)
    _DATABASES[stored] = db_url
    return stored


def run_scheduled(job: str, target: str, database: str, *, now: datetime | None = None) -> Execution:
    """The callable the scheduler's job store keeps: run_logged on the database this process registered."""
    return run_logged(job, target, _DATABASES.get(database, database), now=now)


def run_logged(job: str, target: str, db_url: str, *, now: datetime | None = None) -> Execution:
    """The scheduler's job callable: load `target` lazily, run it on db_url, record the execution there.

    A job that cannot be loaded or fails is recorded as failed and logged in one line; this never raises
    (an Exception), so the scheduler goes on.
    """
    try:
        engine = make_engine(db_url)
    except RunrecordError as error:
        return _unrecordable(job, " ".join(str(error).split()))
    try:
        return execute(engine, job, lambda: resolve(target)(db_url, now=now))
    finally:
        engine.dispose()


def execute(engine: Engine, job: str, work: Callable[[], JobResult]) -> Execution:
    """Run work() as an execution of `job`, recorded in the engine's tx_runrecord_job_run."""
    try:
        started = clock.unix()
    except RunrecordError as error:  # a malformed RUNRECORD_NOW: no job runs, and nothing is recorded
        execution = Execution(job, Status.FAILED, JobResult(0, 0, _clip(one_line(error))), 0)
        _log(execution, "the clock is not readable")
        return execution
    not_recorded = _deliver_undelivered(engine)
    began = time.monotonic()
    uid: int | None = None
    if not_recorded is None:
        _mark_interrupted(engine)
        try:
            uid = _start(engine, job, started)
        except SQLAlchemyError as error:
            not_recorded = f"database: {one_line(error)}"
    with nullcontext() if uid is None else job_liveness.heartbeat(engine, uid):
        try:
            result = work()
            if not isinstance(result, JobResult):
                raise RunrecordError(f"{job} returned {type(result).__name__}, not a JobResult")
        except Exception as error:
            status, result = Status.FAILED, JobResult(0, 0, failure_line(error))
        else:
            status = Status.OK
    execution = Execution(job, status, result, int((time.monotonic() - began) * 1000))
    row = _finished_row(execution, started, clock.unix())
    if not_recorded is None:
        try:
            _finish(engine, uid, row)
        except SQLAlchemyError as error:
            not_recorded = f"database: {one_line(error)}"
    if not_recorded is not None:
        _keep_undelivered(engine, uid, row)
    _log(execution, not_recorded)
    return execution


def failure_line(error: BaseException) -> str:
    """Why a job failed, on one line: the driver's message for a database error, runrecord's own message, and
    an error runrecord did not expect by its type and where it was raised, never by its message, which may
    quote a value the job read (`int()` of a row's text quotes the text; DESIGN.md, "Privacy")."""
    if isinstance(error, SQLAlchemyError):
        text = f"database: {one_line(error)}{missing_table_hint(error)}"
    elif isinstance(error, RunrecordError):
        text = " ".join(str(error).split())
    else:
        text = f"{type(error).__name__}{_raised_at(error)}"
    return _clip(text)


def _raised_at(error: BaseException) -> str:
    """Where the error was raised, as ` at MODULE:LINE` of the innermost frame it passed through (empty when
    it was never raised)."""
    trace = error.__traceback__
    if trace is None:
        return ""
    while trace.tb_next is not None:
        trace = trace.tb_next
    module = trace.tb_frame.f_globals.get("__name__", "?")
    return f" at {module}:{trace.tb_lineno}"


# --- the rows -----------------------------------------------------------------------------------------------


def _mark_interrupted(engine: Engine) -> None:
    """Mark the running rows of processes that are gone; a failure is logged and the job still runs."""
    try:
        job_liveness.mark_interrupted(engine)
    except SQLAlchemyError as error:
        logger.warning("cannot look for interrupted job runs: database: %s", one_line(error))


def _start(engine: Engine, job: str, started: int) -> int:
    with engine.begin() as connection:
        return job_rows.start(connection, job, started)


def _finished_row(execution: Execution, started: int, finished: int) -> dict[str, Any]:
    return {
        "job": execution.job,
        "started": started,
        "finished": finished,
        "status": execution.status.value,
        "processed": execution.result.processed,
        "failed": execution.result.failed,
        "message": _clip(execution.result.message),
        "duration_ms": execution.duration_ms,
    }


def _finish(engine: Engine, uid: int | None, row: dict[str, Any]) -> None:
    with engine.begin() as connection:
        job_rows.finish(connection, uid, row)


# Rows the database could not take, per database (the URL with its password, as the engine has it).
_UNDELIVERED: deque[tuple[str, int | None, dict[str, Any]]] = deque(maxlen=MAX_UNDELIVERED)
_UNDELIVERED_LOCK = threading.Lock()


def _key(engine: Engine) -> str:
    return engine.url.render_as_string(hide_password=False)


def _keep_undelivered(engine: Engine, uid: int | None, row: dict[str, Any]) -> None:
    with _UNDELIVERED_LOCK:
        _UNDELIVERED.append((_key(engine), uid, row))


def deliver_undelivered(engine: Engine) -> tuple[int, str | None]:
    """Write the rows this database could not take before (as a scheduler stops, when no later execution
    will): how many are still waiting, and why they are (None when none is)."""
    why = _deliver_undelivered(engine)
    key = _key(engine)
    with _UNDELIVERED_LOCK:
        return sum(entry[0] == key for entry in _UNDELIVERED), why


def _deliver_undelivered(engine: Engine) -> str | None:
    """Write the rows this database could not take before; None, or why it still cannot."""
    key = _key(engine)
    with _UNDELIVERED_LOCK:
        waiting = [entry for entry in _UNDELIVERED if entry[0] == key]
        for entry in waiting:
            try:
                _finish(engine, entry[1], entry[2])
            except SQLAlchemyError as error:
                return f"database: {one_line(error)}"
            _UNDELIVERED.remove(entry)
    return None


def _unrecordable(job: str, reason: str) -> Execution:
    execution = Execution(job, Status.FAILED, JobResult(0, 0, _clip(reason)), 0)
    _log(execution, "no database to record it in")
    return execution


def _log(execution: Execution, not_recorded: str | None) -> None:
    result = execution.result
    if execution.status is Status.OK:
        line = (
            f"{execution.job} ok in {execution.duration_ms} ms ({result.processed} processed, "
            f"{result.failed} failed): {result.message}"
        )
    else:
        line = f"{execution.job} failed after {execution.duration_ms} ms: {result.message}"
    if not_recorded is not None:
        line += f" (not recorded in {job_rows.TABLE} yet: {not_recorded})"
    if execution.status is Status.OK and not_recorded is None:
        logger.info("%s", line)
    else:
        logger.error("%s", line)


def _clip(text: str) -> str:
    return text if len(text) <= MAX_MESSAGE_CHARS else text[: MAX_MESSAGE_CHARS - 1] + "…"
