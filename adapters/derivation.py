"""The write targets and due runs of the observed-outcome derivation (003_…): set-based, a few queries
per batch of runs.

The job first copies every tool_write event's target into a temporary table (`write_target`), read from
the event payload in SQL. That table is what makes the rest set-based: the due runs are a keyset page over
its run index with the already-answered runs excluded in the query (003_…, "The already-answered runs are
excluded in the QUERY"), and "was this history row another AI write?" (DESIGN.md rule 4) is an index lookup
instead of a scan of the events for every record (adapters.history).

Plans that do not depend on statistics (installations rarely run ANALYZE): a batch's runs are bound as one
parameter; on PostgreSQL each is looked up through a LATERAL subquery fenced with OFFSET 0, since its
planner, without statistics, answers `run_uid = ANY(…)` or a plain join by reading every row of the table
(adapters.dialect.plans). tests/db/test_query_plans.py checks the plans with EXPLAIN.
"""

from __future__ import annotations

import functools
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any, NamedTuple

from sqlalchemy import (
    Column,
    ColumnElement,
    Connection,
    Index,
    Integer,
    MetaData,
    Select,
    String,
    Table,
    and_,
    case,
    func,
    insert,
    select,
)
from sqlalchemy.schema import CreateIndex, CreateTable

from adapters import schema
from adapters.dialect import json as sqljson
from adapters.dialect import plans
from adapters.dialect import session as sqlsession
from core.events import EventKind
from core.run_status import FINISHED_STATUSES
from core.table_names import MAX_TABLE_NAME, is_table_name

# --- the write targets of every tool_write event -----------------------------------------------------------

_scratch = MetaData()

# Temporary: each job run builds its own from the events, so it is never stale, two processes never share
# one, and the installation's schema is left as it is. tablename/recuid are NULL when the payload does not
# name a readable target (DESIGN.md rule 6).
# No primary key: event_uid is the events' own, unique already, and no query looks a target up by it.
write_target = Table(
    "tx_runrecord_write_target",
    _scratch,
    Column("event_uid", Integer, nullable=False),
    Column("run_uid", Integer, nullable=False),
    Column("written_at", Integer, nullable=False),
    Column("tablename", String(MAX_TABLE_NAME), nullable=True),
    Column("recuid", Integer, nullable=True),
    prefixes=["TEMPORARY"],
)
# Built after the table is filled (faster than keeping them up to date row by row).
_INDEXES = (
    Index("tx_runrecord_write_target_run", write_target.c.run_uid, write_target.c.written_at),
    Index(
        "tx_runrecord_write_target_record",
        write_target.c.tablename,
        write_target.c.recuid,
        write_target.c.written_at,
    ),
)


def create_write_targets(connection: Connection) -> int:
    """Fill a fresh temporary write_target table from every tool_write event; returns its row count."""
    dialect = connection.dialect.name
    connection.exec_driver_sql(sqlsession.drop_temporary_table(dialect, write_target))
    connection.execute(CreateTable(write_target))  # without its indexes: those are built once it is full
    columns = ["event_uid", "run_uid", "written_at", "tablename", "recuid"]

    def fill(guarded: bool) -> None:
        targets = _write_targets_query(dialect, guarded=guarded)
        connection.execute(insert(write_target).from_select(columns, targets))

    sqljson.cast_first(connection, fill)
    for index in write_target.indexes:
        connection.execute(CreateIndex(index))
    for statement in sqlsession.analyze_statements(dialect, write_target):
        connection.exec_driver_sql(statement)
    return int(connection.execute(select(func.count()).select_from(write_target)).scalar_one())


def _write_targets_query(dialect: str, *, guarded: bool) -> Select[Any]:
    event = schema.agentrun_event
    parsed = plans.fenced(
        dialect,
        select(
            event.c.uid,
            event.c.run,
            event.c.crdate,
            sqljson.json_document(dialect, event.c.payload, guarded=guarded).label("document"),
        ).where(event.c.kind == EventKind.TOOL_WRITE.value),
    ).subquery("parsed")
    return select(
        parsed.c.uid,
        parsed.c.run,
        parsed.c.crdate,
        sqljson.json_string(dialect, parsed.c.document, "writeTargetTable", MAX_TABLE_NAME),
        sqljson.json_uid(dialect, parsed.c.document, "writeTargetUid"),
    )


def drop_write_targets(connection: Connection) -> None:
    """Drop this connection's temporary write_target table (a pooled connection outlives the job)."""
    connection.exec_driver_sql(sqlsession.drop_temporary_table(connection.dialect.name, write_target))


def readable_target(tablename: str | None, recuid: int | None) -> bool:
    """Whether a write target names a table and a uid the way DOMAIN.md says one does."""
    return tablename is not None and recuid is not None and _is_table_name(tablename)


@functools.lru_cache(maxsize=1_024)
def _is_table_name(text: str) -> bool:
    # A job reads a few dozen distinct table names, each for thousands of writes.
    return is_table_name(text)


# --- due runs ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DueRun:
    """A run whose last write's window has closed and that has no observed outcome yet."""

    run_uid: int
    uuid: str | None  # None: the run row is gone (purged); '' : the run has no uuid
    configuration_identifier: str
    last_write_at: int
    writes: int
    status: str | None = None  # tx_nrllm_agentrun.status; None: the run row is gone


@dataclass(frozen=True)
class Pending:
    """Runs with writes and no observed outcome: those due now, those still inside their window, and those
    past it that have not finished (they may still write; core.run_status.is_finished)."""

    due: int
    inside_window: int
    unfinished: int = 0


