"""`runrecord measure-rates`: the rates of DESIGN.md, "Rates", into tx_runrecord_rate per period and group.

Two kinds of unit of work, one transaction each:

1. Facts, per batch of conversations: read their messages, the runs they name and counts of those runs'
   events (adapters.conversations, adapters.runs, adapters.events); core.answers and core.facts say what
   each run's completed answer is and counts as; the facts are upserted into tx_runrecord_measure_fact
   (adapters.facts). The first run reads every conversation; later runs only those changed since the stored
   marks (a conversation row, a new message, or a run or event of a run it names). Runs no conversation
   names get a fact of their own.
2. Rates, at the end: the periods to write are every open period (a run ending in it may still change: its
   window has not closed at `now`, or it is the current period), every period that has facts but no
   stored rates, and every closed period still stored with runs inside their window (it was last written
   while open; written once more now that their windows have closed); the database counts their facts,
   derived outcomes and the runs still inside their window per group (adapters.tallies), core.counting
   turns the counts into numerator, denominator and excluded, and the rows are upserted (adapters.rates).
   A row of such a period that no longer has data is deleted: a period without data is absent, never 0%.
   Other closed periods already stored are not touched, unless the stored rates are of an older
   RATES_VERSION (they lack a metric): then every period is written once more. The command prints
   notice_agreement as stored, every period summed. The marks are stored in the same transaction, so a
   failed run leaves the last ones.
"""

from __future__ import annotations

import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any

from sqlalchemy import Connection, Engine

from adapters import clock, facts, measure_inputs, rates, settings, tallies
from adapters import measure_scratch as scratch
from adapters.conversations import count_conversations
from adapters.database import RunrecordError, make_engine, reported
from adapters.dialect import session as sqlsession
from adapters.events import event_of, events_of
from adapters.first_notice import first_notice_at
from adapters.measure_marks import VERSION_MARK, Marks, save_marks, source_marks, stored_marks
from adapters.measure_marks import rates_version as stored_rates_version
from core.claims import claims_change, denies_change, is_go_on
from core.counting import GO_ON_PATH_METRICS, Count, rate_counts
from core.facts import MEASURE_VERSION, Exclusion
from core.go_on import GoOnPath
from core.groups import ALL_RUNS
from core.metrics import RATES_VERSION, Metric
from core.periods import Grain
from core.saved import Verdict, nothing_saved
from core.time import DAY_S
from core.window import check_window, window_cutoff
from jobs import alerts
from jobs.job_log import JobResult, stop_requested
from jobs.schema_setup import require_head

JOB = "measure-rates"

# Conversations per transaction: counted in the database's scratch tables, of which only the completed
# answers' texts come into Python (a few megabytes); a list of changed conversations is bound per batch, far
# below every driver's parameter limit.
BATCH_SIZE = 20_000
MAX_BATCH_SIZE = 50_000
# A row stamped this long before a mark is read again: a transaction that committed after the last
# measurement read the tables can carry a tstamp older than the newest one it saw.
RESCAN_MARGIN_S = 300
# Beyond this many changed conversations a rerun reads them all in uid order instead of by a list of uids.
MAX_TOUCHED = 50_000
# How the summary line names each path of a stored "go on" (core.go_on).
GO_ON_PATH_NAMES: dict[GoOnPath, str] = {
    GoOnPath.FINISHED_OUTSIDE: "runFinishedOutside line",
    GoOnPath.SECOND_RUN: "second run",
    GoOnPath.UNKNOWN: "neither",
}

Progress = Callable[[int, int], None]  # (conversations read, conversations to read)


@dataclass
class PeriodReport:
    """What the rates phase did at one grain."""

    grain: Grain
    first_open: date
    open_periods: int = 0  # open periods with data, written
    new_periods: int = 0  # closed periods written for the first time
    closing_periods: int = 0  # closed periods last written with runs inside their window, written once more
    kept_periods: int = 0  # closed periods already stored, left as they are
    kept_changed: int = 0  # of those, periods a fact of this run moved into or out of
    rows: int = 0  # rate rows written
    deleted: int = 0  # rows of written periods that no longer have data
    inside_window: int = 0  # runs still inside their window (Metric.WINDOW_OPEN, all runs)


