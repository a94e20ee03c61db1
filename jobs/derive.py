"""`runrecord derive-outcomes`: the observed outcome of every AI write and run, once its window has closed.

A unit of work per batch of runs: load the batch (adapters.derivation, adapters.history), classify in core
(core.outcomes: the rules live there, not here), save our rows and the observed row of tx_nrllm_call_outcome
(adapters.outcomes), commit.

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
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Connection, Engine
from sqlalchemy.exc import DBAPIError

from adapters import derivation as q
from adapters import history as history_queries
from adapters import outcomes, settings
from adapters.database import RunrecordError, make_engine, reported
from adapters.dialect import session as sqlsession
from core.outcomes import (
    PRECEDENCE,
    RULE_VERSION,
    SAME_SAVE_S,
    CallOutcome,
    EditScope,
    HistoryRow,
    Presence,
    UnknownReason,
    Write,
    WriteOutcome,
    classify_write,
    is_due,
    run_outcome,
    unreadable_target,
)
from core.run_status import is_finished
from core.time import DAY_S
from core.window import check_window, window_cutoff
from jobs.job_log import JobResult, stop_requested
from jobs.schema_setup import require_head

# Runs per batch, i.e. per transaction: large enough that the per-batch statements and the commit cost little
# per write (measured at 191,525 writes: 5,000 a batch takes 8% less CPU and 15-30% less time than 1,000,
# mostly commits), small enough that a batch's rows (some 15,000 history rows, ~20 MB) stay small and a
# transaction under a second.
BATCH_SIZE = 5_000
# A batch's lists of keys are one parameter each on SQLite and PostgreSQL, an expanded IN list on MariaDB
# (interpolated by PyMySQL, not bound by the server); this bounds their length and a transaction's work.
MAX_BATCH_SIZE = 5_000
# How often a batch is tried again when a concurrent transaction was in the way, and how long to wait.
ATTEMPTS = 5
RETRY_PAUSE_S = 0.2

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
    runs_derived_elsewhere: int = 0  # a concurrent process inserted their rows first
    mirrored: int = 0  # observed rows written to tx_nrllm_call_outcome
    not_mirrored: int = 0  # the correlation id already had an observed row there (nr-llm's own deriver)
    batches: int = 0
    seconds: float = 0.0
    stopped: bool = False  # asked to stop (SIGTERM): returned after a batch, the rest is for the next run

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
        }


@dataclass(frozen=True)
class _Derived:
    """One run's outcome and its writes', ready to save."""

    run: q.DueRun
    outcome: CallOutcome
    writes: tuple[tuple[q.TargetRow, WriteOutcome], ...]


def derive_outcomes(
    engine: Engine,
    *,
    now: int,
    window_s: int,
    batch_size: int = BATCH_SIZE,
    progress: Progress | None = None,
    stop: Callable[[], bool] | None = None,
) -> Summary:
    """Derive every run whose last write's window has closed by `now` and that has no outcome yet.

    `stop` is asked between batches; when it says so, the job returns after the batch in hand (what is
    committed stays done, and the next run carries on from there)."""
    check_window(window_s)
    if not 1 <= batch_size <= MAX_BATCH_SIZE:
        raise RunrecordError(f"the batch size must be from 1 to {MAX_BATCH_SIZE:,}, not {batch_size:,}")
    started = time.perf_counter()
    summary = Summary(now=now, window_s=window_s)
    require_head(engine, "derive-outcomes")
    # DESIGN.md rule 1 (core.outcomes.is_due): due once the window of the last write has closed.
    cutoff = window_cutoff(now, window_s)
    options = sqlsession.job_execution_options(engine.dialect.name)
    with reported(engine, "deriving outcomes"), engine.connect().execution_options(**options) as connection:
        try:
            with connection.begin():
                sqlsession.begin_job_session(connection)
                q.create_write_targets(connection)
            with connection.begin():
                oldest = history_queries.oldest_retained_tstamp(connection)
                counts = q.pending(connection, cutoff=cutoff)
                catalog = history_queries.TableCatalog(connection)
            summary.runs_due = counts.due
            summary.runs_inside_window = counts.inside_window
            summary.runs_unfinished = counts.unfinished
            if progress is not None:
                progress(0, counts.due)
            after = 0
            done = 0
            while True:
                page = _run_batch(connection, summary, after, cutoff, batch_size, oldest, catalog)
                if not page:
                    break
                summary.batches += 1
                after = page[-1].run_uid
                done += len(page)
                if progress is not None:
                    progress(min(done, counts.due), counts.due)
                if stop is not None and stop():
                    summary.stopped = True
                    break
        finally:
            _drop_quietly(connection)
    summary.seconds = time.perf_counter() - started
    return summary


def _run_batch(
    connection: Connection,
    summary: Summary,
    after: int,
    cutoff: int,
    batch_size: int,
    oldest: int | None,
    catalog: history_queries.TableCatalog,
) -> list[q.DueRun]:
    """One batch in one transaction, tried again when only a concurrent transaction was in the way."""
    for attempt in range(1, ATTEMPTS + 1):
        try:
            with connection.begin():
                page = q.due_runs(connection, after=after, cutoff=cutoff, limit=batch_size)
                derived = _derive(connection, page, summary, oldest, catalog)
                saved = _save(connection, derived, summary.now, summary.window_s)
        except DBAPIError as error:
            if attempt == ATTEMPTS or not sqlsession.is_retryable(error):
                raise
            time.sleep(RETRY_PAUSE_S * attempt)
            continue
        _count(summary, page, derived, saved)
        return page
    raise AssertionError("unreachable: the last attempt returns or raises")


def _derive(
    connection: Connection,
    page: list[q.DueRun],
    summary: Summary,
    oldest: int | None,
    catalog: history_queries.TableCatalog,
) -> list[_Derived]:
    window_s = summary.window_s
    runs = [
        run
        for run in page
        if run.uuid and is_finished(run.status) and is_due(run.last_write_at, summary.now, window_s)
    ]
    return _classify(_load(connection, runs, catalog, window_s), oldest, window_s)


@dataclass(frozen=True)
class _Inputs:
    """A batch's due runs with everything core needs to classify their writes."""

    runs: list[q.DueRun]
    writes: dict[int, list[q.TargetRow]]  # by run uid, in event order
    history: dict[history_queries.RecordKey, list[HistoryRow]]
    ai_times: dict[history_queries.RecordKey, list[int]]
    presence: dict[history_queries.RecordKey, Presence]
    no_records: frozenset[str]  # tables without a uid column: they hold no records a target could name