def _answered(run_uid: ColumnElement[int], *, dialect: str | None = None) -> ColumnElement[bool]:
    """Whether the run has its row in tx_runrecord_run_outcome (EXISTS, to be negated into an anti-join).

    With `dialect` PostgreSQL the subquery is fenced (OFFSET 0): it stays a probe of the run_uid index for
    each candidate, in the candidates' order, so that a page stops after `limit` runs. Unfenced, and without
    statistics on our table, the planner may hash the whole of it for every page instead, and read every
    write target after the keyset: a cost that grows with the square of the runs in a first derivation.
    """
    outcome = schema.run_outcome
    probe = select(outcome.c.run_uid).where(outcome.c.run_uid == run_uid)
    return (probe if dialect is None else plans.fenced(dialect, probe)).exists()


def pending(connection: Connection, *, cutoff: int) -> Pending:
    """How many unanswered runs are due (last write before the cutoff, core.window.window_cutoff; finished or
    gone), how many still wait for their window, and how many are past it but not finished."""
    w, run = write_target, schema.agentrun
    runs = (
        select(w.c.run_uid, func.max(w.c.written_at).label("last_write_at"))
        .where(~_answered(w.c.run_uid))
        .group_by(w.c.run_uid)
        .subquery("runs")
    )
    past = runs.c.last_write_at < cutoff
    running = and_(run.c.uid.is_not(None), func.coalesce(run.c.status, "").not_in(sorted(FINISHED_STATUSES)))

    def total(condition: ColumnElement[bool]) -> ColumnElement[int]:
        return func.coalesce(func.sum(case((condition, 1), else_=0)), 0)

    query = select(
        total(and_(past, ~running)), total(runs.c.last_write_at >= cutoff), total(and_(past, running))
    ).select_from(runs.outerjoin(run, run.c.uid == runs.c.run_uid))
    row = connection.execute(query).one()
    return Pending(due=int(row[0]), inside_window=int(row[1]), unfinished=int(row[2]))


def due_runs_query(dialect: str, *, after: int, cutoff: int, limit: int) -> Select[Any]:
    """The next page of due runs after run uid `after` (keyset), answered runs excluded by an anti-join.

    A run is due when the window of its LAST write has closed (DESIGN.md rule 1, core.outcomes.is_due):
    last_write_at < cutoff, the cutoff being core.window.window_cutoff(now, window).
    """
    w = write_target
    run = schema.agentrun
    last_write_at = func.max(w.c.written_at)
    page = (
        select(w.c.run_uid, last_write_at.label("last_write_at"), func.count().label("writes"))
        .where(w.c.run_uid > after, ~_answered(w.c.run_uid, dialect=dialect))
        .group_by(w.c.run_uid)
        .having(last_write_at < cutoff)
        .order_by(w.c.run_uid)
        .limit(limit)
        .subquery("page")
    )
    # An outer join: a run whose row is gone still moves the keyset on (and is reported, not derived).
    joined, found = plans.outer_probe(
        dialect,
        page,
        run,
        run.c.uid == page.c.run_uid,
        (run.c.uuid, run.c.configuration_identifier, run.c.status),
        "run",
    )
    return (
        select(
            page.c.run_uid,
            found.c.uuid,
            found.c.configuration_identifier,
            page.c.last_write_at,
            page.c.writes,
            found.c.status,
        )
        .select_from(joined)
        .order_by(page.c.run_uid)
    )


def due_runs(connection: Connection, *, after: int, cutoff: int, limit: int) -> list[DueRun]:
    """The next page of due runs (see due_runs_query)."""
    query = due_runs_query(connection.dialect.name, after=after, cutoff=cutoff, limit=limit)
    return [
        DueRun(run_uid, uuid, configuration or "", int(last_write_at), int(writes), status)
        for run_uid, uuid, configuration, last_write_at, writes, status in connection.execute(query).all()
    ]


# --- one batch ---------------------------------------------------------------------------------------------


class TargetRow(NamedTuple):
    """One tool_write of a due run, its target as read from the payload (None when unreadable).

    A named tuple, not a frozen dataclass: one is built for every write, in less than half the time
    (target_row fills in `readable`)."""

    event_uid: int
    run_uid: int
    written_at: int
    tablename: str | None
    recuid: int | None
    readable: bool


def target_row(
    event_uid: int, run_uid: int, written_at: int, tablename: str | None, recuid: int | None
) -> TargetRow:
    """A write target as read from the payload, with whether it names a readable target."""
    return TargetRow(event_uid, run_uid, written_at, tablename, recuid, readable_target(tablename, recuid))


def batch_writes_query(dialect: str, run_uids: Collection[int]) -> Select[Any]:
    """Every tool_write of the given runs, in event order (see adapters.dialect.plans.for_values)."""
    w = write_target

    def lookup(match: plans.Match) -> Select[Any]:
        columns = (w.c.event_uid, w.c.run_uid, w.c.written_at, w.c.tablename, w.c.recuid)
        return select(*columns).where(match(w.c.run_uid))

    found = plans.for_values(dialect, Integer(), run_uids, lookup, "run_writes").subquery("writes")
    return select(*found.c).order_by(found.c.run_uid, found.c.event_uid)


def batch_writes(connection: Connection, run_uids: Collection[int]) -> list[TargetRow]:
    """Every tool_write of the given runs, in event order."""
    if not run_uids:
        return []
    query = batch_writes_query(connection.dialect.name, run_uids)
    return [target_row(*row) for row in connection.execute(query).all()]
