"""The derivation's own tables that a night extends instead of reading the installation again (003_…):
the target of every tool_write event and the runs still pending.

* `extend_targets`: the targets of the tool_write events not read yet, read from their payloads in SQL, and
  the pending rows of their runs computed again. A night reads its new events, not every payload again, and
  loses none that commits late (below).
* `pending` and the due page read tx_runrecord_pending_run: the runs with targets and no outcome, not every
  run with writes.
* `unobserved`: whether a correlation id has no observed row in tx_nrllm_call_outcome yet, looked up by
  nr-llm's own index on correlation_id (KEY correlation, DOMAIN.md).

**No event is lost, however late it commits.** An event's uid is drawn when it is inserted, and it becomes
visible when its transaction commits: an installation whose writer held a transaction open could commit
events whose uids lie far below those read since. What holds them back is the run. nr-llm inserts the run's
row (running, or queued for a worker) before its first event, appends each event with an insert of its own as
the loop goes, and settles the row to its terminal status once, after the last one (AgentRunRepository:
startRun or enqueueRun, recordEvent, finishRun; neither nr-llm nor the chat opens a transaction around
them). So a run's row is there, not finished, until its events have committed, and it finishes (completed,
failed, cancelled) with or after them. So a night

1. notes the highest event uid there is (the next night reads the events above it);
2. keeps every run that is not finished in tx_runrecord_unfinished_run (nr-llm's KEY status_lookup);
3. reads the tool_write events above the last night's highest uid by their primary key, and those of the
   LATE_EVENTS uids below it that have no target yet;
4. reads again, by run (KEY run_sequence), every event of the kept runs that have finished since, and lets
   them go.

An event the range of step 3 missed was not committed when the last night noted its highest uid, although a
later uid was; its run was not finished then either, so step 2 kept it, and step 4 reads its events once it
has finished, with the event among them. A kept run is not derived before (`due_page_query`). The reads are
indexed and incremental: the range of new uids, the runs not finished (a few in flight), the events of the
runs that finished since.

Plans that do not depend on statistics: the events are read by a range of their primary key or by run, the
pending runs by theirs, and on PostgreSQL each pending run's outcome and row by its key (`_unanswered`);
tests/db/test_query_plans.py checks them with EXPLAIN.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Connection,
    Delete,
    FromClause,
    Integer,
    Join,
    Select,
    String,
    and_,
    case,
    delete,
    func,
    or_,
    select,
    true,
    update,
)

from adapters import schema
from adapters.dialect import bulk, plans
from adapters.dialect import json as sqljson
from adapters.dialect.names import POSTGRESQL, SQLITE, is_mariadb
from core.events import EventKind
from core.outcomes import CallOutcome
from core.run_status import FINISHED_STATUSES, KNOWN_STATUSES, RunStatus
from core.table_names import MAX_TABLE_NAME

target = schema.write_target
RUN_INDEX = "tx_runrecord_write_target_run"  # our targets' (run_uid, written_at) key (adapters.schema)
pending_run = schema.pending_run
unfinished_run = schema.unfinished_run
scan_mark = schema.scan_mark

# The range of new events starts this many uids below the last night's highest: beside the runs kept while
# they were not finished, it finds an event whose run's own row committed with it (never seen unfinished).
LATE_EVENTS = 10_000
# tx_runrecord_scan_mark's row holding the highest event uid the last night saw.
EVENT_MARK = "tx_nrllm_agentrun_event"
# The statuses of a run that may still write (DOMAIN.md lists every status nr-llm sets).
UNFINISHED_STATUSES = tuple(sorted(status.value for status in RunStatus if status not in FINISHED_STATUSES))
_TARGET_COLUMNS = ["event_uid", "run_uid", "written_at", "tablename", "recuid"]
# The index of nr-llm's event table a look-up by each key goes through.
_EVENT_INDEX = {"uid": "PRIMARY", "run": "run_sequence"}
# The members of a tool_write event's payload that name its target (DOMAIN.md).
_TABLE_KEY, _UID_KEY = "writeTargetTable", "writeTargetUid"

_OBSERVED = tuple(outcome.value for outcome in CallOutcome)


def extend_targets(connection: Connection) -> None:
    """Add the targets of the tool_write events not read yet, and recompute the pending rows of their runs;
    no event is missed however late it commits (the module's steps 1-4)."""
    dialect = connection.dialect.name
    mark = _last_mark(connection)
    start = max(0, mark - LATE_EVENTS)
    highest = connection.execute(select(func.max(schema.agentrun_event.c.uid))).scalar()
    _keep_unfinished(connection)
    missed = _missed_below(connection, start, mark)

    def read(guarded: bool) -> None:
        events = [_in_uid_range(dialect, mark, guarded=guarded)]
        if missed:
            events.append(_of_keys(dialect, "uid", missed, guarded=guarded))
        for query in map(partial(_targets_query, dialect), events):
            connection.execute(bulk.insert_or_ignore_select(dialect, target, _TARGET_COLUMNS, query))

    sqljson.cast_first(connection, read)
    new = target.c.event_uid > start
    if dialect == POSTGRESQL:
        # The new targets by their key's range, fenced: else, with some statistics of a small table,
        # PostgreSQL read the run index whole to have the runs in order, each target checked for the range.
        fresh = select(target.c.run_uid).where(new).offset(0).subquery("fresh")
        forget = plans.delete_matching(dialect, pending_run, pending_run.c.run_uid, fresh.c.run_uid)
        touched = select(fresh.c.run_uid)
    else:
        forget = plans.delete_matching(dialect, pending_run, pending_run.c.run_uid, target.c.run_uid, new)
        # The new targets by their key's range (MariaDB: whatever its statistics say of the table).
        touched = plans.by_index(dialect, select(target.c.run_uid).where(new), target, "PRIMARY")
    _recompute_pending(connection, touched, forget, all_new=new if start == 0 else None)
    _read_finished_runs(connection)
    if highest is not None:
        _set_mark(connection, EVENT_MARK, int(highest))


def _last_mark(connection: Connection) -> int:
    """The last night's highest event uid; before the first night that noted one, the highest target read
    (0 before any)."""
    mark = connection.execute(select(scan_mark.c.last_uid).where(scan_mark.c.name == EVENT_MARK)).scalar()
    if mark is None:
        highest: Select[Any] = select(func.max(target.c.event_uid))
        if connection.dialect.name == POSTGRESQL:
            # Read from the end of the primary key whatever the statistics: PostgreSQL planned max() over a
            # table it had seen empty as a read of the whole key.
            highest = select(target.c.event_uid).order_by(target.c.event_uid.desc()).limit(1)
        mark = connection.execute(highest).scalar()
    return int(mark or 0)


def _missed_below(connection: Connection, start: int, mark: int) -> list[int]:
    """Step 3's overlap: the tool_write events from `start` up to the mark that have no target yet (an event
    whose run's row committed with it, never seen unfinished). Most were read the night before: their
    payloads are not parsed again. Each is looked up by the targets' key, in a statement of its own, not in
    the one that fills the table (the module's `_event_columns`)."""
    dialect, event = connection.dialect.name, schema.agentrun_event
    overlap = select(event.c.uid).where(
        event.c.uid > start, event.c.uid <= mark, event.c.kind == EventKind.TOOL_WRITE.value
    )
    events = plans.by_index(dialect, overlap, event, "PRIMARY").subquery("overlap")
    # A join, not NOT EXISTS: MariaDB answered that with a read of every target's key (17 ms a night at the
    # fanout shape's 0.05, growing with the targets), a join with a probe of the key for each event.
    joined, found = plans.outer_probe(
        dialect, events, target, target.c.event_uid == events.c.uid, (target.c.event_uid,), "read"
    )
    unread = select(events.c.uid).select_from(joined).where(found.c.event_uid.is_(None))
    unread = plans.by_index(dialect, unread, target, "PRIMARY")
    return [int(uid) for uid in connection.execute(unread).scalars()]


def _keep_unfinished(connection: Connection) -> None:
    """Step 2: every run not finished now, kept until its events have been read after it finished."""
    dialect = connection.dialect.name
    run = schema.agentrun

    def lookup(match: plans.Match) -> Select[Any]:
        return select(run.c.uid).where(match(run.c.status))

    runs = plans.for_values(dialect, String(), UNFINISHED_STATUSES, lookup, "unfinished", skewed=True)
    runs = plans.by_index(dialect, runs, run, "status_lookup")
    connection.execute(bulk.insert_or_ignore_select(dialect, unfinished_run, ["run_uid"], runs))


def _read_finished_runs(connection: Connection) -> None:
    """Step 4: the events of the kept runs that have finished (or are gone) since, read again by run."""
    dialect = connection.dialect.name
    u, run = unfinished_run, schema.agentrun
    joined, found = plans.outer_probe(
        dialect, u, run, run.c.uid == u.c.run_uid, (run.c.uid, run.c.status), "run"
    )
    ended = or_(found.c.uid.is_(None), found.c.status.in_(sorted(FINISHED_STATUSES)))
    # Read once, before the events: a run seen finished here has every event committed (the module's rule),
    # and only these runs let go, whichever finishes while the statements below run.
    finished = list(connection.execute(select(u.c.run_uid).select_from(joined).where(ended)).scalars())
    if not finished:
        return

    def by_run(guarded: bool) -> None:
        query = _targets_query(dialect, _of_keys(dialect, "run", finished, guarded=guarded))
        connection.execute(bulk.insert_or_ignore_select(dialect, target, _TARGET_COLUMNS, query))

    def listed(run_uid: ColumnElement[int]) -> ColumnElement[bool]:
        return plans.in_values(dialect, run_uid, finished)

    sqljson.cast_first(connection, by_run)
    forget = delete(pending_run).where(listed(pending_run.c.run_uid))
    _recompute_pending(connection, select(u.c.run_uid).where(listed(u.c.run_uid)), forget)
    connection.execute(delete(u).where(listed(u.c.run_uid)))


def _event_columns(dialect: str, *, guarded: bool) -> tuple[list[Any], ColumnElement[bool]]:
    """The columns a target is read from, and the condition of a tool_write event.

    An event read before (a kept run's events) is read again, and the table's key leaves its stored target
    as it is (insert_or_ignore_select). It is not skipped by a look-up in the targets table: the statement
    fills that table, and PostgreSQL, whose statistics were taken while it was empty (a first night after a
    database-wide ANALYZE), read every target inserted so far again for each event: 11.7 s for 50,000
    targets (measured), quadratic in their number. The overlap below the last night's mark is looked up
    before, in a statement of its own (`_missed_below`)."""
    event = schema.agentrun_event
    document = sqljson.json_document(dialect, event.c.payload, guarded=guarded).label("document")
    tool_write = event.c.kind == EventKind.TOOL_WRITE.value
    if dialect == SQLITE:
        # A run column holding text, which only SQLite keeps, names no run (a run's uid is its integer key):
        # the event is no run's write, as every reading by run finds (its target would stop the pending runs,
        # whose key is the run's uid).
        tool_write = and_(tool_write, func.typeof(event.c.run) == "integer")
    return [event.c.uid, event.c.run, event.c.crdate, document], tool_write


def _in_uid_range(dialect: str, after: int, *, guarded: bool) -> Select[Any]:
    """Step 3: the tool_write events above `after`, by a range of the primary key (on MariaDB whatever its
    statistics say: counting the events as nearly empty, as InnoDB may right after a bulk load, it would read
    them all)."""
    event = schema.agentrun_event
    columns, tool_write = _event_columns(dialect, guarded=guarded)
    return plans.by_index(dialect, select(*columns).where(event.c.uid > after, tool_write), event, "PRIMARY")


def _of_keys(dialect: str, key: str, keys: Sequence[int], *, guarded: bool) -> Select[Any]:
    """The tool_write events whose `key` is one of `keys`, through its index: step 3's overlap by "uid" (the
    primary key), step 4 by "run" (nr-llm's (run, sequence) index)."""
    event = schema.agentrun_event
    columns, tool_write = _event_columns(dialect, guarded=guarded)

    def lookup(match: plans.Match) -> Select[Any]:
        return select(*columns).where(match(event.c[key]), tool_write)

    rows = plans.for_values(dialect, Integer(), keys, lookup, f"event_{key}")
    return plans.by_index(dialect, rows, event, _EVENT_INDEX[key])


def _targets_query(dialect: str, events: Select[Any]) -> Select[Any]:
    """The targets of the events (uid, run, crdate, parsed payload `document`), read from their payloads."""
    parsed = sqljson.with_members(dialect, plans.fenced(dialect, events), (_TABLE_KEY, _UID_KEY))
    return select(
        parsed.c.uid,
        parsed.c.run,
        parsed.c.crdate,
        sqljson.json_string(dialect, parsed, _TABLE_KEY, MAX_TABLE_NAME),
        sqljson.json_uid(dialect, parsed, _UID_KEY),
    )


def _answered(run_uid: ColumnElement[int]) -> ColumnElement[bool]:
    outcome = schema.run_outcome
    return select(outcome.c.run_uid).where(outcome.c.run_uid == run_uid).exists()


def _unanswered(
    dialect: str, left: FromClause, run_uid: ColumnElement[int]
) -> tuple[FromClause, ColumnElement[bool]]:
    """`left`, and the condition that the run of its `run_uid` has no outcome yet.

    PostgreSQL looks each row's run up in the derived runs' key (plans.outer_probe): as NOT EXISTS its
    planner, whose statistics of our tables lag behind the job that fills them, hashed every derived run
    for a night's few pending ones, a cost growing with each run ever derived (24,000 runs read for 1,300
    pending at scale 0.05, measured). SQLite and MariaDB ask NOT EXISTS of the key row by row."""
    if dialect != POSTGRESQL:
        return left, ~_answered(run_uid)
    outcome = schema.run_outcome
    joined, found = plans.outer_probe(
        dialect, left, outcome, outcome.c.run_uid == run_uid, (outcome.c.run_uid,), "answered"
    )
    return joined, found.c.run_uid.is_(None)


def _held(run_uid: ColumnElement[int]) -> ColumnElement[bool]:
    """The run is kept as not finished: its events are read again before it may be derived."""
    return select(unfinished_run.c.run_uid).where(unfinished_run.c.run_uid == run_uid).exists()


def _recompute_pending(
    connection: Connection,
    runs: Select[Any],
    forget: Delete,
    *,
    all_new: ColumnElement[bool] | None = None,
) -> None:
    """The pending rows of the runs `runs` selects (a run_uid column, a run perhaps more than once), from
    all their targets, after `forget` has deleted their old ones. `all_new`: where every target is new (a
    first reading), the condition on the new ones."""
    dialect = connection.dialect.name
    connection.execute(forget)
    if dialect == POSTGRESQL and all_new is not None:
        # The new targets counted by run in one pass over their key's range, not probed run by run (0.25 s
        # against 0.05 s for the 66,615 runs of the wide shape's 0.1, measured).
        each_run = plans.fenced(dialect, _counted(target, all_new)).subquery("each_run")
        run_uid, last_write_at, writes = each_run.c
        joined, unanswered = _unanswered(dialect, each_run, run_uid)
        rows = select(run_uid, last_write_at, writes).select_from(joined).where(unanswered)
    elif dialect == POSTGRESQL:
        # Each run once, its targets counted through their run index and its outcome looked up by key: a
        # join of the targets, as the other dialects run it, read every target and every derived run there.
        touched = plans.fenced(dialect, runs.distinct()).subquery("touched")
        written = (
            select(func.max(target.c.written_at).label("last_write_at"), func.count().label("writes"))
            .where(target.c.run_uid == touched.c.run_uid)
            .offset(0)
            .lateral("written")
        )
        joined, unanswered = _unanswered(dialect, touched.join(written, true()), touched.c.run_uid)
        rows = (
            select(touched.c.run_uid, written.c.last_write_at, written.c.writes)
            .select_from(joined)
            .where(written.c.writes > 0, unanswered)
        )
    elif is_mariadb(dialect):
        # The runs first, each once, and each run's targets read through their run index: asked as
        # `run_uid IN (…)`, MariaDB answered the night's new targets by a loose scan of the whole run index,
        # every target of the installation (153,183 entries at the wide shape's 0.15, measured).
        touched = runs.distinct().subquery("touched")
        joined, unanswered = _unanswered(
            dialect, touched.join(target, target.c.run_uid == touched.c.run_uid), target.c.run_uid
        )
        counted = _counted(joined, unanswered)
        rows = plans.in_order(dialect, plans.by_index(dialect, counted, target, RUN_INDEX))
    else:
        # No DISTINCT: SQLite would read the whole run index for it instead of the new targets' key range.
        targets, unanswered = _unanswered(dialect, target, target.c.run_uid)
        rows = _counted(targets, target.c.run_uid.in_(runs), unanswered)
    columns = ["run_uid", "last_write_at", "writes"]
    connection.execute(bulk.insert_or_ignore_select(dialect, pending_run, columns, rows))


def _counted(source: FromClause, *conditions: ColumnElement[bool]) -> Select[Any]:
    """Per run of the targets in `source` that meet `conditions`: its last write and its number of writes."""
    return (
        select(target.c.run_uid, func.max(target.c.written_at), func.count())
        .select_from(source)
        .where(*conditions)
        .group_by(target.c.run_uid)
    )


def unobserved(
    dialect: str, left: FromClause, correlation_id: ColumnElement[str]
) -> tuple[Join, ColumnElement[bool]]:
    """`left` joined to the rows of tx_nrllm_call_outcome of its correlation id, and the condition, for a
    query grouped by `left`'s row, that none of them is observed (from any deriver).

    One probe of nr-llm's KEY correlation per row of `left` (PostgreSQL: a fenced LATERAL probe), the
    outcome read from the rows it finds and never part of the probe: with the outcome in it, PostgreSQL
    whose statistics were taken while the table held few rows intersected the probe with nr-llm's
    outcome_lookup index, reading every observed row again for each probe, the rows the job had just
    mirrored among them (304 s for the write phase of a night at scale 0.2, measured)."""
    call = schema.call_outcome
    joined, found = plans.outer_probe(
        dialect, left, call, call.c.correlation_id == correlation_id, (call.c.outcome,), "observed"
    )
    return joined, func.count(case((found.c.outcome.in_(_OBSERVED), 1))) == 0


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
    unknown_status: int = 0  # of the unfinished: a status nr-llm does not write, which never ends


def _running(run: Any) -> ColumnElement[bool]:
    return and_(run.c.uid.is_not(None), func.coalesce(run.c.status, "").not_in(sorted(FINISHED_STATUSES)))


def pending(connection: Connection, *, cutoff: int) -> Pending:
    """How many unanswered runs are due (last write before the cutoff, core.window.window_cutoff; finished or
    gone), how many still wait for their window, and how many are past it but not finished (or finished
    since extend_targets kept them, and not read again yet)."""
    p, run = pending_run, schema.agentrun
    past = p.c.last_write_at < cutoff

    def total(condition: ColumnElement[bool]) -> ColumnElement[int]:
        return func.coalesce(func.sum(case((condition, 1), else_=0)), 0)

    dialect = connection.dialect.name
    with_run, found = plans.outer_probe(
        dialect, p, run, run.c.uid == p.c.run_uid, (run.c.uid, run.c.status), "run"
    )
    joined, unanswered = _unanswered(dialect, with_run, p.c.run_uid)
    running = or_(_running(found), _held(p.c.run_uid))
    unknown = and_(found.c.uid.is_not(None), func.coalesce(found.c.status, "").not_in(KNOWN_STATUSES))
    query = (
        select(
            total(and_(past, ~running)),
            total(p.c.last_write_at >= cutoff),
            total(and_(past, running)),
            total(and_(past, unknown)),
        )
        .select_from(joined)
        .where(unanswered)
    )
    row = connection.execute(query).one()
    return Pending(
        due=int(row[0]), inside_window=int(row[1]), unfinished=int(row[2]), unknown_status=int(row[3])
    )


def due_page_query(dialect: str, *, after: int, cutoff: int, limit: int) -> Select[Any]:
    """The next page of due runs after run uid `after` (keyset), answered runs left out (`_unanswered`):
    run_uid, correlation id ('' without), configuration, last write, writes, whether the job derives it now
    (a uuid and a finished status: core.run_status), whether its row is gone.

    A run is due when the window of its LAST write has closed (DESIGN.md rule 1, core.outcomes.is_due):
    last_write_at < cutoff, the cutoff being core.window.window_cutoff(now, window).
    """
    p, run = pending_run, schema.agentrun
    pending_rows, unanswered = _unanswered(dialect, p, p.c.run_uid)
    page = (
        select(p.c.run_uid, p.c.last_write_at, p.c.writes)
        .select_from(pending_rows)
        .where(p.c.run_uid > after, p.c.last_write_at < cutoff, unanswered)
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
    # A run kept as not finished is derived once its events have been read again (extend_targets, step 4).
    derivable = and_(uuid != "", found.c.status.in_(sorted(FINISHED_STATUSES)), ~_held(page.c.run_uid))
    return select(
        page.c.run_uid,
        uuid.label("correlation_id"),
        func.coalesce(found.c.configuration_identifier, "").label("configuration_identifier"),
        page.c.last_write_at,
        page.c.writes,
        case((derivable, 1), else_=0).label("derivable"),
        case((found.c.uuid.is_(None), 1), else_=0).label("gone"),
    ).select_from(joined)


def forget_pending(connection: Connection, run_uid: ColumnElement[int], where: ColumnElement[bool]) -> None:
    """Drop the pending rows of the runs (a run uid column of the rows `where` picks): they have their
    outcome now."""
    dialect = connection.dialect.name
    connection.execute(plans.delete_matching(dialect, pending_run, pending_run.c.run_uid, run_uid, where))