def _load(
    connection: Connection, runs: list[q.DueRun], catalog: history_queries.TableCatalog, window_s: int
) -> _Inputs:
    writes = q.batch_writes(connection, [run.run_uid for run in runs])
    records: dict[str, set[int]] = defaultdict(set)
    by_run: dict[int, list[q.TargetRow]] = defaultdict(list)
    for write in writes:
        by_run[write.run_uid].append(write)
        if write.readable:
            assert write.tablename is not None and write.recuid is not None
            records[write.tablename].add(write.recuid)
    if writes:
        keys_from = min(write.written_at for write in writes) - SAME_SAVE_S
        keys_to = max(write.written_at for write in writes) + window_s
    else:
        keys_from = keys_to = 0
    return _Inputs(
        runs=runs,
        writes=by_run,
        history=history_queries.history_rows(connection, records, keys_from=keys_from, keys_to=keys_to),
        ai_times=history_queries.ai_write_times(connection, records),
        presence=_presence(connection, records, catalog),
        no_records=frozenset(name for name in records if not _holds_records(catalog, name)),
    )


def _classify(inputs: _Inputs, oldest: int | None, window_s: int) -> list[_Derived]:
    history, ai_times, presence = inputs.history, inputs.ai_times, inputs.presence
    no_records = inputs.no_records

    def classify(write: q.TargetRow) -> WriteOutcome:
        if not write.readable or write.tablename in no_records:
            return unreadable_target(write.event_uid)
        assert write.tablename is not None and write.recuid is not None
        key = (write.tablename, write.recuid)
        return classify_write(
            # The card's fields are not loaded: the write's own history row names what it wrote (rule 7).
            Write(write.event_uid, write.tablename, write.recuid, write.written_at),
            history.get(key, ()),
            ai_times.get(key, ()),
            presence[key],
            oldest,
            window_s,
        )

    derived = []
    for run in inputs.runs:
        outcomes = tuple((write, classify(write)) for write in inputs.writes.get(run.run_uid, ()))
        if outcomes:
            derived.append(_Derived(run, run_outcome(o.outcome for _, o in outcomes), outcomes))
    return derived


def _holds_records(catalog: history_queries.TableCatalog, name: str) -> bool:
    table = catalog.get(name)
    return table is None or table.has_uid


def _presence(
    connection: Connection, records: dict[str, set[int]], catalog: history_queries.TableCatalog
) -> dict[history_queries.RecordKey, Presence]:
    found: dict[history_queries.RecordKey, Presence] = {}
    for name, uids in records.items():
        table = catalog.get(name)
        if table is None:
            # DESIGN.md rule 2: a well-formed table name this database does not have: the record is gone.
            found.update({(name, uid): Presence.TABLE_MISSING for uid in uids})
        else:
            present = history_queries.presence(connection, table, uids)
            found.update({(name, uid): state for uid, state in present.items()})
    return found


