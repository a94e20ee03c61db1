"""One batch of derive-outcomes in the database: per write, the facts core's rules ask for, aggregated in SQL;
the outcome, reason and scope by core's decision tables (adapters.decision); the three output tables written
with `INSERT … SELECT` (003_…, DESIGN.md rules 1-8).

A batch moves through temporary tables of this connection, each declared with its column types (SQLite
cannot use an index on a table made with `CREATE TABLE … AS` from expressions) and emptied at the start of
every batch:

    batch_run      the page of due runs (adapters.write_targets.due_page_query)
    batch_write    their writes, with whether the target is readable and its table there (rule 6)
    batch_record   the written records, with whether each is still there (rule 2)
    batch_history  every retained sys_history row of those records, joined on (tablename, recuid) only — a
                   tstamp condition on sys_history makes SQLite choose its (tablename, tstamp) index and scan
                   per write — with the keys of add and modify rows (never their values, rule 7) and whether
                   the row is an AI write's own (within SAME_SAVE_S of any run's write to it, rule 4)
    batch_evidence the newest row at or just after each write (rule 3)
    batch_human    the human rows of each write's window (rule 4)
    batch_human_agg, batch_delete, batch_changed, batch_written, batch_scope: their counts per write
    batch_fact     each write's outcome, reason, scope, first change and deciding test
    batch_decider, batch_decided: the sys_history uids that decided each write, as the stored JSON array
    batch_mine     the runs whose row this transaction inserted (the unique key decides, as before)
    batch_mirror   their correlation ids without an observed row in tx_nrllm_call_outcome

Each statement names each temporary table once: MariaDB cannot open a temporary table twice in one query.
On PostgreSQL the temporary tables are analyzed once filled (autovacuum never does), and the installation's
tables are probed per key through LATERAL subqueries fenced with OFFSET 0, so that no plan depends on their
statistics.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import (
    Column,
    ColumnClause,
    ColumnElement,
    Connection,
    Index,
    Integer,
    MetaData,
    Select,
    SmallInteger,
    String,
    Table,
    Text,
    and_,
    case,
    column,
    func,
    insert,
    literal,
    or_,
    select,
    update,
)
from sqlalchemy import table as table_clause
from sqlalchemy.dialects import mysql

from adapters import decision, schema, survival
from adapters import write_targets as targets
from adapters.dialect import aggregate, bulk, plans
from adapters.dialect import json as sqljson
from adapters.dialect import session as sqlsession
from adapters.dialect.exact import exact, exact_values, read_exact
from adapters.dialect.names import is_mariadb
from adapters.history import RecordTable, TableCatalog
from adapters.outcomes import RUN_COLUMNS, WRITE_COLUMNS
from core.outcomes import (
    BOOKKEEPING_FIELDS,
    RELEASE_FIELD,
    RULE_VERSION,
    SAME_SAVE_S,
    WINDOW_TESTS,
    Action,
    CallOutcome,
    Presence,
    WriteTest,
)
from core.table_names import MAX_TABLE_NAME, is_table_name

_scratch = MetaData()

# Target states of batch_write (DESIGN.md rule 6): readable; unreadable (no table or uid, a name that is no
# table name, a table without uid); a well-formed name this database has no table of (the record is gone).
READABLE, UNREADABLE, TABLE_MISSING = 0, 1, 2

# Field names compared byte for byte, as Python compares them (MariaDB's default collation ignores case).
# The installation's (tablename, recuid) index of sys_history (TYPO3 core's; DOMAIN.md).
HISTORY_INDEX = "recordident_1"
_FIELD = Text().with_variant(mysql.TEXT(collation="utf8mb4_bin"), "mysql", "mariadb")
_NAME = String(MAX_TABLE_NAME)


def _temporary(name: str, *columns: Any) -> Table:
    return Table(name, _scratch, *columns, prefixes=["TEMPORARY"])


def _int(name: str, *, nullable: bool = False, key: bool = False) -> Column[int]:
    return Column(name, Integer, nullable=nullable, primary_key=key, autoincrement=False)


batch_run = _temporary(
    "tx_runrecord_batch_run",
    _int("run_uid", key=True),
    Column("correlation_id", String(36), nullable=False),
    Column("configuration_identifier", String(150), nullable=False),
    _int("last_write_at"),
    _int("writes"),
    Column("derivable", SmallInteger, nullable=False),
    Column("gone", SmallInteger, nullable=False),
)
batch_write = _temporary(
    "tx_runrecord_batch_write",
    _int("event_uid", key=True),
    _int("run_uid"),
    _int("written_at"),
    Column("tablename", _NAME, nullable=True),
    _int("recuid", nullable=True),
    Column("target_state", SmallInteger, nullable=False),
)
batch_record = _temporary(
    "tx_runrecord_batch_record",
    Column("tablename", _NAME, nullable=False),
    _int("recuid"),
    Column("presence", String(16), nullable=False),
    _int("first_write_at"),  # the first and the last write to the record in this batch
    _int("last_write_at"),
)
batch_history = _temporary(
    "tx_runrecord_batch_history",
    _int("uid", key=True),
    Column("tablename", String(255), nullable=False),
    _int("recuid"),
    _int("tstamp"),
    _int("actiontype"),
    Column("fields", Text, nullable=True),
    Column("ai_row", SmallInteger, nullable=False),
)
batch_evidence = _temporary(
    "tx_runrecord_batch_evidence",
    _int("event_uid", key=True),
    _int("uid", nullable=True),
    _int("written_at"),
)
batch_human = _temporary(
    "tx_runrecord_batch_human",
    _int("event_uid"),
    _int("uid"),
    _int("tstamp"),
    _int("actiontype"),
    Column("fields", Text, nullable=True),
)
batch_human_agg = _temporary(
    "tx_runrecord_batch_human_agg",
    _int("event_uid", key=True),
    _int("first_tstamp"),
    _int("deletes"),
    _int("modifies"),
    _int("unreadable_modifies"),
)
batch_delete = _temporary(
    "tx_runrecord_batch_delete",
    _int("event_uid", key=True),
    _int("in_window"),
    _int("after_window"),
)
batch_changed = _temporary("tx_runrecord_batch_changed", _int("event_uid"), Column("field", _FIELD))
batch_written = _temporary("tx_runrecord_batch_written", _int("event_uid"), Column("field", _FIELD))
batch_scope = _temporary(
    "tx_runrecord_batch_scope",
    _int("event_uid", key=True),
    _int("changed"),
    _int("release_changed"),
    _int("same_changed"),
)
batch_fact = _temporary(
    "tx_runrecord_batch_fact",
    _int("event_uid", key=True),
    _int("run_uid"),
    _int("written_at"),
    Column("tablename", _NAME, nullable=True),
    _int("recuid", nullable=True),
    Column("target_state", SmallInteger, nullable=False),
    Column("outcome", String(24), nullable=False),
    Column("reason", String(32), nullable=False),
    Column("edit_scope", String(16), nullable=False),
    Column("decision", String(24), nullable=False),
    _int("first_change_after_s", nullable=True),
)
batch_decider = _temporary("tx_runrecord_batch_decider", _int("event_uid"), _int("uid"))
batch_decided = _temporary(
    "tx_runrecord_batch_decided", _int("event_uid", key=True), Column("decided_by", Text, nullable=False)
)
batch_mine = _temporary(
    "tx_runrecord_batch_mine",
    _int("run_uid", key=True),
    Column("correlation_id", String(36), nullable=False),
    Column("outcome", String(24), nullable=False),
)
batch_mirror = _temporary(
    "tx_runrecord_batch_mirror", Column("correlation_id", String(36), primary_key=True), _int("run_uid")
)
batch_ordinal = _temporary("tx_runrecord_batch_ordinal", _int("n", key=True))

# Each index belongs to its table; adapters.dialect.session.create_temporary_tables creates them with it.
_INDEXES = (
    Index("tx_runrecord_batch_write_record", batch_write.c.tablename, batch_write.c.recuid),
    # Not unique: on MariaDB "Pages" and "pages" are one key, yet two records (_record_match).
    Index("tx_runrecord_batch_record_record", batch_record.c.tablename, batch_record.c.recuid),
    Index(
        "tx_runrecord_batch_history_record",
        batch_history.c.tablename,
        batch_history.c.recuid,
        batch_history.c.tstamp,
        batch_history.c.uid,
    ),
    # A record's deletes without reading its other rows: a record written a hundred times has thousands.
    Index(
        "tx_runrecord_batch_history_action",
        batch_history.c.actiontype,
        batch_history.c.tablename,
        batch_history.c.recuid,
        batch_history.c.tstamp,
    ),
    Index("tx_runrecord_batch_human_event", batch_human.c.event_uid),
    Index("tx_runrecord_batch_changed_event", batch_changed.c.event_uid),
    Index("tx_runrecord_batch_written_event", batch_written.c.event_uid),
    Index("tx_runrecord_batch_decider_event", batch_decider.c.event_uid),
)
BATCH_TABLES = tuple(_scratch.tables.values())


# --- one batch ---------------------------------------------------------------------------------------------


@dataclass
class BatchResult:
    """What one batch did: its page (for the keyset) and the counts of what this transaction derived."""

    last_run_uid: int | None  # None: no run was due after the keyset
    runs_in_page: int = 0
    runs_without_uuid: int = 0
    runs_derivable: int = 0
    runs_mine: int = 0
    mirrored: int = 0
    runs_by_outcome: Counter[str] | None = None
    writes: Counter[tuple[str, str, str]] | None = None  # (outcome, reason, edit_scope) → writes
    phases: dict[str, float] | None = None


@dataclass(frozen=True)
class BatchSettings:
    now: int
    window_s: int
    cutoff: int
    oldest: int | None  # the oldest row left in sys_history (core.outcomes, rule 3's history_trimmed)
    limit: int
    # Whether the batch gives the planner its tables' statistics: the first batch that derives does, and
    # later batches of the job, whose tables hold rows of the same kind, plan with those.
    analyze: bool = True

    def statistics(self, connection: Connection, *tables: Table) -> None:
        if self.analyze:
            sqlsession.analyze(connection, *tables)


Timer = Callable[[str], None]  # called with a phase's name when it ends


def derive_batch(
    connection: Connection, settings: BatchSettings, catalog: TableCatalog, after: int, timer: Timer
) -> BatchResult:
    """Derive the next page of due runs after run uid `after`, inside the caller's transaction."""
    dialect = connection.dialect.name
    sqlsession.empty_temporary_tables(connection, [t for t in BATCH_TABLES if t is not batch_ordinal])
    page = targets.due_page_query(dialect, after=after, cutoff=settings.cutoff, limit=settings.limit)
    connection.execute(insert(batch_run).from_select([c.name for c in batch_run.c], page))
    head = connection.execute(
        select(
            func.max(batch_run.c.run_uid),
            func.count(),
            func.coalesce(func.sum(batch_run.c.derivable), 0),
            func.coalesce(func.sum(case((batch_run.c.correlation_id == "", 1), else_=0)), 0),
        )
    ).one()
    result = BatchResult(last_run_uid=head[0], runs_in_page=int(head[1]))
    result.runs_derivable, result.runs_without_uuid = int(head[2]), int(head[3])
    timer("page")
    if head[0] is None or not result.runs_derivable:
        return result
    settings.statistics(connection, batch_run)
    tables = _fill_writes(connection, settings, catalog)
    timer("targets")
    _fill_records(connection, settings, tables)
    timer("presence")
    _fill_history(connection, settings)
    timer("history")
    _fill_window(connection, settings)
    timer("window")
    _fill_scope(connection, settings)
    timer("scope")
    _fill_facts(connection, settings)
    _fill_deciders(connection, settings)
    timer("classify")
    _save(connection, settings, result)
    timer("write")
    return result


