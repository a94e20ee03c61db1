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
aggregate over the whole of sys_history. tests/db/test_query_plans.py checks the plans with EXPLAIN.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

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
)
from sqlalchemy import table as table_clause
from sqlalchemy.schema import CreateIndex, CreateTable
from sqlalchemy.sql.expression import ColumnClause

from core import schema
from core.outcomes import CallOutcome, HistoryRow, Presence
from jobs import dialect as sql

# --- the write targets of every tool_write event -----------------------------------------------------------

_scratch = MetaData()

# Temporary: each job run builds its own from the events, so it is never stale, two processes never share
# one, and the installation's schema is left as it is. tablename/recuid are NULL when the payload does not
# name a readable target (DESIGN.md rule 6).
write_target = Table(
    "tx_runrecord_write_target",
    _scratch,
    Column("event_uid", Integer, primary_key=True, autoincrement=False),
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
    event = schema.agentrun_event
    parsed = sql.fenced(
        dialect,
        select(
            event.c.uid,
            event.c.run,
            event.c.crdate,
            sql.json_document(dialect, event.c.payload).label("document"),
        ).where(event.c.kind == _WRITE_KIND),
    ).subquery("parsed")
    targets = select(
        parsed.c.uid,
        parsed.c.run,
        parsed.c.crdate,
        sql.json_string(dialect, parsed.c.document, "writeTargetTable", sql.MAX_TABLE_NAME),
        sql.json_uid(dialect, parsed.c.document, "writeTargetUid"),
    )
    columns = ["event_uid", "run_uid", "written_at", "tablename", "recuid"]
    connection.execute(insert(write_target).from_select(columns, targets))
    for index in write_target.indexes:
        connection.execute(CreateIndex(index))
    for statement in sql.analyze_statements(dialect, write_target):
        connection.exec_driver_sql(statement)
    return int(connection.execute(select(func.count()).select_from(write_target)).scalar_one())


def drop_write_targets(connection: Connection) -> None:
    """Drop this connection's temporary write_target table (a pooled connection outlives the job)."""
    connection.exec_driver_sql(sql.drop_temporary_table(connection.dialect.name, write_target))


def readable_target(tablename: str | None, recuid: int | None) -> bool:
    """Whether a write target names a table and a uid the way DOMAIN.md says one does."""
    return tablename is not None and recuid is not None and TABLE_NAME.fullmatch(tablename) is not None


# --- due runs ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DueRun:
    """A run whose last write's window has closed and that has no observed outcome yet."""

    run_uid: int
    uuid: str | None  # None: the run row is gone (purged); '' : the run has no uuid
    configuration_identifier: str
    last_write_at: int
    writes: int


@dataclass(frozen=True)
class Pending:
    """Runs with writes and no observed outcome: those due now, and those still inside their window."""

    due: int
    inside_window: int


def _answered(run_uid: ColumnElement[int]) -> ColumnElement[bool]:
    outcome = schema.run_outcome
    return select(outcome.c.run_uid).where(outcome.c.run_uid == run_uid).exists()


def pending(connection: Connection, *, cutoff: int) -> Pending:
    """How many unanswered runs are due (last write before cutoff) and how many still wait for it."""
    w = write_target
    runs = (
        select(w.c.run_uid, func.max(w.c.written_at).label("last_write_at"))
        .where(~_answered(w.c.run_uid))
        .group_by(w.c.run_uid)
        .subquery("runs")
    )
    due = func.coalesce(func.sum(case((runs.c.last_write_at < cutoff, 1), else_=0)), 0)
    inside = func.coalesce(func.sum(case((runs.c.last_write_at >= cutoff, 1), else_=0)), 0)
    row = connection.execute(select(due, inside)).one()
    return Pending(due=int(row[0]), inside_window=int(row[1]))


def due_runs_query(*, after: int, cutoff: int, limit: int) -> Select[Any]:
    """The next page of due runs after run uid `after` (keyset), answered runs excluded by an anti-join.

    A run is due when the window of its LAST write has closed (DESIGN.md rule 1, core.outcomes.is_due):
    now > last_write_at + window, i.e. last_write_at < cutoff = now - window.
    """
    w = write_target
    run = schema.agentrun
    last_write_at = func.max(w.c.written_at)
    page = (
        select(w.c.run_uid, last_write_at.label("last_write_at"), func.count().label("writes"))
        .where(w.c.run_uid > after, ~_answered(w.c.run_uid))
        .group_by(w.c.run_uid)
        .having(last_write_at < cutoff)
        .order_by(w.c.run_uid)
        .limit(limit)
        .subquery("page")
    )
    # An outer join: a run whose row is gone still moves the keyset on (and is reported, not derived).
    return (
        select(
            page.c.run_uid,
            run.c.uuid,
            run.c.configuration_identifier,
            page.c.last_write_at,
            page.c.writes,
        )
        .select_from(page.outerjoin(run, run.c.uid == page.c.run_uid))
        .order_by(page.c.run_uid)
    )


def due_runs(connection: Connection, *, after: int, cutoff: int, limit: int) -> list[DueRun]:
    """The next page of due runs (see due_runs_query)."""
    rows = connection.execute(due_runs_query(after=after, cutoff=cutoff, limit=limit))
    return [
        DueRun(
            run_uid=row.run_uid,
            uuid=row.uuid,
            configuration_identifier=row.configuration_identifier or "",
            last_write_at=int(row.last_write_at),
            writes=int(row.writes),
        )
        for row in rows
    ]


# --- one batch ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TargetRow:
    """One tool_write of a due run, its target as read from the payload (None when unreadable)."""

    event_uid: int
    run_uid: int
    written_at: int
    tablename: str | None
    recuid: int | None

    @property
    def readable(self) -> bool:
        return readable_target(self.tablename, self.recuid)


def batch_writes(connection: Connection, run_uids: Collection[int]) -> list[TargetRow]:
    """Every tool_write of the given runs, in event order."""
    if not run_uids:
        return []
    w = write_target
    query = (
        select(w.c.event_uid, w.c.run_uid, w.c.written_at, w.c.tablename, w.c.recuid)
        .where(w.c.run_uid.in_(sorted(run_uids)))
        .order_by(w.c.run_uid, w.c.event_uid)
    )
    return [TargetRow(*row) for row in connection.execute(query).all()]


RecordKey = tuple[str, int]  # (tablename, uid)


def _per_table(
    name_column: ColumnElement[str], uid_column: ColumnElement[int], records: Mapping[str, Collection[int]]
) -> ColumnElement[bool]:
    """(tablename = T1 AND uid IN (…)) OR (tablename = T2 AND uid IN (…)): each term an index lookup."""
    return or_(
        *(
            and_(name_column == name, uid_column.in_(sorted(uids)))
            for name, uids in sorted(records.items())
            if uids
        )
    )


def history_query(
    dialect: str, records: Mapping[str, Collection[int]], *, keys_from: int, keys_to: int
) -> Select[Any]:
    """Every retained sys_history row of the records, with the field names of add and modify rows.

    The keys are read in SQL (DESIGN.md rule 7: the values never leave the database), and only for rows
    stamped from keys_from to keys_to: a row outside that span can only be evidence older than the write
    (whose fields the rules never read) or a row after every window (where only a delete counts).
    """
    h = schema.sys_history
    wanted = and_(h.c.actiontype.in_((1, 2)), h.c.tstamp.between(keys_from, keys_to))
    rows = sql.fenced(
        dialect,
        select(
            h.c.uid,
            h.c.tstamp,
            h.c.actiontype,
            h.c.tablename,
            h.c.recuid,
            case((wanted, sql.json_document(dialect, h.c.history_data))).label("document"),
        ).where(_per_table(h.c.tablename, h.c.recuid, records)),
    ).subquery("history")
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
    query = history_query(connection.dialect.name, records, keys_from=keys_from, keys_to=keys_to)
    found: dict[RecordKey, list[HistoryRow]] = defaultdict(list)
    for row in connection.execute(query).all():
        found[(row.tablename, row.recuid)].append(
            HistoryRow(
                uid=row.uid, tstamp=row.tstamp, actiontype=row.actiontype, fields=sql.fields_of(row.fields)
            )
        )
    return found


def ai_write_times_query(records: Mapping[str, Collection[int]]) -> Select[Any]:
    """When any run (due or not, of any batch) wrote each of the records (DESIGN.md rule 4)."""
    w = write_target
    return select(w.c.tablename, w.c.recuid, w.c.written_at).where(
        _per_table(w.c.tablename, w.c.recuid, records)
    )


def ai_write_times(
    connection: Connection, records: Mapping[str, Collection[int]]
) -> dict[RecordKey, list[int]]:
    """The times of every AI write to each of the records, by record."""
    if not any(records.values()):
        return {}
    found: dict[RecordKey, list[int]] = defaultdict(list)
    for row in connection.execute(ai_write_times_query(records)).all():
        found[(row.tablename, row.recuid)].append(row.written_at)
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
            columns = {column_info["name"] for column_info in self._inspector.get_columns(name)}
            self._tables[name] = RecordTable(name, "uid" in columns, "deleted" in columns)
        return self._tables[name]


def presence_query(table: RecordTable, uids: Collection[int]) -> Select[Any]:
    """uid and deleted (when the table has that column) of the records still in the table."""
    # The name comes from TableCatalog, i.e. from the database's own list, never from a payload unchecked.
    columns: list[ColumnClause[Any]] = [column("uid"), *([column("deleted")] if table.has_deleted else [])]
    record = table_clause(table.name, *columns)
    return select(*record.c).where(record.c.uid.in_(sorted(uids)))


def presence(connection: Connection, table: RecordTable, uids: Iterable[int]) -> dict[int, Presence]:
    """Whether each record is still there: a row with deleted=0 (or no deleted column), deleted, or gone."""
    wanted = set(uids)
    found = dict.fromkeys(sorted(wanted), Presence.ROW_MISSING)
    if not wanted or not table.has_uid:
        return found
    for row in connection.execute(presence_query(table, wanted)).all():
        deleted = bool(row.deleted) if table.has_deleted else False
        found[int(row.uid)] = Presence.DELETED if deleted else Presence.PRESENT
    return found


def observed_correlation_ids(connection: Connection, correlation_ids: Collection[str]) -> set[str]:
    """The correlation ids that already have an observed row in tx_nrllm_call_outcome (from any deriver)."""
    if not correlation_ids:
        return set()
    outcome = schema.call_outcome
    query = (
        select(outcome.c.correlation_id)
        .where(outcome.c.correlation_id.in_(sorted(correlation_ids)), outcome.c.outcome.in_(_OBSERVED))
        .distinct()
    )
    return set(connection.execute(query).scalars())