@dataclass(frozen=True)
class _Saved:
    inserted: frozenset[int]  # run uids whose rows this transaction wrote
    mirrored: int
    not_mirrored: int


def _save(connection: Connection, derived: list[_Derived], now: int, window_s: int) -> _Saved:
    if not derived:
        return _Saved(frozenset(), 0, 0)
    run_rows = [
        outcomes.run_row(item.run, item.outcome, len(item.writes), window_s=window_s, now=now)
        for item in derived
    ]
    # The run rows first, in one statement: their unique key decides which transaction derives each run.
    inserted = outcomes.insert_run_outcomes(connection, run_rows)
    mine = [item for item in derived if item.run.run_uid in inserted]
    write_rows = [
        outcomes.write_row(item.run, write, outcome, now) for item in mine for write, outcome in item.writes
    ]
    outcomes.insert_write_outcomes(connection, write_rows)
    mirrored = outcomes.mirror_observed(connection, [(item.run.uuid, item.outcome) for item in mine], now)
    return _Saved(inserted, mirrored, len(mine) - mirrored)


def _count(summary: Summary, page: list[q.DueRun], derived: list[_Derived], saved: _Saved) -> None:
    summary.runs_without_uuid += sum(1 for run in page if not run.uuid)
    summary.mirrored += saved.mirrored
    summary.not_mirrored += saved.not_mirrored
    for item in derived:
        if item.run.run_uid not in saved.inserted:
            summary.runs_derived_elsewhere += 1
            continue
        summary.runs_by_outcome[item.outcome.value] += 1
        for _, outcome in item.writes:
            summary.writes_by_outcome[outcome.outcome.value] += 1
            if outcome.reason is not None:
                summary.unknown_by_reason[outcome.reason.value] += 1
            if outcome.edit_scope is not None:
                summary.edit_scope[outcome.edit_scope.value] += 1


def _drop_quietly(connection: Connection) -> None:
    try:
        with connection.begin():
            q.drop_write_targets(connection)
            sqlsession.end_job_session(connection)
    except DBAPIError:
        # The connection itself failed: its session, and the temporary table with it, is gone anyway.
        connection.invalidate()


def summary_lines(summary: Summary) -> list[str]:
    """The summary as the lines the command prints."""

    def counts(counter: Counter[str], names: Iterable[str]) -> str:
        return ", ".join(f"{name} {counter[name]:,}" for name in names)

    outcomes = [outcome.value for outcome in reversed(PRECEDENCE)]
    when = datetime.fromtimestamp(summary.now, UTC).isoformat()
    lines = [
        f"derived {summary.runs_derived:,} runs and {summary.writes_derived:,} writes as of {when}, "
        f"window {summary.window_s / DAY_S:g} days, rules {RULE_VERSION}, "
        f"in {summary.seconds:.1f} s ({summary.batches:,} batches)",
        f"  runs:   {counts(summary.runs_by_outcome, outcomes)}",
        f"  writes: {counts(summary.writes_by_outcome, outcomes)}",
        f"  unknown writes by reason: {counts(summary.unknown_by_reason, [r.value for r in UnknownReason])}",
        f"  edited writes by scope: {counts(summary.edit_scope, [s.value for s in EditScope])}",
        f"  runs still inside their window: {summary.runs_inside_window:,}",
        f"  runs skipped without uuid: {summary.runs_without_uuid:,}",
        f"  runs not finished yet (running or waiting; derived once they end): {summary.runs_unfinished:,}",
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


def run_job(db_url: str, *, now: datetime | None = None) -> JobResult:
    """The job callable (contract: jobs.job_log): derive what is due as of `now`, stopping when asked."""
    engine = make_engine(db_url)
    try:
        summary = derive_outcomes(
            engine,
            now=int((now or datetime.now(UTC)).timestamp()),
            window_s=settings.window_seconds(),
            stop=stop_requested,
        )
    finally:
        engine.dispose()
    return result_of(summary)


def result_of(summary: Summary) -> JobResult:
    """The job's result for tx_runrecord_job_run: the writes derived, and one line of what was done."""
    message = (
        f"{summary.runs_derived:,} runs and {summary.writes_derived:,} writes derived, "
        f"{summary.runs_inside_window:,} runs still inside their window"
        + (f", {summary.runs_unfinished:,} not finished yet" if summary.runs_unfinished else "")
        + ("; stopped after a batch" if summary.stopped else "")
    )
    return JobResult(processed=summary.writes_derived, failed=0, message=message)