def _fill_writes(connection: Connection, settings: BatchSettings, catalog: TableCatalog) -> list[RecordTable]:
    """The batch's writes with their target states; returns the record tables they write to."""
    dialect = connection.dialect.name
    t, r = targets.target, batch_run
    joined, found = plans.inner_probe(
        dialect,
        r,
        t,
        t.c.run_uid == r.c.run_uid,
        (t.c.event_uid, t.c.run_uid, t.c.written_at, t.c.tablename, t.c.recuid),
        "targets",
    )
    without_target = or_(found.c.tablename.is_(None), found.c.recuid.is_(None))
    rows = (
        select(
            found.c.event_uid,
            found.c.run_uid,
            found.c.written_at,
            found.c.tablename,
            found.c.recuid,
            case((without_target, UNREADABLE), else_=READABLE),
        )
        .select_from(joined)
        .where(r.c.derivable == 1)
    )
    rows = plans.by_index(dialect, plans.in_order(dialect, rows), t, "tx_runrecord_write_target_run")
    connection.execute(insert(batch_write).from_select([c.name for c in batch_write.c], rows))
    w = batch_write.c
    name = exact(dialect, w.tablename)
    names = connection.execute(select(name).where(w.tablename.is_not(None)).distinct()).scalars()
    unreadable, missing, tables = _judge_names(catalog, (read_exact(value) for value in names))
    # Only the writes to a name that is no readable table change state: most batches have none.
    if unreadable or missing:
        state = case(
            (name.in_(exact_values(dialect, unreadable)), UNREADABLE),
            (name.in_(exact_values(dialect, missing)), TABLE_MISSING),
            else_=w.target_state,
        )
        judged = exact_values(dialect, [*unreadable, *missing])
        connection.execute(update(batch_write).where(name.in_(judged)).values(target_state=state))
    settings.statistics(connection, batch_write)
    return tables