@dataclass
class Summary:
    """What one measurement did."""

    now: int
    window_s: int
    rebuilt: bool = False  # every fact counted again (first run, or a new MEASURE_VERSION)
    all_conversations: bool = False  # every conversation read (rebuilt, or too many changed)
    conversations: int = 0
    runs: int = 0  # run facts written (named and unnamed)
    unnamed_runs: int = 0
    answers: int = 0
    answers_without_run: int = 0
    unreadable_messages: int = 0
    batches: int = 0
    stopped: bool = False  # the scheduler asked to stop; rates and marks were left for the next run
    rates_rewritten: bool = False  # every period written afresh (rebuilt, or rates of an older RATES_VERSION)
    periods: list[PeriodReport] = field(default_factory=list)
    exclusions: Counter[tuple[Metric, Exclusion]] = field(default_factory=Counter)
    first_notice: int | None = None  # when the first completed answer with the notice was stored
    agreement: Count = field(default_factory=Count)  # notice_agreement as stored, every period, all runs
    # What followed the stored "go on" messages (core.go_on) as stored, every period, all runs: by metric.
    go_on_paths: dict[Metric, Count] = field(default_factory=dict)
    seconds: float = 0.0


def run_job(db_url: str, *, now: datetime | None = None) -> JobResult:
    """The job callable (contract: jobs.job_log): facts and rates at both grains, as of `now`; then the alert
    check (jobs.alerts), whose outcome ends the message and never fails the job."""
    engine = make_engine(db_url)
    at = int((now or clock.now()).timestamp())
    grains = (Grain.WEEK, Grain.DAY)
    try:
        summary = measure_rates(engine, now=at, window_s=settings.window_seconds(), grains=grains)
        checked = None if summary.stopped else alerts.after_measurement(engine, now=at, grains=grains)
    finally:
        engine.dispose()
    return alerts.with_alerts(result_of(summary), checked)


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
    started = time.perf_counter()
    summary = Summary(now=now, window_s=window_s)
    with reported(engine, "measuring rates"), engine.connect() as connection:
        # SQLite: each transaction takes the write lock as it begins, so that the job's heartbeat, renewed
        # from another connection, waits for it instead of failing it (adapters.dialect.session).
        sqlsession.lock_on_begin(connection)
        with connection.begin():
            # PostgreSQL without JIT: a statement of correlated probes looks costly to its planner, and was
            # compiled for over a second before it ran in 0.2 s (the facts, scale 0.02, measured).
            sqlsession.begin_job_session(connection)
            current = source_marks(connection)
            since = _since(stored_marks(connection))
            scratch.create(connection)
        try:
            _measure(connection, summary, since, current, grains, batch_size, progress)
        finally:
            if not connection.invalidated:
                with connection.begin():
                    scratch.drop(connection)
                    sqlsession.end_job_session(connection)
    summary.seconds = time.perf_counter() - started
    return summary


def _measure(
    connection: Connection,
    summary: Summary,
    since: Marks | None,
    current: Marks,
    grains: Sequence[Grain],
    batch_size: int,
    progress: Progress | None,
) -> None:
    now = summary.now
    summary.rebuilt = since is None
    changed: set[tuple[Grain, date]] = set()
    if since is None:
        with connection.begin():
            facts.delete_every_fact(connection)
        touched = None
    else:
        with connection.begin():
            touched = facts.touched_conversations(connection, since, RESCAN_MARGIN_S, MAX_TOUCHED)
    summary.all_conversations = touched is None
    total = _total(connection, touched)
    listed = None if touched is None else sorted(touched)
    after = 0
    while True:
        with connection.begin():
            if listed is None:
                upto = measure_inputs.batch_end(connection, after=after, size=batch_size)
                if upto is None:
                    break
                scope: dict[str, Any] = {"after": after, "upto": upto}
            else:
                chosen = listed[after : after + batch_size]
                if not chosen:
                    break
                scope = {"uids": chosen}
            changed |= _conversation_batch(connection, scope, now, summary)
        after = upto if listed is None else after + batch_size
        summary.batches += 1
        if progress is not None:
            progress(summary.conversations, total)
        if stop_requested():
            summary.stopped = True
            return
    with connection.begin():
        scratch.clear(connection)
        unnamed = measure_inputs.fill_unnamed_runs(
            connection,
            run_uid=None if touched is None or since is None else since.run_uid,
            run_tstamp=0 if since is None else since.run_tstamp - RESCAN_MARGIN_S,
        )
        facts.mark_changed(connection)
        changed |= facts.write_changed(connection, now)
    summary.unnamed_runs += unnamed
    summary.runs += unnamed
    with connection.begin():
        # A measurement by an older runrecord stored no row of a metric added since, in closed periods
        # too: every period is written once more (the facts stay as they are).
        summary.rates_rewritten = since is None or stored_rates_version(connection) < RATES_VERSION
        first_notice = first_notice_at(connection)
        for grain in grains:
            report, exclusions = _write_rates(
                connection,
                grain,
                now=now,
                window_s=summary.window_s,
                rewrite_all=summary.rates_rewritten,
                changed=changed,
                first_notice=first_notice,
            )
            summary.periods.append(report)
            if grain is grains[0]:
                summary.exclusions = exclusions
        summary.first_notice = first_notice
        # As stored, every period summed: what the Rates page shows too.
        summary.agreement, _ = rates.stored_total(connection, grains[0], Metric.NOTICE_AGREEMENT)
        for metric in GO_ON_PATH_METRICS.values():
            summary.go_on_paths[metric], _ = rates.stored_total(connection, grains[0], metric)
        save_marks(
            connection,
            current,
            measure_version=MEASURE_VERSION,
            rates_version=RATES_VERSION,
            first_open={report.grain: report.first_open for report in summary.periods},
            now=now,
        )


