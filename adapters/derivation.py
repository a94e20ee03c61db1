"""The selects of the observed-outcome derivation (003_…): set-based, a few queries per batch of runs.

The job first copies every tool_write event's target into a temporary table (`write_target`), read from
the event payload in SQL. That table is what makes the rest set-based: the due runs are a keyset page over
its run index with the already-answered runs excluded in the query (003_…, "The already-answered runs are
excluded in the QUERY"), and "was this history row another AI write?" (DESIGN.md rule 4) is an index lookup
instead of a scan of the events for every record.

Plans that do not depend on statistics (installations rarely run ANALYZE): the history query selects by
(tablename, recuid) only — no ORDER BY tstamp and no condition on tstamp, which would tempt SQLite into the
(tablename, tstamp) index and a scan of the table per record — and rows are ordered in core; the oldest
retained history row is found through the (tablename, tstamp) index a table name at a time rather than by an
aggregate over the whole of sys_history. A batch's keys (its runs, its records, their correlation ids) are
bound as one parameter; on PostgreSQL each key is looked up through a LATERAL subquery fenced with OFFSET 0,
since its planner, without statistics, answers `recuid = ANY(…)` or a plain join by reading every row of the
table name or the whole table (adapters.dialect.each_key). tests/db/test_query_plans.py checks the plans with
EXPLAIN.
"""

from __future__ import annotations

import functools
import re
import warnings
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Mapping
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
    column,
    func,
    insert,
    inspect,
    or_,
    select,
    true,
)
from sqlalchemy import table as table_clause
from sqlalchemy.exc import SAWarning
from sqlalchemy.schema import CreateIndex, CreateTable
from sqlalchemy.sql.expression import ColumnClause, FromClause
from sqlalchemy.types import TypeEngine

from adapters import dialect as sql
from adapters import schema
from core.outcomes import FINISHED_STATUSES, CallOutcome, HistoryRow, Presence

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
    Column("tablename", String(sql.MAX_TABLE_NAME), nullable=True),
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

# DOMAIN.md, tx_nrllm_agentrun_event: "A table name in a write target matches [A-Za-z0-9_]{1,64} and the
# uid is at least 1." Anything else is unreadable (DESIGN.md rule 6), whatever the database would make of it.
TABLE_NAME = re.compile(r"[A-Za-z0-9_]{1,64}")

_OBSERVED = tuple(outcome.value for outcome in CallOutcome)
_WRITE_KIND = "tool_write"


def create_write_targets(connection: Connection) -> int:
    """Fill a fresh temporary write_target table from every tool_write event; returns its row count."""
    dialect = connection.dialect.name
    connection.exec_driver_sql(sql.drop_temporary_table(dialect, write_target))
    connection.execute(CreateTable(write_target))  # without its indexes: those are built once it is full
    columns = ["event_uid", "run_uid", "written_at", "tablename", "recuid"]

    def fill(guarded: bool) -> None:
        targets = _write_targets_query(dialect, guarded=guarded)
        connection.execute(insert(write_target).from_select(columns, targets))

    sql.cast_first(connection, fill)
    for index in write_target.indexes:
        connection.execute(CreateIndex(index))
    for statement in sql.analyze_statements(dialect, write_target):
        connection.exec_driver_sql(statement)
    return int(connection.execute(select(func.count()).select_from(write_target)).scalar_one())


def _write_targets_query(dialect: str, *, guarded: bool) -> Select[Any]:
    event = schema.agentrun_event
    parsed = sql.fenced(
        dialect,
        select(
            event.c.uid,
            event.c.run,
            event.c.crdate,
            sql.json_document(dialect, event.c.payload, guarded=guarded).label("document"),
        ).where(event.c.kind == _WRITE_KIND),
    ).subquery("parsed")
    return select(
        parsed.c.uid,
        parsed.c.run,
        parsed.c.crdate,
        sql.json_string(dialect, parsed.c.document, "writeTargetTable", sql.MAX_TABLE_NAME),
        sql.json_uid(dialect, parsed.c.document, "writeTargetUid"),
    )


