"""The Runs page: a keyset page of runs, each with what it did and its observed outcome.

A page is at most PAGE_SIZE runs, newest uid first, after a keyset bound: no query here loads all runs. What
a run did (tools ran and failed, records written) is read from its own events through core (the run record
and the refused-call reading), so the table says what the run record and the activity list say. Never
selected: `be_user`, the events' arguments and results (core.events keeps only what the privacy filter
keeps), sys_history's `userid` and the values in history_data (only its keys, read in SQL).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from sqlalchemy import Connection, Engine, Select, and_, func, select

from adapters import schema
from adapters.database import reported
from adapters.events import event_of
from adapters.events import events_of as event_rows
from core.events import Event, EventKind, EventProblem, split_segments
from core.run_record import build_entries
from dashboard.queries.common import when

PAGE_SIZE = 50  # runs a page shows: a screen of the table, and the events of 50 runs are one quick query

STATUSES = (
    "completed",
    "failed",
    "cancelled",
    "waiting_for_approval",
    "waiting_for_input",
    "running",
    "queued",
)
OUTCOMES = ("accepted_unchanged", "edited", "discarded", "unknown")
NO_OUTCOME = "none yet"  # the filter value for runs without an observed outcome (no writes, or not derived)


@dataclass(frozen=True)
class RunFilter:
    """The Runs table's filters; None means any."""

    configuration: str | None = None
    status: str | None = None
    outcome: str | None = None  # one of OUTCOMES, or NO_OUTCOME
    started_from: date | None = None
    started_to: date | None = None  # inclusive


@dataclass(frozen=True)
class RunsPage:
    """One page of runs, newest first, and how many runs match the filter in all."""

    rows: list[
        dict[str, Any]
    ]  # short uuid, uuid, configuration, started, ended, tools, failed, records, outcome
    total: int
    last_uid: int | None  # the keyset bound of the next page
    problems: int  # event rows of these runs that could not be read (counted, the rest shown)


def configurations(engine: Engine, tables: frozenset[str]) -> list[str]:
    """The configuration identifiers the installation has (tx_nrllm_configuration; small)."""
    if schema.nrllm_configuration.name not in tables:
        return []
    c = schema.nrllm_configuration.c
    with reported(engine, "reading the configurations"), engine.connect() as connection:
        names = connection.execute(select(c.identifier).where(c.identifier != "").distinct()).scalars()
        return sorted(set(names))


def _conditions(chosen: RunFilter, has_outcomes: bool) -> list[Any]:
    r = schema.agentrun.c
    o = schema.run_outcome.c
    conditions: list[Any] = []
    if chosen.configuration:
        conditions.append(r.configuration_identifier == chosen.configuration)
    if chosen.status:
        conditions.append(r.status == chosen.status)
    if chosen.started_from is not None:
        conditions.append(r.started_at >= unix_day(chosen.started_from))
    if chosen.started_to is not None:
        conditions.append(r.started_at < unix_day(chosen.started_to + timedelta(days=1)))
    if chosen.outcome in OUTCOMES:
        conditions.append(o.outcome == chosen.outcome)
    if chosen.outcome == NO_OUTCOME and has_outcomes:
        conditions.append(~select(o.run_uid).where(o.run_uid == r.uid).exists())
    return conditions


def _select(
    columns: Sequence[Any], chosen: RunFilter, *, has_outcomes: bool, outcome_column: bool
) -> Select[Any]:
    """The runs matching the filter; joined to their outcome row when it is filtered on or shown."""
    run = schema.agentrun
    outcome = schema.run_outcome
    if chosen.outcome in OUTCOMES:
        source: Any = run.join(outcome, outcome.c.run_uid == run.c.uid)
    elif outcome_column:
        source = run.outerjoin(outcome, outcome.c.run_uid == run.c.uid)
    else:
        source = run
    query = select(*columns).select_from(source)
    conditions = _conditions(chosen, has_outcomes)
    return query.where(and_(*conditions)) if conditions else query


