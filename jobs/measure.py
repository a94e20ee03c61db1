"""`runrecord measure-rates`: the rates of DESIGN.md, "Rates", into tx_runrecord_rate per period and group.

Two kinds of unit of work, one transaction each:

1. Facts, per batch of conversations (adapters.measure_batch): their messages, the runs they name and the
   counts of those runs' events, counted in the database by core's rules (core.answers, core.facts say what
   each run's completed answer is and counts as); the facts that changed replace the stored ones in
   tx_runrecord_measure_fact. The first run reads every conversation; later runs only those changed since the
   stored marks (a conversation row, a new message, or a run or event of a run it names). Runs no
   conversation names get a fact of their own.
2. Rates, at the end: the periods to write are every open period (a run ending in it may still change: its
   window has not closed at `now`, or it is the current period), every period that has facts but no
   stored rates, and every closed period still stored with runs inside their window (it was last written
   while open; written once more now that their windows have closed); the database counts their facts,
   derived outcomes and the runs still inside their window per day and group (adapters.tallies), once for
   both grains (a week's counts are its days': core.counting.in_grain), core.counting turns the counts into
   numerator, denominator and excluded, and the rows are upserted (adapters.rates).
   A row of such a period that no longer has data is deleted: a period without data is absent, never 0%.
   Other closed periods already stored are not touched, unless the stored rates are of an older
   RATES_VERSION (they lack a metric): then every period is written once more. The command prints
   notice_agreement as stored, every period summed. The marks are stored in the same transaction, so a
   failed run leaves the last ones.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from functools import partial
from typing import Any, TypeVar

from sqlalchemy import Connection, Engine
from sqlalchemy.exc import DBAPIError

from adapters import clock, measure_facts, rates, settings, tallies
from adapters.conversations import count_conversations
from adapters.database import RunrecordError, job_engine, reported
from adapters.dialect import session as sqlsession
from adapters.first_notice import first_notice_at
from adapters.measure_batch import (
    BatchResult,
    UidRange,
    batch_end,
    measure_batch,
    measure_unnamed_runs,
    scratch,
)
from adapters.measure_marks import (
    MEASURED_AT_MARK,
    VERSION_MARK,
    GrainMarks,
    Marks,
    grain_marks,
    save_marks,
    source_marks,
    stored_marks,
)
from adapters.measure_since import Changes, changes_since
from core.counting import (
    GO_ON_PATH_METRICS,
    EditedTally,
    FactTally,
    OpenTally,
    OutcomeTally,
    in_grain,
    rate_counts,
)
from core.facts import MEASURE_VERSION, Exclusion
from core.groups import ALL_RUNS
from core.metrics import RATES_VERSION, Metric
from core.periods import Grain, period_length
from core.window import check_window, window_cutoff
from jobs import alerts
from jobs.job_log import JobResult, stop_requested
from jobs.long_lived import freeze_before_first_job
from jobs.measure_summary import PeriodReport, Summary, result_line
from jobs.phases import PhaseTimer
from jobs.schema_setup import require_head

JOB = "measure-rates"

# Conversations per transaction: counted in the database's scratch tables, of which only the completed
# answers' texts come into Python (a few megabytes); a list of changed conversations is bound per batch, far
# below every driver's parameter limit.
BATCH_SIZE = 20_000
MAX_BATCH_SIZE = 50_000

_T = TypeVar("_T")

# A row stamped this long before the last measurement read the tables is read again: a transaction that
# committed after that read can carry a tstamp older than the newest one it saw (adapters.measure_since).
RESCAN_MARGIN_S = 300
# Beyond this many changed conversations a rerun reads them all in uid order instead of by a list of uids.
MAX_TOUCHED = 50_000
Progress = Callable[[int, int], None]  # (conversations read, conversations to read)


@dataclass(frozen=True)
class Measurement:
    """A measurement and the alert check after it (None when the measurement stopped before its end)."""

    summary: Summary
    check: alerts.AlertCheck | None

    def result(self) -> JobResult:
        """The job's result: the measurement's, its message ended by the check's clause."""
        return alerts.with_alerts(result_of(self.summary), self.check)


