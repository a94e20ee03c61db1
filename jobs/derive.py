"""`runrecord derive-outcomes`: the observed outcome of every AI write and run, once its window has closed.

Set-based, in the database (DESIGN.md, "The data path"): the write targets of the events added since the last
run are read into our own table (adapters.write_targets), then the due runs are derived a batch at a time,
each batch one transaction of `INSERT … SELECT` statements (adapters.derive_batch) whose rules are compiled
from core.outcomes' decision tables (adapters.decision). core.classification.classify_writes stays the
reference: the differential tests (tests/db/derive_reference.py) and the derivation benchmark hold the two
together.

Final and safe to repeat (003_…, "derived once … and the answer is final"):

* a run already answered is excluded by the due query itself, so a crash between batches loses nothing and
  the next run continues where this one stopped;
* every row is inserted or ignored on its unique key, never updated. Our run row goes first: its unique key
  serialises two processes deriving the same run, and only the transaction that really inserted it writes
  the run's write rows and its tx_nrllm_call_outcome row (which has no unique key upstream), so each row
  exists exactly once however many processes run;
* a batch a concurrent transaction was in the way of (deadlock, lock timeout, busy SQLite file) is run
  again from the same keyset position.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, TypeVar

from sqlalchemy import Connection, Engine
from sqlalchemy.exc import DBAPIError

from adapters import clock, schema, settings
from adapters import derive_batch as batch
from adapters import derive_scratch as scratch
from adapters import history as history_queries
from adapters import write_targets as targets
from adapters.database import RunrecordError, job_engine, reported
from adapters.dialect import session as sqlsession
from core.formatting import window_days
from core.outcomes import PRECEDENCE, RULE_VERSION, EditScope, UnknownReason
from core.window import check_window, window_cutoff
from jobs.job_log import JobResult, stop_requested
from jobs.phases import PhaseTimer
from jobs.schema_setup import require_head

# Runs per batch (one transaction) at most: a batch's temporary rows stay bounded and a transaction short. The
# default is the dialect's (adapters.dialect.session.batch_runs).
MAX_BATCH_SIZE = 50_000
# How often a batch is tried again when a concurrent transaction was in the way, and how long to wait.
ATTEMPTS = 5
RETRY_PAUSE_S = 0.2

_T = TypeVar("_T")

Progress = Callable[[int, int], None]  # (runs done, runs due): after the count and after every batch


@dataclass
class Summary:
    """What one job run did."""

    now: int
    window_s: int
    runs_by_outcome: Counter[str] = field(default_factory=Counter)
    writes_by_outcome: Counter[str] = field(default_factory=Counter)
    unknown_by_reason: Counter[str] = field(default_factory=Counter)
    edit_scope: Counter[str] = field(default_factory=Counter)
    runs_due: int = 0  # counted before the first batch
    runs_inside_window: int = 0  # runs with writes whose last write's window has not closed yet
    runs_without_uuid: int = 0  # reported and skipped: no correlation id to attach an outcome to
    runs_unfinished: int = 0  # counted before the first batch: past the window of their writes so far, but
    # still running or waiting (derived once they end)
    runs_unknown_status: int = 0  # of those: a status nr-llm does not write, so never one that has ended
    runs_derived_elsewhere: int = 0  # a concurrent process inserted their rows first
    mirrored: int = 0  # observed rows written to tx_nrllm_call_outcome
    not_mirrored: int = 0  # the correlation id already had an observed row there (nr-llm's own deriver)
    batches: int = 0
    seconds: float = 0.0
    stopped: bool = False  # asked to stop (SIGTERM): returned after a batch, the rest is for the next run
    phases: dict[str, float] = field(default_factory=dict)  # seconds spent in each part of the job

    @property
    def runs_derived(self) -> int:
        return sum(self.runs_by_outcome.values())

    @property
    def writes_derived(self) -> int:
        return sum(self.writes_by_outcome.values())

    def to_json(self) -> dict[str, Any]:
        """The summary as plain JSON values (for --json)."""
        outcomes = [outcome.value for outcome in reversed(PRECEDENCE)]
        return {
            "now": datetime.fromtimestamp(self.now, UTC).isoformat(),
            "window_s": self.window_s,
            "rule_version": RULE_VERSION,
            "runs": {
                "derived": self.runs_derived,
                "by_outcome": {name: self.runs_by_outcome[name] for name in outcomes},
                "inside_window": self.runs_inside_window,
                "without_uuid": self.runs_without_uuid,
                "unfinished": self.runs_unfinished,
                "unknown_status": self.runs_unknown_status,
                "derived_elsewhere": self.runs_derived_elsewhere,
            },
            "writes": {
                "derived": self.writes_derived,
                "by_outcome": {name: self.writes_by_outcome[name] for name in outcomes},
                "unknown_by_reason": {r.value: self.unknown_by_reason[r.value] for r in UnknownReason},
                "edit_scope": {s.value: self.edit_scope[s.value] for s in EditScope},
            },
            "call_outcome": {"mirrored": self.mirrored, "already_observed": self.not_mirrored},
            "batches": self.batches,
            "seconds": round(self.seconds, 3),
            "phases": {name: round(seconds, 3) for name, seconds in self.phases.items()},
        }


def derive_outcomes(
    engine: Engine,
    *,
    now: int,
    window_s: int,
    batch_size: int | None = None,
    progress: Progress | None = None,
    stop: Callable[[], bool] | None = None,
) -> Summary:
    """Derive every run whose last write's window has closed by `now` and that has no outcome yet.

    `stop` is asked between batches; when it says so, the job returns after the batch in hand (what is
    committed stays done, and the next run carries on from there). `batch_size`: runs per batch, by default
    the dialect's (adapters.dialect.session.batch_runs)."""
    check_window(window_s)
    if batch_size is None:
        batch_size = sqlsession.batch_runs(engine.dialect.name)
    if not 1 <= batch_size <= MAX_BATCH_SIZE:
        raise RunrecordError(f"the batch size must be from 1 to {MAX_BATCH_SIZE:,}, not {batch_size:,}")
    started = time.perf_counter()
    summary = Summary(now=now, window_s=window_s)
    timer = PhaseTimer(summary.phases)
    require_head(engine, "derive-outcomes")
    # DESIGN.md rule 1 (core.outcomes.is_due): due once the window of the last write has closed.
    cutoff = window_cutoff(now, window_s)
    options = sqlsession.job_execution_options(engine.dialect.name)
    with reported(engine, "deriving outcomes"), engine.connect().execution_options(**options) as connection:
        sqlsession.lock_on_begin(connection)
        try:
            with connection.begin():
                sqlsession.begin_job_session(connection)
                sqlsession.create_temporary_tables(connection, scratch.BATCH_TABLES)
                catalog = history_queries.TableCatalog(connection)
            _require_inputs(catalog)
            timer("setup")
            _retried(connection, lambda: targets.extend_targets(connection))
            timer("extend")
            with connection.begin():
                oldest = history_queries.oldest_retained_tstamp(connection)
                counts = targets.pending(connection, cutoff=cutoff)
            timer("pending")
            summary.runs_due = counts.due
            summary.runs_inside_window = counts.inside_window
            summary.runs_unfinished = counts.unfinished
            summary.runs_unknown_status = counts.unknown_status
            if progress is not None:
                progress(0, counts.due)
            plan = batch.BatchSettings(now, window_s, cutoff, oldest, batch_size)
            after = 0
            done = 0
            while True:
                result = _run_batch(connection, plan, catalog, after, timer)
                if result.last_run_uid is None:
                    break
                plan.tables.committed()
                _count(summary, result)
                after = result.last_run_uid
                done += result.runs_in_page
                if progress is not None:
                    progress(min(done, counts.due), counts.due)
                if stop is not None and stop():
                    summary.stopped = True
                    break
                if result.runs_in_page < plan.limit:
                    break  # a short page was the last: the next would only find none
        finally:
            _drop_quietly(connection)
    summary.seconds = time.perf_counter() - started
    return summary