def count_runs(engine: Engine, chosen: RunFilter, tables: frozenset[str]) -> int:
    """How many runs match the filter (no outcome table: no run has an outcome)."""
    has_outcomes = schema.run_outcome.name in tables
    if chosen.outcome in OUTCOMES and not has_outcomes:
        return 0
    query = _select([func.count()], chosen, has_outcomes=has_outcomes, outcome_column=False)
    with reported(engine, "counting the runs"), engine.connect() as connection:
        return int(connection.execute(query).scalar_one())


def runs_page(
    engine: Engine,
    chosen: RunFilter,
    tables: frozenset[str],
    *,
    before_uid: int | None,
    now: int,
    window_s: int,
    limit: int = PAGE_SIZE,
) -> RunsPage:
    """The runs matching the filter with uid below before_uid (None: from the newest), newest first."""
    r = schema.agentrun.c
    has_outcomes = schema.run_outcome.name in tables
    if chosen.outcome in OUTCOMES and not has_outcomes:
        return RunsPage([], 0, None, 0)
    columns = [r.uid, r.uuid, r.configuration_identifier, r.status, r.termination_reason, r.started_at]
    if has_outcomes:
        columns.append(schema.run_outcome.c.outcome)
    query = _select(columns, chosen, has_outcomes=has_outcomes, outcome_column=has_outcomes)
    if before_uid is not None:
        query = query.where(r.uid < before_uid)
    query = query.order_by(r.uid.desc()).limit(limit)
    with reported(engine, "reading the runs"), engine.connect() as connection:
        rows = connection.execute(query).all()
        events, problems = events_of(connection, [row.uid for row in rows])
    total = count_runs(engine, chosen, tables)
    page = [_row(row, events.get(row.uid, ()), now, window_s) for row in rows]
    return RunsPage(page, total, rows[-1].uid if rows else None, problems)


def _row(row: Any, events: Sequence[Event], now: int, window_s: int) -> dict[str, Any]:
    segments = split_segments(events)
    entries = build_entries(row.uuid, segments, status=row.status, position=0, at=row.started_at)
    calls = sum(tool.calls for entry in entries for tool in entry.tools)
    failed = sum(tool.failed for entry in entries for tool in entry.tools)
    records = {write.record for entry in entries for write in entry.writes}
    last_write = max((event.crdate for event in events if event.kind is EventKind.TOOL_WRITE), default=None)
    outcome = row._mapping.get("outcome")
    return {
        "run": row.uuid[:8],
        "uuid": row.uuid,
        "configuration": row.configuration_identifier,
        "started": when(row.started_at),
        "ended": ended(row.status, row.termination_reason),
        "tools ran": calls,
        "failed": failed,
        "records written": len(records),
        "outcome": outcome or observed_later(last_write, now, window_s),
    }


def ended(status: str, termination_reason: str) -> str:
    """How a run ended: its status, and nr-llm's termination reason where it says more."""
    if termination_reason and termination_reason != status:
        return f"{status} ({termination_reason})"
    return status


def observed_later(last_write_at: int | None, now: int, window_s: int) -> str:
    """What stands where a run has no outcome yet: no writes, its window's end, or waiting for the job."""
    if last_write_at is None:
        return "no writes"
    closes = last_write_at + window_s
    if closes >= now:
        return f"window closes on {when(closes)[:10]}"
    return "window closed, not derived yet"


def events_of(connection: Connection, run_uids: Sequence[int]) -> tuple[dict[int, tuple[Event, ...]], int]:
    """The events of the runs, read by core from the payload keys a rule may read (the database hands over
    no argument, result or content)."""
    if not run_uids:
        return {}, 0
    rows = event_rows(connection, run_uids)
    found: dict[int, list[Event]] = defaultdict(list)
    problems = 0
    for row in rows:
        parsed = event_of(row)
        if isinstance(parsed, EventProblem):
            problems += 1
        else:
            found[row.run].append(parsed)
    return {uid: tuple(events) for uid, events in found.items()}, problems


def unix_day(day: date) -> int:
    """Midnight UTC of the day, as unix seconds (the dashboard shows every time in UTC)."""
    return int(datetime.combine(day, time(), tzinfo=UTC).timestamp())