def _judge_names(catalog: TableCatalog, names: Any) -> tuple[list[str], list[str], list[RecordTable]]:
    """The batch's table names that make a target unreadable, those of tables this database lacks, and the
    record tables of the rest.

    A name reaches SQL as an identifier only after it matched the database's own list (DESIGN.md rule 6)."""
    unreadable: list[str] = []
    missing: list[str] = []
    tables: list[RecordTable] = []
    for name in names:
        if not is_table_name(name):
            unreadable.append(name)
        elif (table := catalog.get(name)) is None:
            missing.append(name)
        elif not table.has_uid:
            unreadable.append(name)
        else:
            tables.append(table)
    return unreadable, missing, tables


def _fill_records(connection: Connection, settings: BatchSettings, tables: list[RecordTable]) -> None:
    """The batch's written records, each with whether it is still there (DESIGN.md rule 2), in one pass."""
    dialect = connection.dialect.name
    w = batch_write.c
    name = exact(dialect, w.tablename)
    distinct = (
        select(
            name.label("tablename"),
            w.recuid,
            w.target_state,
            func.min(w.written_at).label("first_write_at"),
            func.max(w.written_at).label("last_write_at"),
        )
        .where(w.target_state != UNREADABLE)
        .group_by(name, w.recuid, w.target_state)
        .subquery("written")
    )
    missing = distinct.c.target_state == TABLE_MISSING
    name = exact(dialect, distinct.c.tablename)
    presence = case(
        (missing, Presence.TABLE_MISSING.value),
        *[
            (name == exact_values(dialect, [table.name])[0], _presence_of(table, distinct.c.recuid))
            for table in tables
        ],
        else_=Presence.ROW_MISSING.value,
    )
    records = select(
        distinct.c.tablename,
        distinct.c.recuid,
        presence,
        distinct.c.first_write_at,
        distinct.c.last_write_at,
    )
    connection.execute(insert(batch_record).from_select([c.name for c in batch_record.c], records))
    settings.statistics(connection, batch_record)


