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
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any

from sqlalchemy import Connection, Engine, Row

from adapters import facts, rates, settings, tallies
from adapters.conversations import conversation_page, conversations_by_uid, count_conversations, messages_of
from adapters.database import RunrecordError, make_engine, reported
from adapters.events import event_counts, event_of, event_problems, events_of, steps_of
from adapters.measure_marks import VERSION_MARK, Marks, save_marks, source_marks, stored_marks
from adapters.measure_marks import rates_version as stored_rates_version
from adapters.runs import runs_by_uid, runs_by_uuid
from core.answers import (
    Answer,
    ConversationInput,
    completed_answers,
    conversation_input,
    named_runs,
    stored_message,
    verdict_from_counts,
)
from core.counting import GO_ON_PATH_METRICS, Count, rate_counts
from core.facts import MEASURE_VERSION, Exclusion, Fact, conversation_facts, orphan_fact
from core.go_on import GoOnPath
from core.groups import ALL_RUNS
from core.measured_runs import EventCounts, RunRow, run_end
from core.metrics import RATES_VERSION, Metric
from core.periods import Grain, period_start
from core.saved import Verdict, nothing_saved
from core.time import DAY_S
from core.waits import Wait, approval_waits, needs_waits
from core.window import check_window, window_cutoff
from jobs import alerts
from jobs.job_log import JobResult, stop_requested
from jobs.schema_setup import require_head

JOB = "measure-rates"