def _since(stored: dict[str, int]) -> Marks | None:
    """The marks to read changes since; None when every fact must be counted again."""
    if stored.get(VERSION_MARK) != MEASURE_VERSION:
        return None
    names = Marks().as_rows()
    if any(name not in stored for name in names):
        return None
    return Marks(**{name: stored[name] for name in names})


def _total(connection: Connection, touched: set[int] | None) -> int:
    if touched is not None:
        return len(touched)
    with connection.begin():
        return count_conversations(connection)


# --- facts -----------------------------------------------------------------------------------------------


def _conversation_batch(
    connection: Connection, scope: dict[str, Any], now: int, summary: Summary
) -> set[tuple[Grain, date]]:
    """Count a batch of conversations in the database (adapters.measure_inputs), the text rules of core.claims
    on the texts it hands over, and save the facts that changed; returns the periods those left or entered."""
    scratch.clear(connection)
    summary.conversations += measure_inputs.fill_conversations(connection, **scope)
    measure_inputs.fill_entries(connection)
    measure_inputs.fill_messages(connection)
    measure_inputs.fill_runs(connection)
    measure_inputs.fill_answers(connection)
    judged = [
        (uid, claims_change(text), earlier == 1 and denies_change(text))
        for uid, earlier, text in measure_inputs.answer_texts(connection)
    ]
    measure_inputs.save_judged(connection, judged)
    measure_inputs.fill_verdicts(connection)
    measure_inputs.save_verdicts(
        connection, _stream_verdicts(connection, measure_inputs.claiming_runs(connection))
    )
    measure_inputs.fill_user_messages(connection)
    said = [uid for uid, text in measure_inputs.go_on_texts(connection) if is_go_on(text)]
    measure_inputs.save_go_on(connection, said)
    measure_inputs.fill_waits(connection)
    measure_inputs.place_user_messages(connection)
    measure_inputs.fill_facts(connection)
    counted = measure_inputs.batch_counts(connection)
    measure_inputs.fill_retired_runs(connection)
    facts.mark_changed(connection)
    periods = facts.write_changed(connection, now)
    summary.runs += counted["runs"]
    summary.answers += counted["answers"]
    summary.answers_without_run += counted["answers_without_run"]
    summary.unreadable_messages += counted["unreadable_messages"]
    return periods


def _stream_verdicts(connection: Connection, run_uids: Sequence[int]) -> dict[int, Verdict]:
    """core.saved's verdict of runs whose counts do not settle it, from their events' kept keys."""
    streams: dict[int, list[Any]] = defaultdict(list)
    for e in events_of(connection, run_uids):
        streams[int(e.run)].append(event_of(e))
    return {uid: nothing_saved(streams.get(uid)) for uid in run_uids}


# --- rates -----------------------------------------------------------------------------------------------


