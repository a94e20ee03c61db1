"""sys_history and the written records as the Run page and derive-outcomes read them (003_…): their history
rows, the oldest retained row, whether a record is still there, the table catalog, who wrote a row.

Plans that do not depend on statistics (installations rarely run ANALYZE): the history query selects by
(tablename, recuid) only — no ORDER BY tstamp and no condition on tstamp, which would tempt SQLite into the
(tablename, tstamp) index and a scan of the table per record — and rows are ordered in core; the oldest
retained history row is found through the (tablename, tstamp) index a table name at a time rather than by an
aggregate over the whole of sys_history. A batch's records are bound as one parameter; on PostgreSQL each is
looked up through a LATERAL subquery fenced with OFFSET 0 (adapters.dialect.plans.for_records).
tests/db/test_query_plans.py checks the plans with EXPLAIN.
"""

from __future__ import annotations

import warnings
from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Connection,
    Integer,
    Select,
    Table,
    and_,
    case,
    column,
    func,
    inspect,
    literal,
    select,
)
from sqlalchemy import table as table_clause
from sqlalchemy.exc import DBAPIError, SAWarning
from sqlalchemy.sql.expression import ColumnClause

from adapters import schema
from adapters.database import missing_table, one_line, refused_table
from adapters.dialect import json as sqljson
from adapters.dialect import plans
from adapters.dialect.names import is_mariadb
from adapters.errors import RunrecordError
from core.outcomes import AUTOMATION_USER, BACKEND_USERTYPE, Action, HistoryRow, Presence

RecordKey = tuple[str, int]  # (tablename, uid)

# The actions whose history_data holds field names (newRecord of a modify, the record of an add).
_WITH_FIELDS = (Action.ADD.value, Action.MODIFY.value)


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
    `guarded` as in adapters.dialect.json.json_document (see its cast_first).
    """
    h = schema.sys_history
    wanted = and_(h.c.actiontype.in_(_WITH_FIELDS), h.c.tstamp.between(keys_from, keys_to))

    def lookup(match: plans.RecordMatch) -> Select[Any]:
        document = sqljson.json_document(dialect, h.c.history_data, guarded=guarded)
        return select(
            h.c.uid,
            h.c.tstamp,
            h.c.actiontype,
            h.c.tablename,
            h.c.recuid,
            case((wanted, document)).label("document"),
        ).where(match(h.c.tablename, h.c.recuid))

    found = plans.for_records(dialect, records, lookup, "history_rows")
    rows = plans.fenced(dialect, found).subquery("history")
    return select(
        rows.c.uid,
        rows.c.tstamp,
        rows.c.actiontype,
        rows.c.tablename,
        rows.c.recuid,
        sqljson.record_keys(dialect, rows.c.document, rows.c.actiontype).label("fields"),
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
    fields_of = sqljson.fields_of
    for uid, tstamp, actiontype, tablename, recuid, fields in sqljson.cast_first(connection, read):
        found[(tablename, recuid)].append(HistoryRow(uid, tstamp, actiontype, fields_of(fields)))
    return found


def oldest_retained_tstamp(connection: Connection) -> int | None:
    """The tstamp of the oldest row left in sys_history: min(tstamp), a table name at a time.

    Equal to SELECT min(tstamp) FROM sys_history, which no index of sys_history answers: it reads the whole
    table. Each step here is an index lookup on (tablename, tstamp): the next table name, then its oldest
    row. sys_history names a few dozen tables.
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


class TableNotReadableError(RunrecordError):
    """The database does not list a table of the installation to the account and refuses to read it."""