# Conversations per transaction: their messages (a few per conversation), the runs they name and those runs'
# event counts stay a few megabytes, and each IN list stays far below every driver's parameter limit.
BATCH_SIZE = 2_000
MAX_BATCH_SIZE = 5_000
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
    at = int((now or datetime.now(UTC)).timestamp())
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
        with connection.begin():
            current = source_marks(connection)
            since = _since(stored_marks(connection))
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
                rows = _page(connection, listed, after, batch_size)
                if rows is None:
                    break
                ends = _conversation_batch(connection, rows, now, summary, keyset=listed is None)
                changed |= _periods(ends)
            after = int(rows[-1].uid) if listed is None else after + batch_size
            summary.batches += 1
            if progress is not None:
                progress(summary.conversations, total)
            if stop_requested():
                summary.stopped = True
                summary.seconds = time.perf_counter() - started
                return summary
        unnamed_since = None if touched is None else since
        after = 0
        while True:
            with connection.begin():
                runs = facts.unnamed_runs(
                    connection, after=after, limit=batch_size, since=unnamed_since, margin_s=RESCAN_MARGIN_S
                )
                if not runs:
                    break
                orphans = [orphan_fact(_run_row(row, EventCounts())) for row in runs]
                stored = facts.facts_of_runs(connection, [orphan.run_uid for orphan in orphans])
                changed |= _periods(facts.save_facts(connection, orphans, now, stored))
            summary.unnamed_runs += len(orphans)
            summary.runs += len(orphans)
            after = int(runs[-1].uid)
        with connection.begin():
            # A measurement by an older runrecord stored no row of a metric added since, in closed periods
            # too: every period is written once more (the facts stay as they are).
            summary.rates_rewritten = since is None or stored_rates_version(connection) < RATES_VERSION
            first_notice = tallies.first_notice_at(connection)
            for grain in grains:
                report, exclusions = _write_rates(
                    connection,
                    grain,
                    now=now,
                    window_s=window_s,
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
    summary.seconds = time.perf_counter() - started
    return summary


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


def _page(
    connection: Connection, listed: list[int] | None, after: int, batch_size: int
) -> Sequence[Any] | None:
    """The next batch of conversations: by uid after `after`, or the next slice of the listed uids (`after`
    is then the slice's start); None when there is none left."""
    if listed is None:
        rows = conversation_page(connection, after=after, limit=batch_size)
        return rows or None
    chosen = listed[after : after + batch_size]
    if not chosen:
        return None
    return conversations_by_uid(connection, chosen)


def _periods(ends: Iterable[int]) -> set[tuple[Grain, date]]:
    return {(grain, period_start(end, grain)) for end in set(ends) for grain in Grain}


def _run_row(row: Row[Any], counts: EventCounts) -> RunRow:
    return RunRow(
        uid=int(row.uid),
        uuid=str(row.uuid),
        status=str(row.status),
        configuration=str(row.configuration_identifier or ""),
        ended_at=run_end(int(row.finished_at), int(row.tstamp), int(row.started_at), int(row.crdate)),
        counts=counts,
        started_at=int(row.started_at) or int(row.crdate),
    )


# --- facts -----------------------------------------------------------------------------------------------


def _conversation_batch(
    connection: Connection, rows: Sequence[Row[Any]], now: int, summary: Summary, *, keyset: bool
) -> list[int]:
    """Read a batch of conversations, count them in core, save their facts; returns the ends (old and new)
    of the facts that changed. `keyset`: the batch is every conversation of its uid range."""
    uids = [int(row.uid) for row in rows]
    conversations = _conversations(connection, rows, uids, keyset=keyset)
    names = {conversation.uid: named_runs(conversation) for conversation in conversations}
    runs = _runs(connection, {name for found in names.values() for name in found})
    answers = {conversation.uid: completed_answers(conversation, runs) for conversation in conversations}
    verdicts = _verdicts(connection, [a for found in answers.values() for a in found])
    runs_of = {c.uid: [runs[name] for name in names[c.uid] if name in runs] for c in conversations}
    waits = _waits(connection, conversations, runs_of)
    counted: dict[tuple[int, int], Fact] = {}
    for conversation in conversations:
        found = conversation_facts(
            conversation,
            runs_of[conversation.uid],
            answers[conversation.uid],
            verdicts,
            waits.get(conversation.uid),
        )
        for fact in found:
            counted[(fact.run_uid, fact.message_uid)] = fact  # a run two conversations name: the later one
    # Counting afresh, the table holds no fact of these conversations yet.
    old = [] if summary.rebuilt else facts.facts_of_conversations(connection, uids)
    changed = _retire(connection, old, counted, now)
    changed += facts.save_facts(connection, list(counted.values()), now, old)
    summary.conversations += len(rows)
    summary.runs += sum(fact.runs for fact in counted.values())
    summary.answers += sum(len(found) for found in answers.values())
    summary.answers_without_run += sum(1 for found in answers.values() for a in found if a.run is None)
    summary.unreadable_messages += sum(
        1 for fact in counted.values() if Exclusion.MESSAGE_UNREADABLE in fact.problems
    )
    return changed


def _conversations(
    connection: Connection, rows: Sequence[Row[Any]], uids: list[int], *, keyset: bool
) -> list[ConversationInput]:
    messages: dict[int, list[Any]] = defaultdict(list)
    for m in messages_of(connection, uids, whole_range=keyset):
        messages[int(m.conversation)].append(
            stored_message(int(m.uid), int(m.sorting), str(m.role), int(m.crdate), m.payload)
        )
    return [
        conversation_input(
            int(row.uid),
            str(row.skill_identifier or ""),
            str(row.approval_run_uuid or ""),
            row.run_record,
            messages.get(int(row.uid), []),
        )
        for row in rows
    ]


def _runs(connection: Connection, names: set[str]) -> dict[str, RunRow]:
    by_uuid: dict[str, Row[Any]] = {}
    for row in runs_by_uuid(connection, names):
        by_uuid.setdefault(str(row.uuid), row)  # a uuid held twice: the first run with it
    counts = event_counts(connection, [int(row.uid) for row in by_uuid.values()])
    return {uuid: _run_row(row, counts.get(int(row.uid), EventCounts())) for uuid, row in by_uuid.items()}


def _verdicts(connection: Connection, answers: Sequence[Answer]) -> dict[int, Verdict]:
    """core.saved's verdict for every run whose completed answer claims a change (only those need one)."""
    claiming = {a.run.uid: a.run for a in answers if a.claims and a.run is not None}
    problems = event_problems(connection, list(claiming))
    verdicts: dict[int, Verdict] = {}
    to_read: list[int] = []
    for uid, run in claiming.items():
        verdict = verdict_from_counts(run.counts, problems.get(uid, 0))
        if verdict is None:
            to_read.append(uid)
        else:
            verdicts[uid] = verdict
    streams: dict[int, list[Any]] = defaultdict(list)
    for e in events_of(connection, to_read):
        streams[int(e.run)].append(event_of(e))
    for uid in to_read:
        verdicts[uid] = nothing_saved(streams.get(uid))
    return verdicts


def _waits(
    connection: Connection, conversations: Sequence[ConversationInput], runs_of: dict[int, list[RunRow]]
) -> dict[int, dict[int, tuple[Wait, ...]]]:
    """The approval waits of the conversations where a "go on" (or an unreadable message) could count."""
    chosen = [c for c in conversations if needs_waits(c)]
    waiting = {run.uid: run for c in chosen for run in runs_of[c.uid] if run.waited_for_approval}
    steps = steps_of(connection, list(waiting))
    return {
        c.uid: {
            run.uid: approval_waits(steps.get(run.uid, []), run.status)
            for run in runs_of[c.uid]
            if run.waited_for_approval
        }
        for c in chosen
    }


def _retire(
    connection: Connection, old: Sequence[Row[Any]], counted: dict[tuple[int, int], Fact], now: int
) -> list[int]:
    """Facts of these conversations they no longer give: a run becomes unnamed, an answer's row goes.
    Returns the ends of the facts that changed."""
    runs = [
        int(row.run_uid) for row in old if int(row.message_uid) == 0 and (int(row.run_uid), 0) not in counted
    ]
    gone = [
        int(row.uid) for row in old if int(row.message_uid) != 0 and (0, int(row.message_uid)) not in counted
    ]
    found = {int(row.uid): row for row in runs_by_uid(connection, runs)}
    gone += [
        int(row.uid)
        for row in old
        if int(row.message_uid) == 0 and int(row.run_uid) in set(runs) - set(found)
    ]
    facts.delete_facts(connection, gone)
    ends = [int(row.ended_at) for row in old if int(row.uid) in set(gone)]
    orphans = [orphan_fact(_run_row(row, EventCounts())) for row in found.values()]
    return ends + facts.save_facts(connection, orphans, now, old)


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