# The installation's tables every derivation reads (a record table is looked up by the name a write gives).
INPUT_TABLES = (
    schema.sys_history.name,
    schema.agentrun.name,
    schema.agentrun_event.name,
    schema.call_outcome.name,
)


def _require_inputs(catalog: history_queries.TableCatalog) -> None:
    """Stop before anything is written when the database lacks a table of the installation the job reads."""
    missing = [name for name in INPUT_TABLES if name not in catalog]
    if missing:
        raise RunrecordError(
            f"the database lacks the installation's {'table' if len(missing) == 1 else 'tables'} "
            f"{', '.join(missing)}: is it the installation's database? (nothing was derived)"
        )


def _run_batch(
    connection: Connection,
    plan: batch.BatchSettings,
    catalog: history_queries.TableCatalog,
    after: int,
    timer: PhaseTimer,
) -> batch.BatchResult:
    """One batch in one transaction, tried again when only a concurrent transaction was in the way."""
    result = _retried(connection, lambda: batch.derive_batch(connection, plan, catalog, after, timer))
    timer("commit")
    return result


def _retried(connection: Connection, work: Callable[[], _T]) -> _T:
    """`work` in one transaction, tried again from the start when only a concurrent transaction was in the
    way (a deadlock, a lock timeout, a busy SQLite file), or at once with its tables on disk when one it kept
    in memory was full (MariaDB): everything it writes is insert-or-ignore or recomputed, so a second attempt
    gives the same rows."""
    for attempt in range(1, ATTEMPTS + 1):
        try:
            with connection.begin():
                return work()
        except DBAPIError as error:
            spilled = sqlsession.spill_to_disk(connection, error)
            if attempt == ATTEMPTS or not (spilled or sqlsession.is_retryable(error)):
                raise
            if not spilled:
                time.sleep(RETRY_PAUSE_S * attempt)
    raise AssertionError("unreachable: the last attempt returns or raises")


