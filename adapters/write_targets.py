"""The derivation's own tables that a night extends instead of reading the installation again (003_…):
the target of every tool_write event and the runs still pending.

* `extend_targets`: the targets of the events above the highest event uid read (less a margin, for events a
  slower transaction committed late), read from their payloads in SQL; the pending rows of their runs
  computed again. A night reads its new events, not every payload again.
* `pending` and the due page read tx_runrecord_pending_run: the runs with targets and no outcome, not every
  run with writes.
* `observed`: whether a correlation id already has an observed row in tx_nrllm_call_outcome, looked up by
  nr-llm's own index on correlation_id (KEY correlation, DOMAIN.md).

Plans that do not depend on statistics: the events are read by a range of their primary key, the pending
runs by theirs; tests/db/test_query_plans.py checks them with EXPLAIN.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Connection,
    FromClause,
    Join,
    Select,
    and_,
    case,
    delete,
    func,
    select,
    update,
)

from adapters import schema
from adapters.dialect import bulk, plans
from adapters.dialect import json as sqljson
from core.events import EventKind
from core.outcomes import CallOutcome
from core.run_status import FINISHED_STATUSES
from core.table_names import MAX_TABLE_NAME

target = schema.write_target
pending_run = schema.pending_run
scan_mark = schema.scan_mark

# Events are read again from this many uids below the highest one read: an event whose transaction committed
# after a later one's is still found (nr-llm writes a run's events as it goes, a few at a time).
LATE_EVENTS = 10_000

_OBSERVED = tuple(outcome.value for outcome in CallOutcome)


def extend_targets(connection: Connection) -> None:
    """Add the targets of the tool_write events not read yet, and recompute the pending rows of their runs."""
    dialect = connection.dialect.name
    highest = connection.execute(select(func.max(target.c.event_uid))).scalar()
    start = max(0, int(highest or 0) - LATE_EVENTS)
    columns = ["event_uid", "run_uid", "written_at", "tablename", "recuid"]

    def fill(guarded: bool) -> None:
        query = _targets_query(dialect, start, guarded=guarded)
        connection.execute(bulk.insert_or_ignore_select(dialect, target, columns, query))

    sqljson.cast_first(connection, fill)
    _recompute_pending(connection, start)


def _targets_query(dialect: str, after: int, *, guarded: bool) -> Select[Any]:
    event = schema.agentrun_event
    known = select(target.c.event_uid).where(target.c.event_uid == event.c.uid).exists()
    parsed = plans.fenced(
        dialect,
        select(
            event.c.uid,
            event.c.run,
            event.c.crdate,
            sqljson.json_document(dialect, event.c.payload, guarded=guarded).label("document"),
        ).where(event.c.uid > after, event.c.kind == EventKind.TOOL_WRITE.value, ~known),
    ).subquery("parsed")
    return select(
        parsed.c.uid,
        parsed.c.run,
        parsed.c.crdate,
        sqljson.json_string(dialect, parsed.c.document, "writeTargetTable", MAX_TABLE_NAME),
        sqljson.json_uid(dialect, parsed.c.document, "writeTargetUid"),
    )


def _answered(run_uid: ColumnElement[int]) -> ColumnElement[bool]:
    outcome = schema.run_outcome
    return select(outcome.c.run_uid).where(outcome.c.run_uid == run_uid).exists()


def _recompute_pending(connection: Connection, from_event_uid: int) -> None:
    """The pending rows of the runs with targets above from_event_uid, from all their targets."""
    dialect = connection.dialect.name
    # No DISTINCT: SQLite would read the whole run index for it instead of the primary key's range.
    touched = select(target.c.run_uid).where(target.c.event_uid > from_event_uid)
    connection.execute(delete(pending_run).where(pending_run.c.run_uid.in_(touched)))
    rows = (
        select(target.c.run_uid, func.max(target.c.written_at), func.count())
        .where(target.c.run_uid.in_(touched), ~_answered(target.c.run_uid))
        .group_by(target.c.run_uid)
    )
    columns = ["run_uid", "last_write_at", "writes"]
    connection.execute(bulk.insert_or_ignore_select(dialect, pending_run, columns, rows))


def unobserved(dialect: str, left: FromClause, correlation_id: ColumnElement[str]) -> tuple[Join, Any]:
    """`left` joined to the observed rows of tx_nrllm_call_outcome (from any deriver) of its correlation id,
    and the condition that there is none: one probe of nr-llm's index on correlation_id (KEY correlation)
    per row of `left`, the outcome read from the rows it finds (PostgreSQL: a fenced LATERAL probe, so that
    no plan depends on the statistics of a table that grows with the installation)."""
    call = schema.call_outcome
    on = and_(call.c.correlation_id == correlation_id, call.c.outcome.in_(_OBSERVED))
    joined, found = plans.outer_probe(dialect, left, call, on, (call.c.uid,), "observed")
    return joined, found.c.uid.is_(None)


def _set_mark(connection: Connection, name: str, uid: int) -> None:
    dialect = connection.dialect.name
    connection.execute(bulk.insert_or_ignore(dialect, scan_mark).values(name=name, last_uid=0))
    connection.execute(
        update(scan_mark).where(scan_mark.c.name == name, scan_mark.c.last_uid < uid).values(last_uid=uid)
    )


# --- the pending runs --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Pending:
    """Runs with writes and no observed outcome: those due now, those still inside their window, and those
    past it that have not finished (they may still write; core.run_status.is_finished)."""

    due: int
    inside_window: int
    unfinished: int = 0


def _running(run: Any) -> ColumnElement[bool]:
    return and_(run.c.uid.is_not(None), func.coalesce(run.c.status, "").not_in(sorted(FINISHED_STATUSES)))


def pending(connection: Connection, *, cutoff: int) -> Pending:
    """How many unanswered runs are due (last write before the cutoff, core.window.window_cutoff; finished or
    gone), how many still wait for their window, and how many are past it but not finished."""
    p, run = pending_run, schema.agentrun
    past = p.c.last_write_at < cutoff
    running = _running(run)

    def total(condition: ColumnElement[bool]) -> ColumnElement[int]:
        return func.coalesce(func.sum(case((condition, 1), else_=0)), 0)

    query = (
        select(total(and_(past, ~running)), total(p.c.last_write_at >= cutoff), total(and_(past, running)))
        .select_from(p.outerjoin(run, run.c.uid == p.c.run_uid))
        .where(~_answered(p.c.run_uid))
    )
    row = connection.execute(query).one()
    return Pending(due=int(row[0]), inside_window=int(row[1]), unfinished=int(row[2]))


def due_page_query(dialect: str, *, after: int, cutoff: int, limit: int) -> Select[Any]:
    """The next page of due runs after run uid `after` (keyset), answered runs excluded by an anti-join:
    run_uid, correlation id ('' without), configuration, last write, writes, whether the job derives it now
    (a uuid and a finished status: core.run_status), whether its row is gone.

    A run is due when the window of its LAST write has closed (DESIGN.md rule 1, core.outcomes.is_due):
    last_write_at < cutoff, the cutoff being core.window.window_cutoff(now, window).
    """
    p, run = pending_run, schema.agentrun
    page = (
        select(p.c.run_uid, p.c.last_write_at, p.c.writes)
        .where(p.c.run_uid > after, p.c.last_write_at < cutoff, ~_answered(p.c.run_uid))
        .order_by(p.c.run_uid)
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
    uuid = func.coalesce(found.c.uuid, "")
    derivable = and_(uuid != "", found.c.status.in_(sorted(FINISHED_STATUSES)))
    return select(
        page.c.run_uid,
        uuid.label("correlation_id"),
        func.coalesce(found.c.configuration_identifier, "").label("configuration_identifier"),
        page.c.last_write_at,
        page.c.writes,
        case((derivable, 1), else_=0).label("derivable"),
        case((found.c.uuid.is_(None), 1), else_=0).label("gone"),
    ).select_from(joined)


def forget_pending(connection: Connection, runs: Select[Any]) -> None:
    """Drop the pending rows of the runs (a select of run uids): they have their outcome now."""
    connection.execute(delete(pending_run).where(pending_run.c.run_uid.in_(runs)))