def measure_and_alert(
    engine: Engine, *, now: int, window_s: int, grains: Sequence[Grain], webhook_url: str | None
) -> Measurement:
    """measure-rates, then the alert check (jobs.alerts), whose outcome never fails the measurement: what the
    command and the scheduled job both run.

    The webhook is read from the settings by the caller before anything is measured: a malformed
    RUNRECORD_ALERT_WEBHOOK stops the command, the scheduler and the demo before they start, and fails a
    scheduled run before it measures, in one line that names the variable and not its value."""
    summary = measure_rates(engine, now=now, window_s=window_s, grains=grains)
    if summary.stopped:
        return Measurement(summary, None)
    return Measurement(summary, alerts.check_alerts(engine, now=now, grains=grains, webhook_url=webhook_url))


def run_job(db_url: str, *, now: datetime | None = None) -> JobResult:
    """The job callable (contract: jobs.job_log): facts and rates at both grains, as of `now`, and the alert
    check (`measure_and_alert`)."""
    webhook_url = settings.alert_webhook()
    window_s = settings.window_seconds()
    at = int((now or clock.now()).timestamp())
    with job_engine(db_url) as engine:
        measured = measure_and_alert(
            engine, now=at, window_s=window_s, grains=(Grain.WEEK, Grain.DAY), webhook_url=webhook_url
        )
    return measured.result()


def result_of(summary: Summary) -> JobResult:
    """The job's result: conversations and unnamed runs read; nothing fails item by item (an unreadable row
    is counted as excluded, not as a failure)."""
    return JobResult(
        processed=summary.conversations + summary.unnamed_runs, failed=0, message=result_line(summary)
    )


def measure_rates(
    engine: Engine,
    *,
    now: int,
    window_s: int,
    grains: Sequence[Grain] = (Grain.WEEK,),
    batch_size: int = BATCH_SIZE,
    progress: Progress | None = None,
) -> Summary:
    """Count what changed since the last measurement, then write the open periods and the new ones."""
    check_window(window_s)
    if not 1 <= batch_size <= MAX_BATCH_SIZE:
        raise RunrecordError(f"the batch size must be from 1 to {MAX_BATCH_SIZE:,}, not {batch_size:,}")
    require_head(engine, "measure-rates")
    freeze_before_first_job()
    started = time.perf_counter()
    # When this measurement reads the tables, at the earliest: its `now` where that is not ahead of the
    # system clock (a `--now` or RUNRECORD_NOW ahead of it says nothing of when the tables were read).
    reads_from = min(now, clock.system())
    summary = Summary(now=now, window_s=window_s)
    options = sqlsession.job_execution_options(engine.dialect.name)
    with reported(engine, "measuring rates"), engine.connect().execution_options(**options) as connection:
        # SQLite: each transaction takes the write lock as it begins, so that the job's heartbeat, renewed
        # from another connection, waits for it instead of failing it (adapters.dialect.session).
        sqlsession.lock_on_begin(connection)
        with connection.begin():
            # PostgreSQL without JIT: a statement of correlated probes looks costly to its planner, and was
            # compiled for over a second before it ran in 0.2 s (the facts, scale 0.02, measured).
            sqlsession.begin_job_session(connection)
            stored = stored_marks(connection)
            since, last_read = _since(stored), _last_read(stored, now)
            of_grain = {grain: grain_marks(stored, grain) for grain in Grain}
            scratch.create(connection)
        try:
            read = _Read(since, last_read, reads_from)
            _measure(connection, summary, read, of_grain, grains, batch_size, progress)
        finally:
            if not connection.invalidated:
                with connection.begin():
                    scratch.drop(connection)
                    sqlsession.end_job_session(connection)
    summary.seconds = time.perf_counter() - started
    return summary