def _write_rates(
    connection: Connection,
    grain: Grain,
    *,
    now: int,
    window_s: int,
    rewrite_all: bool,
    changed: set[tuple[Grain, date]],
    first_notice: int | None,
) -> tuple[PeriodReport, Counter[tuple[Metric, Exclusion]]]:
    cutoff = window_cutoff(now, window_s)
    first_open = tallies.first_open_period(connection, grain, now=now, window_s=window_s)
    report = PeriodReport(grain, first_open)
    closed = tallies.fact_periods(connection, grain, before=first_open)
    stored = rates.stored_periods(connection, grain)
    new = closed if rewrite_all else closed - stored
    # Closed since the last run, which counted runs of it inside their window: their outcomes have been
    # derived since (derive-outcomes runs first), and no run of a closed period is inside its window.
    closing = rates.periods_with(connection, grain, Metric.WINDOW_OPEN, before=first_open) - new
    kept = closed - new - closing
    report.new_periods = len(new)
    report.closing_periods = len(closing)
    report.kept_periods = len(kept)
    report.kept_changed = sum(1 for period in kept if (grain, period) in changed)
    chosen: dict[str, Any] = {"open_from": first_open, "periods": new | closing}
    counts = rate_counts(
        tallies.fact_tallies(connection, grain, **chosen, first_notice=first_notice),
        tallies.outcome_tallies(connection, grain, **chosen),
        tallies.edited_writes(connection, grain, **chosen),
        # Every run inside its window ends at or after the cutoff, i.e. in an open period.
        tallies.window_open_tallies(connection, grain, cutoff=cutoff),
    )
    counted = counts.rows()
    deleted = rates.save_rates(connection, grain, counted, now=now, **chosen)
    report.open_periods = len({period for (_, period, _), _ in counted if period >= first_open})
    report.rows = len(counted)
    report.deleted = deleted
    report.inside_window = sum(
        count.numerator
        for (metric, _, group), count in counted
        if metric is Metric.WINDOW_OPEN and group == ALL_RUNS
    )
    return report, counts.exclusions


# --- what it says -------------------------------------------------------------------------------------------


def result_line(summary: Summary) -> str:
    """One line for tx_runrecord_job_run and the log: what was read and what was written."""
    if summary.stopped:
        return (
            f"stopped after conversations: {summary.conversations:,}; the facts saved are kept, rates and "
            "marks are left for the next run"
        )
    scope = "all" if summary.all_conversations else "changed"
    parts = [
        f"read conversations {summary.conversations:,} ({scope}), runs {summary.runs:,}, "
        f"completed answers {summary.answers:,}"
    ]
    for report in summary.periods:
        parts.append(
            f"{report.grain.value}: periods written {report.open_periods} open, {report.new_periods} new"
            f"{_closing(report)}; closed kept {report.kept_periods}"
        )
    excluded = sum(summary.exclusions.values())
    if excluded:
        parts.append(f"exclusions {excluded:,}")
    return "; ".join(parts)


def summary_lines(summary: Summary) -> list[str]:
    """The summary as the lines the command prints."""
    when = datetime.fromtimestamp(summary.now, UTC).isoformat()
    scope = "all" if summary.all_conversations else "changed since the last measurement"
    lines = [
        f"measured as of {when}, window {summary.window_s / DAY_S:g} days, in {summary.seconds:.1f} s "
        f"(batches: {summary.batches:,})",
        f"  read: conversations {summary.conversations:,} ({scope}); runs {summary.runs:,} "
        f"(named by no conversation: {summary.unnamed_runs:,}); completed answers {summary.answers:,} "
        f"(whose run is gone: {summary.answers_without_run:,}); assistant messages that cannot be read "
        f"{summary.unreadable_messages:,}",
    ]
    if summary.rebuilt:
        lines.append(f"  every fact counted afresh (none of rules version {MEASURE_VERSION} stored yet)")
    elif summary.rates_rewritten:
        lines.append(f"  every period written afresh (no rates of version {RATES_VERSION} stored yet)")
    for report in summary.periods:
        kept = f"closed periods kept as stored: {report.kept_periods}"
        if report.kept_changed:
            kept += f" (with late changes, not rewritten: {report.kept_changed})"
        lines.append(
            f"  {report.grain.value}: open from {report.first_open.isoformat()}; periods written: "
            f"{report.open_periods} open, {report.new_periods} new{_closing(report)} ({report.rows:,} rows, "
            f"{report.deleted:,} removed); {kept}"
        )
    if summary.periods:
        lines.append(
            f"  runs still inside their window (no outcome yet): {summary.periods[0].inside_window:,}"
        )
    if summary.periods:
        lines.append(f"  {agreement_line(summary)}")
        lines.append(f"  {go_on_line(summary)}")
    if summary.exclusions:
        excluded = ", ".join(
            f"{metric.value} {count:,} ({reason.value})"
            for (metric, reason), count in sorted(summary.exclusions.items())
        )
        lines.append(f"  excluded in the periods written (all runs): {excluded}")
    return lines


