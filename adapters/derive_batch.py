"""One batch of derive-outcomes in the database: per write, the facts core's rules ask for, aggregated in SQL;
the outcome, reason and scope by core's decision tables (adapters.decision); the three output tables written
with `INSERT … SELECT` (003_…, DESIGN.md rules 1-8). `derive_batch` runs the steps in order: the own rows
(adapters.own_rows, rule 3), the window here (rules 2 and 4), the edit scope (adapters.derive_scope, rule
7), the facts and deciders here, and the rows written (adapters.derive_save).

A batch moves through the temporary tables of this connection (adapters.derive_scratch lists them). Each
statement names each temporary table once: MariaDB cannot open a temporary table twice in one query.
On PostgreSQL the temporary tables are analyzed once filled (autovacuum never does), and the installation's
tables are probed per key through LATERAL subqueries fenced with OFFSET 0, so that no plan depends on their
statistics.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

from sqlalchemy import (
    ColumnClause,
    ColumnElement,
    Connection,
    Select,
    Table,
    and_,
    case,
    column,
    delete,
    func,
    insert,
    literal,
    null,
    or_,
    select,
    update,
)
from sqlalchemy import table as table_clause

from adapters import decision, derive_save, derive_scope, own_rows, own_rows_scratch
from adapters import write_targets as targets
from adapters.derive_scratch import (
    BATCH_TABLES,
    COUNTABLE_FLOOR_INDEX,
    READABLE,
    STRAY_FLOOR_INDEX,
    TABLE_MISSING,
    UNREADABLE,
    batch_asked,
    batch_countable,
    batch_decided,
    batch_fact,
    batch_keys,
    batch_long,
    batch_ordinal,
    batch_record,
    batch_revert,
    batch_run,
    batch_scope,
    batch_stray,
    batch_unreadable_agg,
    batch_window,
    batch_window_agg,
    batch_write,
    human_column,
)
from adapters.dialect import aggregate, plans
from adapters.dialect import session as sqlsession
from adapters.dialect.exact import (
    exact,
    exact_values,
    ranges_each_row,
    read_exact,
    record_partition,
    same_record,
    same_record_ranged,
)
from adapters.history import RecordTable, TableCatalog, reads_automation
from core.outcomes import CHANGE_ACTIONS, WINDOW_TESTS, Action, CallOutcome, Presence, WriteTest
from core.table_names import is_table_name
from core.window import DELETES, HUMAN_ROWS

# The actions whose rows change the live record's fields.
_CHANGE_ACTIONS = tuple(action.value for action in CHANGE_ACTIONS)
# A window's rows are read from its record's rows whole where the record has at most this many rows in the
# table read (the countable rows, or the strays), and sought as a range for each write beyond
# (exact.ranges_each_row): MariaDB checked the range of each write (3.4 µs a write, nearly all of the 78 ms
# a batch of the default shape's 0.05 spent on the strays).
WHOLE_RECORD_ROWS = 32


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
    # The statistics of the batch tables: taken by the first batch that derives; later batches of the job,
    # whose tables hold rows of the same kind, plan with those unless a table outgrew them.
    tables: sqlsession.BatchStatistics = field(default_factory=sqlsession.BatchStatistics)

    def statistics(self, connection: Connection, *tables: Table) -> None:
        self.tables.take(connection, *tables)


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
    statistics = partial(settings.statistics, connection)
    statistics(batch_run)
    tables = _fill_writes(connection, settings, catalog)
    timer("targets")
    _fill_records(connection, settings, tables)
    timer("presence")
    own_rows.match_own_rows(
        connection,
        batch_record,
        batch_write,
        automation=reads_automation(catalog),
        statistics=statistics,
    )
    timer("history")
    _fill_window(connection, settings)
    _fill_asked(connection, settings)
    timer("window")
    publishing = derive_scope.fill_keys(connection, statistics, window_s=settings.window_s)
    derive_scope.fill_scope(connection, statistics, publishing=publishing, window_s=settings.window_s)
    timer("scope")
    _fill_facts(connection, settings)
    _fill_deciders(connection)
    timer("classify")
    saved = derive_save.save(connection, now=settings.now, window_s=settings.window_s, statistics=statistics)
    result.runs_mine, result.mirrored = saved.runs_mine, saved.mirrored
    result.runs_by_outcome, result.writes = saved.runs_by_outcome, saved.writes
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
    rows = plans.by_index(dialect, plans.in_order(dialect, rows), t, targets.RUN_INDEX)
    connection.execute(insert(batch_write).from_select([c.name for c in batch_write.c], rows))
    w = batch_write.c
    name = exact(dialect, w.tablename)
    names = connection.execute(select(name).where(w.tablename.is_not(None)).distinct()).scalars()
    unreadable, missing, tables = _judge_names(catalog, (read_exact(value) for value in names))
    # Only the writes to a name that is no readable table change state: most batches have none. A target
    # without a readable uid stays unreadable whatever its table (core.outcomes.unreadable_target).
    if unreadable or missing:
        state = case(
            (name.in_(exact_values(dialect, unreadable)), UNREADABLE),
            (and_(name.in_(exact_values(dialect, missing)), w.target_state == READABLE), TABLE_MISSING),
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
            func.min(w.event_uid).label("record_key"),
            func.count().label("writes"),
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
    # Whether the record has more than one AI write, of any run, in this batch or not: two of its writes in
    # the batch say so; else a second row of its targets, one probe whatever a hot record's count.
    t = targets.target
    second = (
        select(t.c.event_uid)
        .where(t.c.tablename == distinct.c.tablename, t.c.recuid == distinct.c.recuid)
        .limit(1)
        .offset(1)
        .scalar_subquery()
    )
    ai_writes = case((distinct.c.writes > 1, 2), (second.is_not(None), 2), else_=1)
    records = select(
        distinct.c.tablename,
        distinct.c.recuid,
        presence,
        distinct.c.first_write_at,
        distinct.c.last_write_at,
        ai_writes,
        distinct.c.record_key,
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


def _fill_window(connection: Connection, settings: BatchSettings) -> None:
    """The rows of each due write's window, and the deletes after it (DESIGN.md rules 2 and 4).

    The rows of core.window's spans: HUMAN_ROWS (inserted after W's own row, stamped up to t + window) and
    DELETES (inserted after W's own row, stamped at any time), compiled by adapters.decision. A row kept
    records the live record and is no AI row, but for a delete (a delete is DISCARDED whoever made it);
    automation's rows are kept only where a rule asks about them (its changes and deletes). `in_window` says
    which rows lie in HUMAN_ROWS; the others are the deletes stamped after the window (rule 2: a record gone
    counts as DISCARDED unless its delete came only after the window)."""
    if DELETES.inserted is not HUMAN_ROWS.inserted:
        raise NotImplementedError("one join holds the window's rows and the deletes while both start alike")
    dialect = connection.dialect.name
    h, c = own_rows_scratch.batch_history, batch_countable
    # The rows that may count, whichever write's, filtered once: a record an agent wrote a thousand times
    # holds mostly AI rows, which every window of it read again only to drop them.
    countable = select(*(h.c[col.name] for col in c.c)).where(_may_count(dialect, h))
    counted = connection.execute(insert(c).from_select([col.name for col in c.c], countable)).rowcount
    settings.statistics(connection, c)
    # A row whose insertion floor is past the window's close was stamped after it, unless it was stamped
    # before a row inserted earlier (the floor is the greatest stamp so far, DOMAIN.md "When a row is
    # stamped"); of those rows only such strays and the deletes can be kept. Read as one range from the
    # boundary on, a record written a thousand times read its later rows again for every write (4.4 million
    # rows for 155,000 kept at the wide shape's 0.1, measured): the range ends at the close, and the rows
    # past it come from the strays alone.
    stray = or_(c.c.tstamp < c.c.floor, c.c.actiontype == Action.DELETE.value)
    strays = select(*(c.c[col.name] for col in batch_stray.c)).where(stray)
    strayed = connection.execute(
        insert(batch_stray).from_select([col.name for col in batch_stray.c], strays)
    ).rowcount
    settings.statistics(connection, batch_stray)
    parts = (
        (c, False, COUNTABLE_FLOOR_INDEX, counted),
        (batch_stray, True, STRAY_FLOOR_INDEX, strayed),
    )
    for rows, passed, index, inserted in parts:
        # MariaDB: the writes of a record with few rows read them whole, those of a long record seek ranges
        # (no record is long in a table of few rows, as a night's often is).
        long_listed = (
            ranges_each_row(dialect) and inserted > WHOLE_RECORD_ROWS and _fill_long(connection, rows)
        )
        ways: list[bool | None] = [False, True] if long_listed else [None]
        for long in ways:
            connection.execute(
                insert(batch_window).from_select(
                    [col.name for col in batch_window.c],
                    _window_rows(dialect, settings, rows, passed, index, long=long),
                )
            )
    settings.statistics(connection, batch_window)
    connection.execute(
        insert(batch_window_agg).from_select([c.name for c in batch_window_agg.c], _window_counts())
    )
    settings.statistics(connection, batch_window_agg)


def _fill_long(connection: Connection, rows: Table) -> int:
    """batch_long: the records with more than WHOLE_RECORD_ROWS rows in `rows`, in place of those of the
    table read before. Returns how many."""
    connection.execute(delete(batch_long))
    long = (
        select(func.min(rows.c.tablename), rows.c.recuid)
        .group_by(*record_partition(connection.dialect.name, rows))
        .having(func.count() > WHOLE_RECORD_ROWS)
    )
    return int(connection.execute(insert(batch_long).from_select(["tablename", "recuid"], long)).rowcount)


def _window_rows(
    dialect: str, settings: BatchSettings, h: Table, passed: bool, index: str, *, long: bool | None
) -> Select[Any]:
    """The rows of `h` (batch_countable, or batch_stray) kept in the due writes' windows: those whose
    insertion floor lies up to the window's close (`passed` False) or beyond it (True), sought through
    `index`, h's (record, floor, uid) index. `long` (MariaDB): the writes of batch_long's records, each
    seeking its range (same_record_ranged), or (False) the others, each reading its record's rows whole;
    None: every write, one way."""
    m = own_rows_scratch.batch_match
    span = decision.SpanColumns(
        uid=h.c.uid, tstamp=h.c.tstamp, own_row=m.c.boundary, closes=m.c.written_at + settings.window_s
    )
    delete = h.c.actiontype == Action.DELETE.value
    in_window = decision.stamped_in(HUMAN_ROWS.stamped, span)
    in_deletes = and_(delete, decision.stamped_in(DELETES.stamped, span))
    # The index's range: every row after the boundary has a floor at least the boundary's.
    floors = and_(
        h.c.floor >= m.c.boundary_floor, h.c.floor > span.closes if passed else h.c.floor <= span.closes
    )
    kept = and_(
        same_record_ranged(dialect, m, h) if long else same_record(dialect, m, h),
        floors,
        decision.inserted_in(HUMAN_ROWS.inserted, span),
        or_(in_window, in_deletes),
    )
    rows = (
        select(
            m.c.event_uid,
            h.c.uid,
            h.c.tstamp,
            h.c.actiontype,
            h.c.automation,
            case((in_window, 1), else_=0),
        )
        .select_from(
            m.join(batch_long, same_record(dialect, m, batch_long)).join(h, kept) if long else m.join(h, kept)
        )
        .where(m.c.due == 1)
    )
    if long is False:
        rows = rows.where(~select(batch_long.c.recuid).where(same_record(dialect, m, batch_long)).exists())
    # The writes first, each range sought in the rows' index (MariaDB chose the rows first and filtered
    # every pair).
    return plans.in_order(dialect, plans.by_index(dialect, rows, h, index))


def _may_count(dialect: str, h: Table) -> ColumnElement[bool]:
    """A row of `h` (batch_history) that may count in a window, whichever write's: it records
    the live record and is no AI row, but for a delete (a delete is DISCARDED whoever made it), and
    automation's rows only where a rule asks about them (its changes and deletes)."""
    delete = h.c.actiontype == Action.DELETE.value
    asked = or_(h.c.automation == 0, h.c.actiontype.in_([*_CHANGE_ACTIONS, Action.DELETE.value]))
    owned: ColumnElement[bool]
    if plans.hashes_a_list(dialect):
        # The own rows of the batch's writes hashed once from their match rows (batch_own stays empty).
        owner = own_rows_scratch.batch_match.alias("owner")
        owned = h.c.uid.in_(select(owner.c.own_uid).where(owner.c.own_uid.is_not(None)))
    else:
        own = own_rows_scratch.batch_own
        owned = select(own.c.uid).where(own.c.uid == h.c.uid).exists()
    ai_row = or_(h.c.named_run.is_not(None), owned)
    # The look-up of AI rows last: MariaDB asks the conditions in this order.
    return and_(
        # SQLite, with the statistics of a batch with hot records, built an index of the batch's rows on the
        # record and `live` for the statement instead (1.2 s against 0.5 s for the wide shape at 0.1).
        plans.not_for_an_index(dialect, h.c.live) == 1,
        asked,
        or_(delete, ~ai_row),
    )


def _is_human(rows: Any) -> ColumnElement[bool]:
    """A row of the window no automation wrote, or a delete (automation's deletes count, rule 4)."""
    return and_(rows.c.in_window == 1, or_(rows.c.automation == 0, rows.c.actiontype == Action.DELETE.value))


def _window_counts() -> Select[Any]:
    u = batch_window.c
    human = _is_human(batch_window)
    per_action = [
        func.sum(case((and_(human, u.actiontype == action.value), 1), else_=0)) for action in WINDOW_TESTS
    ]
    changes = func.sum(case((u.actiontype.in_(_CHANGE_ACTIONS), 1), else_=0))
    deletes_after = func.sum(case((u.in_window == 0, 1), else_=0))
    return select(
        u.event_uid, func.min(case((human, u.tstamp))), *per_action, changes, deletes_after
    ).group_by(u.event_uid)


def _fact_columns(settings: BatchSettings) -> decision.FactColumns:
    """A write's facts over the batch tables."""
    w, r, m, k = batch_write, batch_record, own_rows_scratch.batch_match, batch_keys
    a, s, ua, rv = batch_window_agg, batch_scope, batch_unreadable_agg, batch_revert
    return decision.FactColumns(
        target_unreadable=w.c.target_state == UNREADABLE,
        presence=r.c.presence,
        deletes_in_window=a.c[human_column(Action.DELETE)],
        deletes_after_window=a.c.deletes_after,
        # Rule 3 read with 003_…: only W's own row, or rows of its writer that could be it, are evidence;
        # the boundary of a write without either (the last row inserted by its moment) is none.
        evidence_uid=case(
            (and_(m.c.boundary > 0, or_(m.c.own_uid.is_not(None), m.c.unclear == 1)), m.c.boundary)
        ),
        history_reaches_back=decision.reaches_back(w.c.written_at, settings.oldest),
        own_row_unclear=m.c.unclear,
        human_actions={action: a.c[human_column(action)] for action in WINDOW_TESTS},
        unreadable_changes=ua.c.human,
        automation_unreadable=ua.c.automation,
        automation_keys=s.c.automation_changed,
        automation_same=s.c.automation_same,
        written_fields=case((m.c.own_action.in_(derive_scope.FIELD_ACTION_VALUES), k.c.fields)),
        changed=s.c.changed,
        release_changed=s.c.release_changed,
        same_changed=s.c.same_changed,
        reverted=rv.c.reverted,
    )


def _fill_asked(connection: Connection, settings: BatchSettings) -> None:
    """The due writes whose decision may ask for the fields of their window's changes: those the window's
    counts make EDITED (rule 7's scope), and those no earlier test decides while their window holds a change
    (an automation's change to a field W wrote, rule 4). Every other write is decided before any field is
    read (core.outcomes.WRITE_DECISION), so its window's keys are never asked for."""
    dialect = connection.dialect.name
    w, r, m, a = batch_write, batch_record, own_rows_scratch.batch_match, batch_window_agg
    # The write tests read no field but in the automation's test, which is taken to hold wherever the window
    # holds a change.
    facts = replace(
        _fact_columns(settings),
        automation_unreadable=case((a.c.changes > 0, 1), else_=0),
        automation_keys=null(),
        automation_same=null(),
        written_fields=null(),
    )
    test = decision.deciding_test(facts)
    source = (
        w.join(m, m.c.event_uid == w.c.event_uid)
        .outerjoin(r, same_record(dialect, w, r))
        .outerjoin(a, a.c.event_uid == w.c.event_uid)
    )
    tested = plans.evaluated_once(
        select(w.c.event_uid, test.label("test")).select_from(source).where(m.c.due == 1)
    )
    t = tested.subquery("tested")
    asked = or_(decision.decides(t.c.test, CallOutcome.EDITED), t.c.test == WriteTest.AUTOMATION_CHANGE.value)
    connection.execute(insert(batch_asked).from_select(["event_uid"], select(t.c.event_uid).where(asked)))
    settings.statistics(connection, batch_asked)


def _fill_facts(connection: Connection, settings: BatchSettings) -> None:
    w, r, m, k = batch_write, batch_record, own_rows_scratch.batch_match, batch_keys
    a, s, ua, rv = batch_window_agg, batch_scope, batch_unreadable_agg, batch_revert
    dialect = connection.dialect.name
    facts = _fact_columns(settings)
    source = (
        w.outerjoin(r, same_record(dialect, w, r))
        .outerjoin(m, m.c.event_uid == w.c.event_uid)
        .outerjoin(k, k.c.uid == m.c.own_uid)
        .outerjoin(a, a.c.event_uid == w.c.event_uid)
        .outerjoin(s, s.c.event_uid == w.c.event_uid)
        .outerjoin(ua, ua.c.event_uid == w.c.event_uid)
        .outerjoin(rv, rv.c.event_uid == w.c.event_uid)
    )
    # The decision tables are asked once per write, in a subquery the planner may not merge into the outer
    # one (which would ask them again for each column that reads the deciding test).
    decided = select(
        w.c.event_uid,
        w.c.run_uid,
        w.c.written_at,
        w.c.tablename,
        w.c.recuid,
        w.c.target_state,
        decision.deciding_test(facts).label("decision"),
        decision.edit_scope(facts).label("edit_scope"),
        (a.c.first_tstamp - w.c.written_at).label("since"),
        facts.evidence_uid.label("evidence"),
        m.c.boundary,
    ).select_from(source)
    d = plans.evaluated_once(decided).subquery("decided")
    since = d.c.since
    unknown = decision.decides(d.c.decision, CallOutcome.UNKNOWN)
    first_change = case((unknown, None), (since < 0, 0), else_=since)
    rows = select(
        d.c.event_uid,
        d.c.run_uid,
        d.c.written_at,
        d.c.tablename,
        d.c.recuid,
        d.c.target_state,
        decision.outcome_of(d.c.decision),
        decision.reason_of(d.c.decision),
        case((decision.decides(d.c.decision, CallOutcome.EDITED), d.c.edit_scope), else_=literal("")),
        d.c.decision,
        first_change,
        # A gone record's deletes follow the last row inserted by W's moment, its own row or not
        # (core.classification): that row heads what decided it.
        case(
            (and_(d.c.decision == WriteTest.RECORD_GONE.value, d.c.boundary > 0), d.c.boundary),
            (~unknown, d.c.evidence),
        ),
    )
    connection.execute(insert(batch_fact).from_select([c.name for c in batch_fact.c], rows))
    settings.statistics(connection, batch_fact)


def _fill_deciders(connection: Connection) -> None:
    """The sys_history uids that decided each write (core.outcomes.WriteOutcome.decided_by), JSON arrays: its
    evidence row (its own row, else the last row inserted by its moment) where the outcome is not UNKNOWN,
    then the window's rows of the action that decided, or every delete of the window for a record that is
    gone (rule 2)."""
    dialect = connection.dialect.name
    f, u = batch_fact, batch_window
    delete = and_(u.c.in_window == 1, u.c.actiontype == Action.DELETE.value)
    by_test = [(f.c.decision == WriteTest.RECORD_GONE.value, delete)] + [
        (f.c.decision == test.value, and_(_is_human(u), u.c.actiontype == action.value))
        for action, test in WINDOW_TESTS.items()
    ]
    deciding = or_(*[and_(decided, row) for decided, row in by_test])
    # The window's rows follow the evidence row: they were inserted after it, and each is one row of the
    # window. Where the aggregate keeps the order the rows come in (SQLite), they come through the window's
    # (write, uid) key, in uid order. Each aggregate is named once, below the statement that composes the
    # array: SQLite computes an aggregate with bound values again wherever it is repeated.
    grouped = (
        select(
            f.c.event_uid,
            func.max(f.c.evidence_uid).label("evidence"),
            aggregate.uid_list(dialect, u.c.uid).label("window"),
        )
        .select_from(f.outerjoin(u, and_(u.c.event_uid == f.c.event_uid, deciding)))
        .group_by(f.c.event_uid)
        .subquery("grouped")
    )
    g = grouped.c
    decided = select(g.event_uid, aggregate.uid_array(g.evidence, g.window)).where(
        or_(g.evidence.is_not(None), g.window.is_not(None))
    )
    connection.execute(insert(batch_decided).from_select(["event_uid", "decided_by"], decided))