def _count(summary: Summary, result: batch.BatchResult) -> None:
    summary.batches += 1
    summary.runs_without_uuid += result.runs_without_uuid
    summary.runs_derived_elsewhere += result.runs_derivable - result.runs_mine
    summary.mirrored += result.mirrored
    summary.not_mirrored += result.runs_mine - result.mirrored
    summary.runs_by_outcome.update(result.runs_by_outcome or {})
    for (outcome, reason, scope), writes in (result.writes or {}).items():
        summary.writes_by_outcome[outcome] += writes
        if reason:
            summary.unknown_by_reason[reason] += writes
        if scope:
            summary.edit_scope[scope] += writes


def _drop_quietly(connection: Connection) -> None:
    try:
        with connection.begin():
            sqlsession.drop_temporary_tables(connection, scratch.BATCH_TABLES)
            sqlsession.end_job_session(connection)
    except DBAPIError:
        # The connection itself failed: its session, and the temporary tables with it, is gone anyway.
        connection.invalidate()


def summary_lines(summary: Summary) -> list[str]:
    """The summary as the lines the command prints."""

    def counts(counter: Counter[str], names: Iterable[str]) -> str:
        return ", ".join(f"{name} {counter[name]:,}" for name in names)

    outcomes = [outcome.value for outcome in reversed(PRECEDENCE)]
    when = datetime.fromtimestamp(summary.now, UTC).isoformat()
    lines = [
        f"derived {summary.runs_derived:,} runs and {summary.writes_derived:,} writes as of {when}, "
        f"window {window_days(summary.window_s)}, rules {RULE_VERSION}, "
        f"in {summary.seconds:.1f} s ({summary.batches:,} batches)",
        f"  runs:   {counts(summary.runs_by_outcome, outcomes)}",
        f"  writes: {counts(summary.writes_by_outcome, outcomes)}",
        f"  unknown writes by reason: {counts(summary.unknown_by_reason, [r.value for r in UnknownReason])}",
        f"  edited writes by scope: {counts(summary.edit_scope, [s.value for s in EditScope])}",
        f"  runs still inside their window: {summary.runs_inside_window:,}",
        f"  runs skipped without uuid: {summary.runs_without_uuid:,}",
        f"  runs not finished yet (running or waiting; derived once they end): {summary.runs_unfinished:,}"
        + _unknown_status_clause(summary),
    ]
    if summary.runs_derived_elsewhere:
        lines.append(f"  runs derived meanwhile by another process: {summary.runs_derived_elsewhere:,}")
    lines.append(
        f"  tx_nrllm_call_outcome: {summary.mirrored:,} observed rows written"
        + (
            f", {summary.not_mirrored:,} left to an observed row already there"
            if summary.not_mirrored
            else ""
        )
    )
    return lines


def _unknown_status_clause(summary: Summary) -> str:
    """The runs that wait for ever: their status is none nr-llm writes (DOMAIN.md), so it never ends."""
    if not summary.runs_unknown_status:
        return ""
    return (
        f" ({summary.runs_unknown_status:,} of them with a status nr-llm does not write: never derived "
        "while it stays)"
    )


def run_job(db_url: str, *, now: datetime | None = None) -> JobResult:
    """The job callable (contract: jobs.job_log): derive what is due as of `now`, stopping when asked."""
    with job_engine(db_url) as engine:
        summary = derive_outcomes(
            engine,
            now=int((now or clock.now()).timestamp()),
            window_s=settings.window_seconds(),
            stop=stop_requested,
        )
    return result_of(summary)


def result_of(summary: Summary) -> JobResult:
    """The job's result for tx_runrecord_job_run: the writes derived, and one line of what was done."""
    message = (
        f"{summary.runs_derived:,} runs and {summary.writes_derived:,} writes derived, "
        f"{summary.runs_inside_window:,} runs still inside their window"
        + (f", {summary.runs_unfinished:,} not finished yet" if summary.runs_unfinished else "")
        + _unknown_status_clause(summary)
        + ("; stopped after a batch" if summary.stopped else "")
    )
    return JobResult(processed=summary.writes_derived, failed=0, message=message)