@dataclass(frozen=True)
class _Read:
    """What the last measurement read (None: every fact is counted again), when it read at the earliest
    (None: not known), and when this one reads at the earliest."""

    since: Marks | None
    last_read: int | None
    reads_from: int


def _measure(
    connection: Connection,
    summary: Summary,
    read: _Read,
    of_grain: dict[Grain, GrainMarks],
    grains: Sequence[Grain],
    batch_size: int,
    progress: Progress | None,
) -> None:
    now, since = summary.now, read.since
    timer = PhaseTimer(summary.phases)
    summary.rebuilt = since is None
    changed: set[tuple[Grain, date]] = set()
    with connection.begin():
        if since is None:
            changes = Changes(source_marks(connection), None)
            measure_facts.delete_every_fact(connection)
        else:
            changes = changes_since(connection, since, RESCAN_MARGIN_S, MAX_TOUCHED, last_read=read.last_read)
    current, touched = changes.marks.at_most(now), changes.touched
    summary.all_conversations = touched is None
    total = _total(connection, touched)
    listed = None if touched is None else sorted(touched)
    timer("changed")
    after = 0
    while True:
        following = _spilling(
            connection, partial(_next_batch, connection, summary, listed, after, batch_size, changed, timer)
        )
        if following is None:
            break
        scratch.statistics_taken(connection)
        timer("commit")
        after = following
        summary.batches += 1
        if progress is not None:
            progress(summary.conversations, total)
        if stop_requested():
            summary.stopped = True
            return
    # The runs read again are the only ones a rerun looks at for a missing name; there may be none.
    if touched is None or changes.runs:
        unnamed, periods = _spilling(
            connection,
            lambda: measure_unnamed_runs(connection, since=touched is not None, now=now, timer=timer),
        )
        changed |= periods
        timer("commit")
    else:
        unnamed = 0
    summary.unnamed_runs += unnamed
    summary.runs += unnamed
    with connection.begin():
        # A grain's rates written from facts of older rules, or by an older runrecord that stored no row of
        # a metric added since: every period of it is written once more, closed ones too.
        rewrite = {grain: since is None or _outdated(of_grain[grain]) for grain in grains}
        summary.rates_rewritten = any(rewrite.values())
        derived = _derived(connection, of_grain, rewrite, current.outcome_uid)
        first_notice = first_notice_at(connection)
        opens = tallies.first_open_periods(connection, grains, now=now, window_s=summary.window_s)
        closed = tallies.closed_periods(connection, opens)
        chosen = [
            _rate_periods(
                connection,
                grain,
                opens[grain],
                closed[grain],
                rewrite_all=rewrite[grain],
                changed=changed,
                derived=derived,
            )
            for grain in grains
        ]
        counted = _day_tallies(
            connection, chosen, now=now, window_s=summary.window_s, first_notice=first_notice
        )
        for written in chosen:
            exclusions = _write_rates(connection, written, counted, now=now)
            summary.periods.append(written.report)
            if written.report.grain is grains[0]:
                summary.exclusions = exclusions
        summary.first_notice = first_notice
        # As stored, every period summed: what the Rates page shows too.
        summary.agreement, _ = rates.stored_total(connection, grains[0], Metric.NOTICE_AGREEMENT)
        for metric in GO_ON_PATH_METRICS.values():
            summary.go_on_paths[metric], _ = rates.stored_total(connection, grains[0], metric)
        # The grains not measured keep what their rates were written from; stored per grain from now on.
        measured = GrainMarks(RATES_VERSION, MEASURE_VERSION, current.outcome_uid)
        save_marks(
            connection,
            current,
            measure_version=MEASURE_VERSION,
            grains={grain: measured if grain in grains else of_grain[grain] for grain in Grain},
            first_open={report.grain: report.first_open for report in summary.periods},
            now=now,
            measured_at=read.reads_from,
        )
    timer("rates")