def _presence_of(table: RecordTable, recuid: ColumnElement[int]) -> ColumnElement[Any]:
    """Whether the record `recuid` of the table is there, deleted or gone (DESIGN.md rule 2)."""
    # The name comes from TableCatalog, i.e. from the database's own list, never from a payload unchecked.
    columns: list[ColumnClause[Any]] = [column("uid"), *([column("deleted")] if table.has_deleted else [])]
    record = table_clause(table.name, *columns)
    if table.has_deleted:
        deleted = record.c.deleted
        state: ColumnElement[Any] = case(
            (and_(deleted.is_not(None), deleted != 0), Presence.DELETED.value), else_=Presence.PRESENT.value
        )
    else:
        state = literal(Presence.PRESENT.value)
    found = select(state).where(record.c.uid == recuid).limit(1).scalar_subquery()
    return func.coalesce(found, Presence.ROW_MISSING.value)


def _fill_history(connection: Connection, settings: BatchSettings) -> None:
    dialect = connection.dialect.name
    h, r = schema.sys_history, batch_record
    joined, found = plans.inner_probe(
        dialect,
        r,
        h,
        _record_match(dialect, r, h),
        (h.c.uid, h.c.tablename, h.c.recuid, h.c.tstamp, h.c.actiontype, h.c.history_data),
        "history",
    )
    t = targets.target
    ai_write = select(t.c.event_uid).where(
        _record_match(dialect, found, t),
        t.c.written_at.between(found.c.tstamp - SAME_SAVE_S, found.c.tstamp + SAME_SAVE_S),
    )
    ai_row = plans.by_index(dialect, ai_write, t, "tx_runrecord_write_target_record").exists()
    # Keys are read only where a rule can ask for them: a write's own save (from SAME_SAVE_S before the
    # record's first write in the batch) and the modifications inside a window (up to its last write's end).
    # An add row long before, which lists every field of the record, is left unread.
    with_fields = and_(
        found.c.actiontype.in_((Action.ADD.value, Action.MODIFY.value)),
        found.c.tstamp.between(r.c.first_write_at - SAME_SAVE_S, r.c.last_write_at + settings.window_s),
    )

    def fill(guarded: bool) -> None:
        document = sqljson.json_document(dialect, found.c.history_data, guarded=guarded)
        keys = sqljson.record_keys(dialect, document, found.c.actiontype)
        rows = select(
            found.c.uid,
            found.c.tablename,
            found.c.recuid,
            found.c.tstamp,
            found.c.actiontype,
            case((with_fields, keys)),
            case((ai_row, 1), else_=0),
        ).select_from(joined)
        rows = plans.by_index(dialect, plans.in_order(dialect, rows), h, HISTORY_INDEX)
        connection.execute(insert(batch_history).from_select([c.name for c in batch_history.c], rows))

    sqljson.cast_first(connection, fill)
    settings.statistics(connection, batch_history)