class TableCatalog:
    """The database's own list of tables: a write target's table name reaches SQL only once it is on it.

    MariaDB lists to an account only the tables it may read. There each table of TYPO3's and nr-llm's
    (upstream_schema's) that the list lacks is asked for by its own name when the catalog is made, whatever
    the writes name; one the server refuses stops the job (TableNotReadableError) where it is looked up,
    instead of passing for one the installation does not have (every write to it DISCARDED for good, every
    `_cli_` row a person's)."""

    def __init__(self, connection: Connection) -> None:
        self._inspector = inspect(connection)
        self._names = frozenset(self._inspector.get_table_names())
        self._tables: dict[str, RecordTable] = {}
        self._columns: dict[str, frozenset[str]] = {}
        self._refused: dict[str, str] = {}  # table name -> the server's refusal
        if is_mariadb(connection.dialect.name):
            unlisted = [table for name, table in schema.upstream.tables.items() if name not in self._names]
            self._refused = _refusals(connection, unlisted)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self._listed(name)

    def _listed(self, name: str) -> bool:
        if name in self._refused:
            raise TableNotReadableError(
                f"the database does not list the installation's table {name} to this account and refuses it "
                f"({self._refused[name]}): it lacks the table or the account may not read it; grant the "
                "account SELECT on the database (docs/installation.md)"
            )
        return name in self._names

    def columns(self, name: str) -> frozenset[str]:
        """The column names of the table of that exact name; none when the database has no such table."""
        if not self._listed(name):
            return frozenset()
        if name not in self._columns:
            with warnings.catch_warnings():
                # Only the names are read: a column type SQLAlchemy cannot rebuild from its reflected
                # arguments (SQLite's INTEGER(11) from a MySQL dump) is no reason to warn on every run.
                warnings.simplefilter("ignore", SAWarning)
                found = frozenset(column_info["name"] for column_info in self._inspector.get_columns(name))
            self._columns[name] = found
        return self._columns[name]

    def has_columns(self, name: str, *columns: str) -> bool:
        """Whether the database has a table of that exact name with those columns."""
        return set(columns) <= self.columns(name)

    def get(self, name: str) -> RecordTable | None:
        """The table of that exact name, or None when the database has none."""
        if not self._listed(name):
            return None
        if name not in self._tables:
            columns = self.columns(name)
            self._tables[name] = RecordTable(name, "uid" in columns, "deleted" in columns)
        return self._tables[name]


def _refusals(connection: Connection, tables: list[Table]) -> dict[str, str]:
    """The tables among `tables` that MariaDB refuses the account, each with its refusal on one line; asked
    on a connection of its own, so that the job's transaction never meets an error."""
    refused: dict[str, str] = {}
    if not tables:
        return refused
    with connection.engine.connect() as asking:
        for table in tables:
            try:
                asking.execute(select(literal(1)).select_from(table).limit(0)).all()
            except DBAPIError as error:
                if refused_table(error):
                    refused[table.name] = one_line(error)
                elif not missing_table(error):
                    raise
    return refused


def reads_automation(catalog: TableCatalog) -> bool:
    """Whether the database can name the `_cli_` user (DESIGN.md rule 4): a be_users table with its uid and
    username; without one every row that is no AI write's own counts as a person's."""
    return catalog.has_columns(schema.be_users.name, "uid", "username")


def presence_query(dialect: str, table: RecordTable, uids: Collection[int]) -> Select[Any]:
    """uid and deleted (when the table has that column) of the records still in the table."""
    # The name comes from TableCatalog, i.e. from the database's own list, never from a payload unchecked.
    columns: list[ColumnClause[Any]] = [column("uid"), *([column("deleted")] if table.has_deleted else [])]
    record = table_clause(table.name, *columns)

    def lookup(match: plans.Match) -> Select[Any]:
        return select(*record.c).where(match(record.c.uid))

    return plans.for_values(dialect, Integer(), uids, lookup, "present")


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


# --- who wrote a row, compared in SQL ----------------------------------------------------------------------


def backend_userid(rows: Any) -> ColumnElement[Any]:
    """The `userid` of a sys_history row (`rows`: the table or a probe of it) where a backend user wrote it,
    else NULL (core.outcomes.BACKEND_USERTYPE): only that is compared with a run's be_user or `_cli_`."""
    return case((rows.c.usertype == BACKEND_USERTYPE, rows.c.userid))


def automation_row(rows: Any) -> ColumnElement[Any]:
    """1 where the `_cli_` backend user wrote the sys_history row (`rows`: the table or a probe of it), else
    0 (DESIGN.md rule 4); asks be_users, which the caller knows the database can read (reads_automation)."""
    users = schema.be_users
    cli = select(users.c.uid).where(users.c.username == AUTOMATION_USER)
    return case((backend_userid(rows).in_(cli), 1), else_=0)