def _next_batch(
    connection: Connection,
    summary: Summary,
    listed: list[int] | None,
    after: int,
    batch_size: int,
    changed: set[tuple[Grain, date]],
    timer: PhaseTimer,
) -> int | None:
    """Measure the batch after `after` (a conversation uid, or a place in `listed`), counted into `summary`
    and `changed`; where the next batch starts, or None when there is no batch left."""
    scope: UidRange | list[int]
    if listed is None:
        upto = batch_end(connection, after=after, size=batch_size)
        if upto is None:
            return None
        scope, following = UidRange(after, upto), upto
    else:
        scope = listed[after : after + batch_size]
        if not scope:
            return None
        following = after + batch_size
    timer("batch_end")
    changed |= _count(summary, measure_batch(connection, scope, now=summary.now, timer=timer))
    return following


def _spilling(connection: Connection, work: Callable[[], _T]) -> _T:
    """`work` in one transaction, done once more with the job's batch tables on disk when one that MariaDB
    kept in memory was full (adapters.dialect.session.spill_to_disk)."""
    while True:
        try:
            with connection.begin():
                return work()
        except DBAPIError as error:
            if not sqlsession.spill_to_disk(connection, error):
                raise


def _since(stored: dict[str, int]) -> Marks | None:
    """The marks to read changes since; None when every fact must be counted again."""
    if stored.get(VERSION_MARK) != MEASURE_VERSION:
        return None
    names = Marks().as_rows()
    if any(name not in stored for name in names):
        return None
    return Marks(**{name: stored[name] for name in names})


def _outdated(marks: GrainMarks) -> bool:
    """Whether a grain's stored rates were written from facts of other rules or lack a metric of today's."""
    return marks.measure_version != MEASURE_VERSION or marks.rates_version < RATES_VERSION


def _derived(
    connection: Connection, of_grain: dict[Grain, GrainMarks], rewrite: dict[Grain, bool], upto: int
) -> set[tuple[Grain, date]]:
    """The periods of each grain measured, not written afresh, that hold a run derived since its rates were
    last written: each grain from its own mark, since a measurement of the other grain alone may have
    come between."""
    derived: set[tuple[Grain, date]] = set()
    for grain, afresh in rewrite.items():
        after = of_grain[grain].outcome_uid
        if not afresh and after is not None:
            found = measure_facts.periods_derived(connection, after, upto)
            derived |= {(of, period) for of, period in found if of is grain}
    return derived


def _last_read(stored: dict[str, int], now: int) -> int | None:
    """When the last measurement read the tables, at the earliest: the earlier of its `now` and the system
    clock at its start, where that is earlier than this measurement's `now`. None when it stored none, or one
    as late as this one's `now` or later: the same `now` not ahead of the clock (a fixed RUNRECORD_NOW,
    `--now` given again), or a `now` ahead of the clock as an older runrecord stored it."""
    measured_at = stored.get(MEASURED_AT_MARK)
    return measured_at if measured_at is not None and measured_at < now else None


def _total(connection: Connection, touched: set[int] | None) -> int:
    if touched is not None:
        return len(touched)
    with connection.begin():
        return count_conversations(connection)


# --- facts -----------------------------------------------------------------------------------------------


def _count(summary: Summary, batch: BatchResult) -> frozenset[tuple[Grain, date]]:
    """Add what a batch read to the summary; returns the periods its changed facts left or entered."""
    summary.conversations += batch.conversations
    summary.runs += batch.runs
    summary.answers += batch.answers
    summary.answers_without_run += batch.answers_without_run
    summary.unreadable_messages += batch.unreadable_messages
    return batch.periods