def _own_fields(evidence: Table, history: Table) -> ColumnElement[Any]:
    """The keys of the evidence row when it is W's own save (an add or modify at or after W less
    SAME_SAVE_S, rule 7), else NULL: `history` is joined on the evidence's uid."""
    own = and_(
        history.c.tstamp >= evidence.c.written_at - SAME_SAVE_S,
        history.c.actiontype.in_((Action.ADD.value, Action.MODIFY.value)),
    )
    return case((own, history.c.fields))


def _record_match(dialect: str, left: Any, right: Any) -> ColumnElement[bool]:
    """The same record: the same uid in a table of the same name, byte for byte (DESIGN.md rule 6). On
    MariaDB the plain comparison ignores case ("Pages" = "pages") but finds the rows by index; the exact
    comparison beside it keeps the other table's rows out."""
    same = and_(right.c.tablename == left.c.tablename, right.c.recuid == left.c.recuid)
    if not is_mariadb(dialect):
        return same
    return and_(same, exact(dialect, right.c.tablename) == exact(dialect, left.c.tablename))


def _fill_window(connection: Connection, settings: BatchSettings) -> None:
    """The evidence row, the human rows and the deletes of each readable write (rules 2-4)."""
    dialect = connection.dialect.name
    w, h = batch_write, batch_history
    t = w.c.written_at
    readable = w.c.target_state != UNREADABLE
    # Rule 3: the newest row (tstamp, uid) stamped at most SAME_SAVE_S after W, one index seek a write (a
    # join would pair every write with every earlier row of its record: many writes to one record).
    newest = (
        select(h.c.uid)
        .where(_record_match(dialect, w, h), h.c.tstamp <= t + SAME_SAVE_S)
        .order_by(h.c.tstamp.desc(), h.c.uid.desc())
        .limit(1)
        .scalar_subquery()
    )
    evidence = select(w.c.event_uid, newest, w.c.written_at).where(readable)
    connection.execute(insert(batch_evidence).from_select(["event_uid", "uid", "written_at"], evidence))
    # Rule 4: rows after W's own save, up to the window's end, that are no AI write's own.
    in_window = and_(h.c.tstamp > t + SAME_SAVE_S, h.c.tstamp <= t + settings.window_s, h.c.ai_row == 0)
    human = (
        select(w.c.event_uid, h.c.uid, h.c.tstamp, h.c.actiontype, h.c.fields)
        .select_from(w.join(h, and_(_record_match(dialect, w, h), in_window)))
        .where(readable)
    )
    connection.execute(insert(batch_human).from_select([c.name for c in batch_human.c], human))
    connection.execute(
        insert(batch_human_agg).from_select([c.name for c in batch_human_agg.c], _human_counts())
    )
    closes = t + settings.window_s
    deletes = (
        select(
            w.c.event_uid,
            func.sum(case((and_(h.c.tstamp > t, h.c.tstamp <= closes), 1), else_=0)),
            func.sum(case((h.c.tstamp > closes, 1), else_=0)),
        )
        .select_from(w.join(h, and_(_record_match(dialect, w, h), h.c.actiontype == Action.DELETE.value)))
        .where(readable)
        .group_by(w.c.event_uid)
    )
    connection.execute(insert(batch_delete).from_select([c.name for c in batch_delete.c], deletes))
    settings.statistics(connection, batch_evidence, batch_human, batch_human_agg, batch_delete)


