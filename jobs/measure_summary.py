"""What one measurement of measure-rates did, and how it says so: one line for the job log, the lines the
command prints, and --json."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any

from core.counting import GO_ON_PATH_METRICS, Count
from core.facts import MEASURE_VERSION, Exclusion
from core.formatting import window_days
from core.go_on import GoOnPath
from core.metrics import RATES_VERSION, Metric
from core.periods import Grain

# How the summary line names each path of a stored "go on" (core.go_on).
GO_ON_PATH_NAMES: dict[GoOnPath, str] = {
    GoOnPath.FINISHED_OUTSIDE: "runFinishedOutside line",
    GoOnPath.SECOND_RUN: "second run",
    GoOnPath.UNKNOWN: "neither",
}


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
    rewritten: bool = False  # every period written afresh (facts of older rules, or an older RATES_VERSION)


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
    rates_rewritten: bool = False  # every period of some grain written afresh (PeriodReport.rewritten)
    periods: list[PeriodReport] = field(default_factory=list)
    exclusions: Counter[tuple[Metric, Exclusion]] = field(default_factory=Counter)
    first_notice: int | None = None  # when the first completed answer with the notice was stored
    agreement: Count = field(default_factory=Count)  # notice_agreement as stored, every period, all runs
    # What followed the stored "go on" messages (core.go_on) as stored, every period, all runs: by metric.
    go_on_paths: dict[Metric, Count] = field(default_factory=dict)
    seconds: float = 0.0
    phases: dict[str, float] = field(default_factory=dict)  # seconds per phase, every batch summed


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
        f"measured as of {when}, window {window_days(summary.window_s)}, in {summary.seconds:.1f} s "
        f"(batches: {summary.batches:,})",
        f"  read: conversations {summary.conversations:,} ({scope}); runs {summary.runs:,} "
        f"(named by no conversation: {summary.unnamed_runs:,}); completed answers {summary.answers:,} "
        f"(whose run is gone: {summary.answers_without_run:,}); assistant messages that cannot be read "
        f"{summary.unreadable_messages:,}",
    ]
    if summary.rebuilt:
        lines.append(f"  every fact counted afresh (none of rules version {MEASURE_VERSION} stored yet)")
    elif summary.rates_rewritten:
        afresh = ", ".join(report.grain.value for report in summary.periods if report.rewritten)
        lines.append(
            f"  every period written afresh at {afresh} (no rates of version {RATES_VERSION} from facts of "
            f"rules version {MEASURE_VERSION} stored there yet)"
        )
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