# --- rates -----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _RatePeriods:
    """The periods of one grain a measurement writes: every open one (from `first_open` on) and the `listed`
    closed ones (new, or closed since they were last written), with the report on them."""

    report: PeriodReport
    listed: frozenset[date]

    @property
    def first_open(self) -> date:
        return self.report.first_open


def _rate_periods(
    connection: Connection,
    grain: Grain,
    first_open: date,
    closed: set[date],
    *,
    rewrite_all: bool,
    changed: set[tuple[Grain, date]],
    derived: set[tuple[Grain, date]],
) -> _RatePeriods:
    """`closed`: the grain's periods before `first_open` that hold a fact; `derived`: the periods of the
    grains measured holding a run derived since that grain's rates were last written."""
    report = PeriodReport(grain, first_open, rewritten=rewrite_all)
    stored = rates.stored_periods(connection, grain)
    new = closed if rewrite_all else closed - stored
    # Closed since the last run, which counted runs of it inside their window: no run of a closed period is
    # inside its window. And a closed period holding a run derived since: a measurement that ran before
    # derive-outcomes (by hand, on a schedule of its own, or beside it) stored it without that outcome.
    window_was_open = rates.periods_with(connection, grain, Metric.WINDOW_OPEN, before=first_open)
    derived_since = {period for of, period in derived if of is grain} & closed
    closing = (window_was_open | derived_since) - new
    kept = closed - new - closing
    report.new_periods = len(new)
    report.closing_periods = len(closing)
    report.kept_periods = len(kept)
    report.kept_changed = sum(1 for period in kept if (grain, period) in changed)
    return _RatePeriods(report, frozenset(new | closing))


@dataclass(frozen=True)
class _DayTallies:
    facts: list[FactTally]
    outcomes: list[OutcomeTally]
    edited: list[EditedTally]
    window_open: list[OpenTally]


def _day_tallies(
    connection: Connection,
    chosen: Sequence[_RatePeriods],
    *,
    now: int,
    window_s: int,
    first_notice: int | None,
) -> _DayTallies:
    """The tallies of every day the grains write (core.counting.in_grain makes a week's of its days'): the
    facts, derived outcomes and runs inside their window are counted once for both grains."""
    first_open = min(periods.first_open for periods in chosen)
    days: set[date] = set()
    for periods in chosen:
        length = period_length(periods.report.grain).days
        days.update(period + timedelta(days=offset) for period in periods.listed for offset in range(length))
    counted: dict[str, Any] = {"open_from": first_open, "periods": days}
    return _DayTallies(
        tallies.fact_tallies(connection, Grain.DAY, **counted, first_notice=first_notice),
        tallies.outcome_tallies(connection, Grain.DAY, **counted),
        tallies.edited_tallies(connection, Grain.DAY, **counted),
        # Every run inside its window ends at or after the cutoff, i.e. in an open period.
        tallies.window_open_tallies(connection, Grain.DAY, cutoff=window_cutoff(now, window_s)),
    )


def _write_rates(
    connection: Connection, periods: _RatePeriods, counted: _DayTallies, *, now: int
) -> Counter[tuple[Metric, Exclusion]]:
    report = periods.report
    grain, first_open, listed = report.grain, periods.first_open, periods.listed
    counts = rate_counts(
        in_grain(counted.facts, grain, first_open, listed),
        in_grain(counted.outcomes, grain, first_open, listed),
        in_grain(counted.edited, grain, first_open, listed),
        in_grain(counted.window_open, grain, first_open, listed),
    )
    rows = counts.rows()
    chosen: dict[str, Any] = {"open_from": first_open, "periods": set(listed)}
    report.deleted = rates.save_rates(connection, grain, rows, now=now, **chosen)
    report.open_periods = len({period for (_, period, _), _ in rows if period >= first_open})
    report.rows = len(rows)
    report.inside_window = sum(
        count.numerator
        for (metric, _, group), count in rows
        if metric is Metric.WINDOW_OPEN and group == ALL_RUNS
    )
    return counts.exclusions