def _human_counts() -> Select[Any]:
    u = batch_human.c

    def rows_of(condition: ColumnElement[bool]) -> ColumnElement[int]:
        return func.sum(case((condition, 1), else_=0))

    modify = u.actiontype == Action.MODIFY.value
    return select(
        u.event_uid,
        func.min(u.tstamp),
        rows_of(u.actiontype == Action.DELETE.value),
        rows_of(modify),
        rows_of(and_(modify, u.fields.is_(None))),
    ).group_by(u.event_uid)


def _fill_scope(connection: Connection, settings: BatchSettings) -> None:
    """The changed and written field names of each write with human modifications, and their counts
    (rule 7): only keys, exploded from the key lists batch_history holds."""
    dialect = connection.dialect.name
    ordinals = batch_ordinal if sqljson.needs_ordinals(dialect) else None
    if ordinals is not None:
        _fill_ordinals(connection)
    u = batch_human
    source, field = sqljson.array_elements(dialect, u, u.c.fields, ordinals)
    changed = (
        select(u.c.event_uid, field)
        .select_from(source)
        .where(
            u.c.actiontype == Action.MODIFY.value,
            u.c.fields.is_not(None),
            field.not_in(sorted(BOOKKEEPING_FIELDS)),
        )
        .distinct()
    )
    connection.execute(insert(batch_changed).from_select(["event_uid", "field"], changed))
    e, h = batch_evidence, batch_history
    own_fields = _own_fields(e, h)
    evidence = e.join(h, h.c.uid == e.c.uid)
    source, field = sqljson.array_elements(dialect, evidence, h.c.fields, ordinals)
    written = select(e.c.event_uid, field).select_from(source).where(own_fields.is_not(None)).distinct()
    connection.execute(insert(batch_written).from_select(["event_uid", "field"], written))
    settings.statistics(connection, batch_changed, batch_written)
    c, wr = batch_changed.c, batch_written.c
    counts = (
        select(
            c.event_uid,
            func.count(),
            func.sum(case((c.field == RELEASE_FIELD, 1), else_=0)),
            func.sum(case((and_(c.field != RELEASE_FIELD, wr.field.is_not(None)), 1), else_=0)),
        )
        .select_from(
            batch_changed.outerjoin(batch_written, and_(wr.event_uid == c.event_uid, wr.field == c.field))
        )
        .group_by(c.event_uid)
    )
    connection.execute(insert(batch_scope).from_select([col.name for col in batch_scope.c], counts))


def _fill_ordinals(connection: Connection) -> None:
    """Ordinals from 0 up to the longest key list of the batch (adapters.dialect.json.array_elements)."""
    longest = connection.execute(select(func.max(func.json_length(batch_history.c.fields)))).scalar()
    have = connection.execute(select(func.count()).select_from(batch_ordinal)).scalar_one()
    wanted = int(longest or 0)
    if wanted > have:
        bulk.insert_rows(connection, batch_ordinal, ("n",), [(n,) for n in range(have, wanted)])


