"""The Runs page: a keyset page of runs, each with what it did and its observed outcome.

A page is at most PAGE_SIZE runs, newest start first, after a keyset bound (adapters.runs reads them: no
read loads all runs). What a run did (tools ran and failed, records written) is read from its own events
through core (the run record and the refused-call reading), so the table says what the run record and the
activity list say. Never read: `be_user`, the events' arguments and results, sys_history's `userid` and
the values in history_data.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine

from adapters import runs as run_reads
from adapters import schema
from adapters.database import reported
from adapters.events import read_events
from adapters.runs import Bound, RunFilter, Tables
from core.events import Event, EventKind, split_segments
from core.formatting import outcome_label
from core.run_record import build_entries
from core.run_status import RunStatus
from core.window import window_closed, window_closes_at
from dashboard.queries.common import when

NO_RUNS_YET = "This database has no runs yet: the chat has not started an agent run."
NO_MATCH = "No run matches these filters."
NOT_MEASURED = (
    "No run matches yet: skill, end, claim, denial and notice are what measure-rates finds of a run, and it "
    "has not run on this database (`runrecord measure-rates`)."
)
PAGE_SIZE = 50  # runs a page shows: a screen of the table, and the events of 50 runs are one quick query

STATUSES: tuple[str, ...] = tuple(status.value for status in RunStatus)


@dataclass(frozen=True)
class RunsPage:
    """One page of runs, newest first, how many runs match the filter in all, and how many there are."""

    rows: list[
        dict[str, Any]
    ]  # short uuid, uuid, started, configuration, status, tools, failed, records, outcome
    total: int
    next_bound: Bound | None  # the keyset bound of the next page
    problems: int  # event rows of these runs that could not be read (counted, the rest shown)
    runs: int = 0  # every run of the installation, whatever the filter (0: it has none yet)


def _tables(tables: frozenset[str]) -> Tables:
    return Tables(outcomes=schema.run_outcome.name in tables, facts=schema.measure_fact.name in tables)


def skills(engine: Engine, tables: frozenset[str]) -> list[str]:
    """The skills of the measured runs' conversations (NO_SKILL among them); none before measure-rates."""
    if schema.measure_fact.name not in tables:
        return []
    with reported(engine, "reading the skills"), engine.connect() as connection:
        return run_reads.skills(connection)


def configurations(engine: Engine, tables: frozenset[str]) -> list[str]:
    """The configuration identifiers the installation has (none without tx_nrllm_configuration)."""
    if schema.nrllm_configuration.name not in tables:
        return []
    with reported(engine, "reading the configurations"), engine.connect() as connection:
        return run_reads.configurations(connection)


def full_uuids(engine: Engine, reference: str) -> tuple[str, ...]:
    """The uuid of the run a uuid or short id names; none when no run does, two when several do."""
    with reported(engine, "finding the run"), engine.connect() as connection:
        return run_reads.uuids_of(connection, reference)


def count_runs(engine: Engine, chosen: RunFilter, tables: frozenset[str]) -> int:
    """How many runs match the filter (no outcome table: no run has an outcome; no facts: none matches a
    filter on them)."""
    with reported(engine, "counting the runs"), engine.connect() as connection:
        return run_reads.count_runs(connection, chosen, tables=_tables(tables))


def runs_page(
    engine: Engine,
    chosen: RunFilter,
    tables: frozenset[str],
    *,
    before: Bound | None,
    now: int,
    window_s: int,
    limit: int = PAGE_SIZE,
) -> RunsPage:
    """The runs matching the filter after the keyset bound `before` (None: from the newest), newest first."""
    readable = _tables(tables)
    with reported(engine, "reading the runs"), engine.connect() as connection:
        rows = run_reads.run_page(connection, chosen, tables=readable, before=before, limit=limit)
        events = read_events(connection, [row.uid for row in rows])
        total = run_reads.count_runs(connection, chosen, tables=readable)
        every = total if total or chosen == RunFilter() else run_reads.count_all(connection)
    page = [_row(row, events.by_run.get(row.uid, ()), now, window_s) for row in rows]
    bound = (rows[-1].started_at, rows[-1].uid) if rows else None
    return RunsPage(page, total, bound, len(events.problems), every)


def _row(row: Any, events: Sequence[Event], now: int, window_s: int) -> dict[str, Any]:
    segments = split_segments(events)
    entries = build_entries(row.uuid, segments, status=row.status, position=0, at=row.started_at)
    calls = sum(tool.calls for entry in entries for tool in entry.tools)
    failed = sum(tool.failed for entry in entries for tool in entry.tools)
    records = {write.record for entry in entries for write in entry.writes}
    last_write = max((event.crdate for event in events if event.kind is EventKind.TOOL_WRITE), default=None)
    outcome = row._mapping.get("outcome")
    return {
        "run": row.uuid[: run_reads.SHORT_ID],
        "uuid": row.uuid,
        "started": when(row.started_at),
        "configuration": row.configuration_identifier,
        "status": ended(row.status, row.termination_reason),
        "tools ran": calls,
        "failed": failed,
        "records written": len(records),
        "outcome": outcome_label(outcome) if outcome else observed_later(last_write, now, window_s),
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
    closes = window_closes_at(last_write_at, window_s)
    if not window_closed(last_write_at, now, window_s):
        return f"window closes on {when(closes)[:10]}"
    return "window closed, not derived yet"