def drop_write_targets(connection: Connection) -> None:
    """Drop this connection's temporary write_target table (a pooled connection outlives the job)."""
    connection.exec_driver_sql(sql.drop_temporary_table(connection.dialect.name, write_target))


def readable_target(tablename: str | None, recuid: int | None) -> bool:
    """Whether a write target names a table and a uid the way DOMAIN.md says one does."""
    return tablename is not None and recuid is not None and _is_table_name(tablename)


@functools.lru_cache(maxsize=1_024)
def _is_table_name(text: str) -> bool:
    # A job reads a few dozen distinct table names, each for thousands of writes.
    return TABLE_NAME.fullmatch(text) is not None


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
    past it that have not finished (they may still write; core.outcomes.is_finished)."""

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
    return (probe.offset(0) if dialect == sql.POSTGRESQL else probe).exists()


def pending(connection: Connection, *, cutoff: int) -> Pending:
    """How many unanswered runs are due (last write before cutoff, finished or gone), how many still wait for
    their window, and how many are past it but not finished."""
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
    now > last_write_at + window, i.e. last_write_at < cutoff = now - window.
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
    # PostgreSQL looks each run up by its primary key through a fenced LATERAL subquery: a plain join lets
    # its planner, without statistics on tx_nrllm_agentrun, sort the whole table for every page.
    found: FromClause
    if dialect == sql.POSTGRESQL:
        found = (
            select(run.c.uuid, run.c.configuration_identifier, run.c.status)
            .where(run.c.uid == page.c.run_uid)
            .offset(0)
            .lateral("run")
        )
        joined = page.outerjoin(found, true())
    else:
        found = run
        joined = page.outerjoin(run, run.c.uid == page.c.run_uid)
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
    """Every tool_write of the given runs, in event order (see _for_values)."""
    w = write_target

    def lookup(match: _Match) -> Select[Any]:
        columns = (w.c.event_uid, w.c.run_uid, w.c.written_at, w.c.tablename, w.c.recuid)
        return select(*columns).where(match(w.c.run_uid))

    found = _for_values(dialect, Integer(), run_uids, lookup, "run_writes").subquery("writes")
    return select(*found.c).order_by(found.c.run_uid, found.c.event_uid)


def batch_writes(connection: Connection, run_uids: Collection[int]) -> list[TargetRow]:
    """Every tool_write of the given runs, in event order."""
    if not run_uids:
        return []
    query = batch_writes_query(connection.dialect.name, run_uids)
    return [target_row(*row) for row in connection.execute(query).all()]


RecordKey = tuple[str, int]  # (tablename, uid)

# The condition a lookup is built with: column(s) of the looked-up table equal to one of the keys.
_Match = Callable[[ColumnElement[Any]], ColumnElement[bool]]
_RecordMatch = Callable[[ColumnElement[str], ColumnElement[int]], ColumnElement[bool]]


def _for_values(
    dialect: str,
    kind: TypeEngine[Any],
    values: Collection[Any],
    lookup: Callable[[_Match], Select[Any]],
    name: str,
) -> Select[Any]:
    """`lookup` for every one of the values, each an index lookup on every dialect.

    PostgreSQL: the values as one array parameter, each looked up by a LATERAL subquery (dialect.each_key);
    SQLite and MariaDB: `column IN (…)` bound as dialect.in_values binds it.
    """
    if dialect == sql.POSTGRESQL:
        keys = sql.key_table(f"{name}_key", {"value": (kind, sorted(set(values)))})
        return sql.each_key(keys, lookup(lambda column: column == keys.c.value), name)
    return lookup(lambda column: sql.in_values(dialect, column, values))


def _for_records(
    dialect: str,
    records: Mapping[str, Collection[int]],
    lookup: Callable[[_RecordMatch], Select[Any]],
    name: str,
) -> Select[Any]:
    """`lookup` for every record (tablename, uid), each an index lookup on (tablename, recuid).

    PostgreSQL: two array parameters, the records looked up one by one (dialect.each_key); SQLite and
    MariaDB: (tablename = T1 AND uid IN (…)) OR (tablename = T2 AND uid IN (…)).
    """
    if dialect == sql.POSTGRESQL:
        pairs = sorted((table, uid) for table, uids in records.items() for uid in set(uids))
        keys = sql.key_table(
            f"{name}_key",
            {"tablename": (String(), [t for t, _ in pairs]), "recuid": (Integer(), [u for _, u in pairs])},
        )
        return sql.each_key(
            keys, lookup(lambda names, uids: and_(names == keys.c.tablename, uids == keys.c.recuid)), name
        )

    def per_table(names: ColumnElement[str], uids: ColumnElement[int]) -> ColumnElement[bool]:
        return or_(
            *(
                and_(names == table, sql.in_values(dialect, uids, wanted))
                for table, wanted in sorted(records.items())
                if wanted
            )
        )

    return lookup(per_table)


def history_query(
    dialect: str,
    records: Mapping[str, Collection[int]],
    *,
    keys_from: int,
    keys_to: int,
    guarded: bool = True,
) -> Select[Any]:
    """Every retained sys_history row of the records, with the field names of add and modify rows.

    The keys are read in SQL (DESIGN.md rule 7: the values never leave the database), and only for rows
    stamped from keys_from to keys_to: a row outside that span can only be evidence older than the write
    (whose fields the rules never read) or a row after every window (where only a delete counts).
    `guarded` as in sql.json_document (see sql.cast_first).
    """
    h = schema.sys_history
    wanted = and_(h.c.actiontype.in_((1, 2)), h.c.tstamp.between(keys_from, keys_to))

    def lookup(match: _RecordMatch) -> Select[Any]:
        return select(
            h.c.uid,
            h.c.tstamp,
            h.c.actiontype,
            h.c.tablename,
            h.c.recuid,
            case((wanted, sql.json_document(dialect, h.c.history_data, guarded=guarded))).label("document"),
        ).where(match(h.c.tablename, h.c.recuid))

    rows = sql.fenced(dialect, _for_records(dialect, records, lookup, "history_rows")).subquery("history")
    return select(
        rows.c.uid,
        rows.c.tstamp,
        rows.c.actiontype,
        rows.c.tablename,
        rows.c.recuid,
        sql.record_keys(dialect, rows.c.document, rows.c.actiontype).label("fields"),
    )


def history_rows(
    connection: Connection, records: Mapping[str, Collection[int]], *, keys_from: int, keys_to: int
) -> dict[RecordKey, list[HistoryRow]]:
    """The history rows of the records (see history_query), by record."""
    if not any(records.values()):
        return {}
    dialect = connection.dialect.name

    def read(guarded: bool) -> list[Any]:
        query = history_query(dialect, records, keys_from=keys_from, keys_to=keys_to, guarded=guarded)
        return list(connection.execute(query).all())

    found: dict[RecordKey, list[HistoryRow]] = defaultdict(list)
    fields_of = sql.fields_of
    for uid, tstamp, actiontype, tablename, recuid, fields in sql.cast_first(connection, read):
        found[(tablename, recuid)].append(HistoryRow(uid, tstamp, actiontype, fields_of(fields)))
    return found


def ai_write_times_query(dialect: str, records: Mapping[str, Collection[int]]) -> Select[Any]:
    """When any run (due or not, of any batch) wrote each of the records (DESIGN.md rule 4)."""
    w = write_target

    def lookup(match: _RecordMatch) -> Select[Any]:
        return select(w.c.tablename, w.c.recuid, w.c.written_at).where(match(w.c.tablename, w.c.recuid))

    return _for_records(dialect, records, lookup, "ai_writes")


def ai_write_times(
    connection: Connection, records: Mapping[str, Collection[int]]
) -> dict[RecordKey, list[int]]:
    """The times of every AI write to each of the records, by record."""
    if not any(records.values()):
        return {}
    found: dict[RecordKey, list[int]] = defaultdict(list)
    query = ai_write_times_query(connection.dialect.name, records)
    for tablename, recuid, written_at in connection.execute(query).all():
        found[(tablename, recuid)].append(written_at)
    return found


def oldest_retained_tstamp(connection: Connection) -> int | None:
    """The tstamp of the oldest row left in sys_history: min(tstamp), a table name at a time.

    Equal to SELECT min(tstamp) FROM sys_history, which no index of sys_history answers: it reads the whole
    table, every night. Each step here is an index lookup on (tablename, tstamp): the next table name, then
    its oldest row. sys_history names a few dozen tables.
    """
    h = schema.sys_history
    oldest: int | None = None
    name: str | None = None
    while True:
        following = select(func.min(h.c.tablename))
        if name is not None:
            following = following.where(h.c.tablename > name)
        name = connection.execute(following).scalar()
        if name is None:
            return oldest
        first = connection.execute(select(func.min(h.c.tstamp)).where(h.c.tablename == name)).scalar()
        if first is not None and (oldest is None or first < oldest):
            oldest = int(first)


# --- where the written records are now --------------------------------------------------------------------


@dataclass(frozen=True)
class RecordTable:
    """A table of this database, as far as presence needs it."""

    name: str
    has_uid: bool
    has_deleted: bool


class TableCatalog:
    """The database's own list of tables: a write target's table name reaches SQL only once it is on it."""

    def __init__(self, connection: Connection) -> None:
        self._inspector = inspect(connection)
        self._names = frozenset(self._inspector.get_table_names())
        self._tables: dict[str, RecordTable] = {}

    def __contains__(self, name: object) -> bool:
        return name in self._names

    def get(self, name: str) -> RecordTable | None:
        """The table of that exact name, or None when the database has none."""
        if name not in self._names:
            return None
        if name not in self._tables:
            with warnings.catch_warnings():
                # Only the names are read: a column type SQLAlchemy cannot rebuild from its reflected
                # arguments (SQLite's INTEGER(11) from a MySQL dump) is no reason to warn on every run.
                warnings.simplefilter("ignore", SAWarning)
                columns = {column_info["name"] for column_info in self._inspector.get_columns(name)}
            self._tables[name] = RecordTable(name, "uid" in columns, "deleted" in columns)
        return self._tables[name]


def presence_query(dialect: str, table: RecordTable, uids: Collection[int]) -> Select[Any]:
    """uid and deleted (when the table has that column) of the records still in the table."""
    # The name comes from TableCatalog, i.e. from the database's own list, never from a payload unchecked.
    columns: list[ColumnClause[Any]] = [column("uid"), *([column("deleted")] if table.has_deleted else [])]
    record = table_clause(table.name, *columns)

    def lookup(match: _Match) -> Select[Any]:
        return select(*record.c).where(match(record.c.uid))

    return _for_values(dialect, Integer(), uids, lookup, "present")


def presence(connection: Connection, table: RecordTable, uids: Iterable[int]) -> dict[int, Presence]:
    """Whether each record is still there: a row with deleted=0 (or no deleted column), deleted, or gone."""
    wanted = set(uids)
    found = dict.fromkeys(sorted(wanted), Presence.ROW_MISSING)
    if not wanted or not table.has_uid:
        return found
    for row in connection.execute(presence_query(connection.dialect.name, table, wanted)).all():
        deleted = bool(row[1]) if table.has_deleted else False
        found[int(row[0])] = Presence.DELETED if deleted else Presence.PRESENT
    return found


def observed_correlation_ids(connection: Connection, correlation_ids: Collection[str]) -> set[str]:
    """The correlation ids that already have an observed row in tx_nrllm_call_outcome (from any deriver)."""
    if not correlation_ids:
        return set()
    return set(connection.execute(observed_query(connection.dialect.name, correlation_ids)).scalars())


def observed_query(dialect: str, correlation_ids: Collection[str]) -> Select[Any]:
    """The correlation ids of those given that have an observed row, through the correlation_id index."""
    outcome = schema.call_outcome

    def lookup(match: _Match) -> Select[Any]:
        return select(outcome.c.correlation_id).where(
            match(outcome.c.correlation_id), outcome.c.outcome.in_(_OBSERVED)
        )

    return _for_values(dialect, String(), correlation_ids, lookup, "observed")