def _fill_facts(connection: Connection, settings: BatchSettings) -> None:
    w, r, e, a, d, s = batch_write, batch_record, batch_evidence, batch_human_agg, batch_delete, batch_scope
    h = batch_history
    dialect = connection.dialect.name
    facts = decision.FactColumns(
        target_unreadable=w.c.target_state == UNREADABLE,
        presence=r.c.presence,
        deletes_in_window=d.c.in_window,
        deletes_after_window=d.c.after_window,
        evidence_uid=e.c.uid,
        history_reaches_back=decision.reaches_back(w.c.written_at, settings.oldest),
        human_deletes=a.c.deletes,
        human_modifies=a.c.modifies,
        unreadable_modifies=a.c.unreadable_modifies,
        written_fields=_own_fields(e, h),
        changed=s.c.changed,
        release_changed=s.c.release_changed,
        same_changed=s.c.same_changed,
    )
    outcome = decision.outcome(facts)
    first_change = case((outcome == CallOutcome.UNKNOWN.value, None), else_=a.c.first_tstamp - w.c.written_at)
    source = (
        w.outerjoin(r, _record_match(dialect, w, r))
        .outerjoin(e, e.c.event_uid == w.c.event_uid)
        .outerjoin(h, h.c.uid == e.c.uid)
        .outerjoin(a, a.c.event_uid == w.c.event_uid)
        .outerjoin(d, d.c.event_uid == w.c.event_uid)
        .outerjoin(s, s.c.event_uid == w.c.event_uid)
    )
    rows = select(
        w.c.event_uid,
        w.c.run_uid,
        w.c.written_at,
        w.c.tablename,
        w.c.recuid,
        w.c.target_state,
        outcome,
        decision.reason(facts),
        decision.edit_scope(outcome, facts),
        decision.deciding_test(facts),
        first_change,
    ).select_from(source)
    connection.execute(insert(batch_fact).from_select([c.name for c in batch_fact.c], rows))
    settings.statistics(connection, batch_fact)


def _fill_deciders(connection: Connection, settings: BatchSettings) -> None:
    """The sys_history uids that decided each write (core.outcomes.WriteOutcome.decided_by), JSON arrays."""
    dialect = connection.dialect.name
    f, e, u, h = batch_fact, batch_evidence, batch_human, batch_history
    columns = ["event_uid", "uid"]
    evidence = (
        select(e.c.event_uid, e.c.uid)
        .select_from(e.join(f, f.c.event_uid == e.c.event_uid))
        .where(f.c.outcome != CallOutcome.UNKNOWN.value, e.c.uid.is_not(None))
    )
    connection.execute(insert(batch_decider).from_select(columns, evidence))
    # Rule 2: a gone record is decided by its evidence and every delete row of the window.
    t = f.c.written_at
    in_window_delete = and_(
        h.c.actiontype == Action.DELETE.value, h.c.tstamp > t, h.c.tstamp <= t + settings.window_s
    )
    gone = (
        select(f.c.event_uid, h.c.uid)
        .select_from(f.join(h, and_(_record_match(dialect, f, h), in_window_delete)))
        .where(f.c.decision == WriteTest.RECORD_GONE.value)
    )
    connection.execute(insert(batch_decider).from_select(columns, gone))
    # The window's classification: the human rows of the action that decided.
    by_action = [
        and_(f.c.decision == test.value, u.c.actiontype == action.value)
        for action, test in WINDOW_TESTS.items()
    ]
    window = (
        select(u.c.event_uid, u.c.uid)
        .select_from(u.join(f, f.c.event_uid == u.c.event_uid))
        .where(case(*[(condition, 1) for condition in by_action], else_=0) == 1)
    )
    connection.execute(insert(batch_decider).from_select(columns, window))
    distinct = select(batch_decider.c.event_uid, batch_decider.c.uid).distinct()
    if not aggregate.orders_inside(dialect):
        distinct = distinct.order_by(batch_decider.c.event_uid, batch_decider.c.uid)
    rows = distinct.subquery("deciders")
    decided = select(rows.c.event_uid, aggregate.uid_array(dialect, rows.c.uid)).group_by(rows.c.event_uid)
    connection.execute(insert(batch_decided).from_select(["event_uid", "decided_by"], decided))


# --- what the batch writes ---------------------------------------------------------------------------------