def agreement_line(summary: Summary) -> str:
    """notice_agreement over the whole installation: numerator / denominator = rate, and from when."""
    name = Metric.NOTICE_AGREEMENT.value
    if summary.first_notice is None:
        return f"{name}: none yet (no completed answer carries a stored nothingSaved notice)"
    count = summary.agreement
    rate = f"{count.numerator / count.denominator:.1%}" if count.denominator else "no answer counted"
    first = datetime.fromtimestamp(summary.first_notice, UTC).date().isoformat()
    excluded = f"; excluded {count.excluded:,} (cannot tell)" if count.excluded else ""
    return (
        f"{name}: {count.numerator:,} / {count.denominator:,} = {rate} "
        f"(answers after the first stored notice, {first}){excluded}"
    )


def go_on_line(summary: Summary) -> str:
    """What followed the stored "go on" messages sent while an approval waited, every period summed: each
    path with its share of them (core.go_on; the metrics go_on_finished_outside, go_on_second_run,
    go_on_unknown)."""
    paths = [(path, summary.go_on_paths.get(metric, Count())) for path, metric in GO_ON_PATH_METRICS.items()]
    messages = max((count.denominator for _, count in paths), default=0)
    excluded = max((count.excluded for _, count in paths), default=0)
    head = f'"go on" while an approval waited: {messages:,} stored messages'
    unreadable = f"; excluded {excluded:,} (user messages that cannot be read)" if excluded else ""
    if not messages:
        return f"{head}{unreadable}"
    split = ", ".join(
        f"{GO_ON_PATH_NAMES[path]} {count.numerator:,} ({count.numerator / messages:.1%})"
        for path, count in paths
    )
    return f"{head}: {split}{unreadable}"


def _closing(report: PeriodReport) -> str:
    return f", {report.closing_periods} closed since the last run" if report.closing_periods else ""


def summary_json(summary: Summary) -> dict[str, Any]:
    """The summary as plain JSON values (for --json)."""
    return {
        "now": datetime.fromtimestamp(summary.now, UTC).isoformat(),
        "window_s": summary.window_s,
        "rules_version": MEASURE_VERSION,
        "rebuilt": summary.rebuilt,
        "all_conversations": summary.all_conversations,
        "read": {
            "conversations": summary.conversations,
            "runs": summary.runs,
            "unnamed_runs": summary.unnamed_runs,
            "completed_answers": summary.answers,
            "answers_without_run": summary.answers_without_run,
            "unreadable_assistant_messages": summary.unreadable_messages,
        },
        "periods": [
            {
                "grain": report.grain.value,
                "open_from": report.first_open.isoformat(),
                "open_written": report.open_periods,
                "new_written": report.new_periods,
                "closed_since_written": report.closing_periods,
                "closed_kept": report.kept_periods,
                "closed_kept_with_late_changes": report.kept_changed,
                "rows": report.rows,
                "removed": report.deleted,
                "inside_window": report.inside_window,
            }
            for report in summary.periods
        ],
        "excluded": [
            {"metric": metric.value, "reason": reason.value, "count": count}
            for (metric, reason), count in sorted(summary.exclusions.items())
        ],
        "notice_agreement": {
            "first_notice": None
            if summary.first_notice is None
            else datetime.fromtimestamp(summary.first_notice, UTC).isoformat(),
            "numerator": summary.agreement.numerator,
            "denominator": summary.agreement.denominator,
            "excluded": summary.agreement.excluded,
        },
        "go_on_paths": {
            "messages": max((count.denominator for count in summary.go_on_paths.values()), default=0),
            "excluded": max((count.excluded for count in summary.go_on_paths.values()), default=0),
            **{
                path.value: summary.go_on_paths.get(metric, Count()).numerator
                for path, metric in GO_ON_PATH_METRICS.items()
            },
        },
        "batches": summary.batches,
        "seconds": round(summary.seconds, 3),
    }