def _save(connection: Connection, settings: BatchSettings, result: BatchResult) -> None:
    dialect = connection.dialect.name
    r, f = batch_run, batch_fact
    out = schema.run_outcome
    highest = func.max(decision.rank(f.c.outcome))
    runs = (
        select(
            r.c.run_uid,
            r.c.correlation_id,
            decision.ranked(highest),
            func.count(),
            r.c.configuration_identifier,
            literal(settings.window_s),
            literal(RULE_VERSION),
            literal(settings.now),
            r.c.last_write_at,
        )
        .select_from(r.join(f, f.c.run_uid == r.c.run_uid))
        .where(r.c.derivable == 1)
        .group_by(r.c.run_uid, r.c.correlation_id, r.c.configuration_identifier, r.c.last_write_at)
    )
    # The run rows first: their unique key decides which of two concurrent transactions derives each run,
    # and only the runs this one really inserted get their write rows and their observed row.
    inserted = bulk.insert_or_ignore_select(dialect, out, RUN_COLUMNS, runs).returning(
        out.c.run_uid, out.c.correlation_id, out.c.outcome
    )
    mine = [tuple(row) for row in connection.execute(inserted)]
    bulk.insert_rows(connection, batch_mine, ("run_uid", "correlation_id", "outcome"), mine)
    result.runs_mine = len(mine)
    settings.statistics(connection, batch_mine)
    _save_writes(connection, settings)
    m = batch_mine
    survival.add_counts(
        connection,
        f.join(m, m.c.run_uid == f.c.run_uid).join(r, r.c.run_uid == f.c.run_uid),
        configuration=r.c.configuration_identifier,
        run_uid=f.c.run_uid,
        outcome=f.c.outcome,
        first_change_after_s=f.c.first_change_after_s,
        window_s=settings.window_s,
    )
    result.mirrored = _mirror(connection, settings)
    derivable = select(r.c.run_uid).where(r.c.derivable == 1)
    targets.forget_pending(connection, derivable)
    _count(connection, result)


def _save_writes(connection: Connection, settings: BatchSettings) -> None:
    f, r, m, dd = batch_fact, batch_run, batch_mine, batch_decided
    readable = f.c.target_state != UNREADABLE
    rows = select(
        f.c.run_uid,
        r.c.correlation_id,
        f.c.event_uid,
        case((readable, f.c.tablename), else_=literal("")),
        case((readable, f.c.recuid), else_=literal(0)),
        f.c.written_at,
        f.c.outcome,
        f.c.reason,
        f.c.edit_scope,
        f.c.first_change_after_s,
        literal(RULE_VERSION),
        literal(settings.now),
        func.coalesce(dd.c.decided_by, literal("[]")),
    ).select_from(
        f.join(r, r.c.run_uid == f.c.run_uid)
        .join(m, m.c.run_uid == f.c.run_uid)
        .outerjoin(dd, dd.c.event_uid == f.c.event_uid)
    )
    dialect = connection.dialect.name
    connection.execute(bulk.insert_or_ignore_select(dialect, schema.write_outcome, WRITE_COLUMNS, rows))


def _mirror(connection: Connection, settings: BatchSettings) -> int:
    """The observed rows of tx_nrllm_call_outcome for the runs this transaction derived, one per correlation
    id: a correlation id that already has an observed row (nr-llm's own deriver) is left as it is."""
    m = batch_mine
    joined, unobserved = targets.unobserved(connection.dialect.name, m, m.c.correlation_id)
    first = select(m.c.correlation_id, func.min(m.c.run_uid)).select_from(joined).where(unobserved)
    first = first.group_by(m.c.correlation_id)
    connection.execute(insert(batch_mirror).from_select(["correlation_id", "run_uid"], first))
    b = batch_mirror
    rows = select(literal(0), m.c.correlation_id, m.c.outcome, literal(settings.now), literal(settings.now))
    rows = rows.select_from(b.join(m, m.c.run_uid == b.c.run_uid))
    columns = ["pid", "correlation_id", "outcome", "crdate", "tstamp"]
    connection.execute(insert(schema.call_outcome).from_select(columns, rows))
    return int(connection.execute(select(func.count()).select_from(b)).scalar_one())


def _count(connection: Connection, result: BatchResult) -> None:
    f, m = batch_fact, batch_mine
    writes = connection.execute(
        select(f.c.outcome, f.c.reason, f.c.edit_scope, func.count())
        .select_from(f.join(m, m.c.run_uid == f.c.run_uid))
        .group_by(f.c.outcome, f.c.reason, f.c.edit_scope)
    ).all()
    result.writes = Counter({(o, r, s): int(n) for o, r, s, n in writes})
    runs = connection.execute(select(m.c.outcome, func.count()).group_by(m.c.outcome)).all()
    result.runs_by_outcome = Counter({o: int(n) for o, n in runs})
