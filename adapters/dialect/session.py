"""A connection's session as jobs use it: the derivation's isolation and session settings, which errors
mean "another transaction was in the way, try the batch again", the statistics and dropping of its temporary
tables, where MariaDB keeps them, and a transaction that DDL rolls back with (init-db)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from weakref import WeakKeyDictionary

from sqlalchemy import Column, Connection, Integer, LargeBinary, MetaData, Table, Text, event
from sqlalchemy.engine import Dialect
from sqlalchemy.exc import DBAPIError
from sqlalchemy.schema import CreateIndex, CreateTable, ExecutableDDLElement

from adapters.dialect.names import POSTGRESQL, SQLITE, is_mariadb
from adapters.errors import RunrecordError

# Server errors that only say another transaction was in the way: deadlock, serialization failure (both
# refused at once), lock wait timeout, SQLite's busy database (both after a wait). The batch is safe to run
# again (it inserts or ignores).
_DEADLOCK_MARIADB = 1213
_DEADLOCK_POSTGRESQL = frozenset({"40001", "40P01"})
_LOCK_WAIT_TIMEOUT_MARIADB = 1205
# What MariaDB says to CREATE TEMPORARY TABLE from an account without that right (ER_DBACCESS_DENIED_ERROR).
_DATABASE_DENIED_MARIADB = 1044

# MariaDB keeps a batch table that asks for it in memory (ENGINE=MEMORY, its indexes B-trees): InnoDB writes
# undo for every row of a temporary table, about 1.4 µs a row inserted against 0.1 µs in memory (measured;
# derive-outcomes at scale 0.05 took 4.0 s against 5.1 s). A table in memory holds at most this many bytes
# (MariaDB also sizes its allocations by it: the server held 155 MB more at the peak of that job, 370 MB with
# 256 MB a table; docs/installation.md has today's figures); a batch whose table outgrows it fails with
# "table is full", and the job's tables are kept on disk from then on (spill_to_disk).
MEMORY_TABLE_BYTES = 64 * 1024 * 1024
_TABLE_FULL_MARIADB = 1114
_IN_MEMORY = "runrecord_in_memory"  # Table.info: MariaDB may keep the table in memory
_SQLITE_ORDER = "runrecord_sqlite_order"  # Table.info: the columns SQLite keeps the rows ordered by
_HASHED = "runrecord_hashed"  # Table.info: PostgreSQL hashes the table wherever it is joined
_ON_DISK = "runrecord_on_disk"  # Connection.info: this job's tables are kept on disk
_UNTOUCHED = "runrecord_untouched"  # Connection.info: this job's tables are empty, as they were created


# derive-outcomes' runs per batch, i.e. per transaction, unless asked otherwise (batch_runs). Larger batches
# read a record written in many batches fewer times: every batch that writes a hot record reads its history
# rows and its AI writes again. On an installation with hot records (benchmarks.installation's wide shape)
# 25,000 runs took 8-11% off a full run against 10,000 on SQLite and PostgreSQL, and 7% on the generator's
# shape at 0.05 (measured). MariaDB took 10,000 while its batch tables' record names were utf8mb4 (its tables
# in memory outgrew MEMORY_TABLE_BYTES with 25,000); in ASCII (own_rows_scratch), two runs each at 0.1, 25,000
# against 10,000 took 7% and 16% off the wide shape, 11% and 4% off one-editor, 15% and 1% off
# small-conversations, and left the default shape as it was (measured), with up to 210 MB of tables in the
# server's memory against 120 MB (docs/installation.md). SQLite takes 50,000 (2026-12-07, the wide shape,
# measured): at 0.5 (478,811 writes, 13 batches of 25,000 runs) 27.7-28.9 s against 33.7 s, its history part
# 9.5 s against 13.5 s; at 0.1 4.6-5.0 s against 5.0 s; the same peak memory. PostgreSQL keeps 25,000: at
# 0.5 50,000 took 51.2-54.7 s against 55.5-58.3 s, at 0.1 9.0-9.4 s against 8.5-9.2 s.
BATCH_RUNS = 25_000
SQLITE_BATCH_RUNS = 50_000


# The page cache of SQLite's temporary tables while a job runs, in KiB, and SQLite's default for every cache
# (SQLITE_DEFAULT_CACHE_SIZE), which the job gives back. With 16 MB derive-outcomes at the `fanout` shape's
# 0.1 (one batch of 100,000 writes) took 5.98 s against 6.59 s, the other shapes within the noise; 32 and
# 64 MB brought no more (measured). The process holds up to 16 MB more.
SQLITE_TEMP_CACHE_KIB = 16 * 1024
SQLITE_DEFAULT_CACHE_KIB = 2000


def batch_runs(dialect: str) -> int:
    """derive-outcomes' runs per batch on this dialect unless asked otherwise (see BATCH_RUNS)."""
    return SQLITE_BATCH_RUNS if dialect == SQLITE else BATCH_RUNS


def job_execution_options(dialect: str) -> dict[str, Any]:
    """Connection options for the jobs that read the installation's tables into their own (derive-outcomes,
    measure-rates).

    MariaDB's REPEATABLE READ makes `INSERT … SELECT` take shared next-key locks on every row it reads, so
    filling the write targets would block nr-llm from writing events while it runs, and a measurement's
    batch the chat from saving a conversation; READ COMMITTED reads a consistent snapshot without locking, as
    PostgreSQL does by default.
    """
    return {"isolation_level": "READ COMMITTED"} if is_mariadb(dialect) else {}


def job_session(dialect: str) -> tuple[list[str], list[str]]:
    """Settings of the derivation job's own connection: the statements that set them, those that undo them.

    PostgreSQL: no JIT compilation. The job's statements are index lookups of a few thousand rows, but without
    statistics the planner's cost estimates pass jit_above_cost and every statement was compiled first: 57 ms
    of compiling for a 6 ms lookup (measured). MariaDB: the size of a batch table in memory. SQLite: the page
    cache of the batch tables. Only this session changes, never what is stored. The undoing statements run
    when the job ends, since a pooled connection outlives it.
    """
    if dialect == POSTGRESQL:
        # A batch's sorts and hashes (its history rows, the window functions) spill to disk in the default
        # 4 MB; this session's budget only, never the server's.
        return ["SET jit = off", "SET work_mem = '64MB'"], ["RESET jit", "RESET work_mem"]
    if is_mariadb(dialect):
        # The server's own temporary tables (a GROUP BY's groups, a window's rows, a derived table) stay in
        # memory up to the smaller of the two sizes, 16 MB by default, and go on in Aria on disk beyond: the
        # survival counts of the `fanout` shape's 0.1 (79,310 groups of a 150-character name and a time)
        # took 1.15 s against 0.48 s with 64 MB (measured). A statement's own, gone when it ends.
        sizes = ("max_heap_table_size", "tmp_table_size")
        return [f"SET SESSION {name} = {MEMORY_TABLE_BYTES}" for name in sizes], [
            f"SET SESSION {name} = DEFAULT" for name in sizes
        ]
    # SQLite keeps the batch tables' pages in a cache of their own, 2 MB by default; beyond it every page
    # goes out to a temporary file and is read back.
    return [f"PRAGMA temp.cache_size = -{SQLITE_TEMP_CACHE_KIB}"], [
        f"PRAGMA temp.cache_size = -{SQLITE_DEFAULT_CACHE_KIB}"
    ]


def lock_on_begin(connection: Connection) -> None:
    """SQLite: every transaction of this connection takes the database's write lock as it begins (BEGIN
    IMMEDIATE), as a job's transactions write.

    A deferred transaction that has read, and then writes, cannot wait for a writer that committed meanwhile:
    SQLite answers "database is locked" at once, whatever the busy timeout (the job's own heartbeat, renewed
    from another connection, did that to measure-rates on a large file). Holding the lock from the start,
    the job never meets that; the other writer waits for the busy timeout instead, and a heartbeat that
    cannot be renewed is tried again at the next beat. Other dialects lock rows, not the database.
    """
    if connection.dialect.name != SQLITE:
        return

    def begin_immediate(begun: Connection) -> None:
        if not getattr(begun.connection.dbapi_connection, "in_transaction", False):
            begun.exec_driver_sql("BEGIN IMMEDIATE")

    event.listen(connection, "begin", begin_immediate)


def begin_job_session(connection: Connection) -> None:
    """Apply the job's session settings (`job_session`) to its connection; its tables start in memory
    again where MariaDB may keep them there."""
    connection.info.pop(_ON_DISK, None)
    for statement in job_session(connection.dialect.name)[0]:
        connection.exec_driver_sql(statement)


def end_job_session(connection: Connection) -> None:
    """Undo the job's session settings, before its pooled connection goes back to the pool."""
    for statement in job_session(connection.dialect.name)[1]:
        connection.exec_driver_sql(statement)


def _mariadb_code(error: DBAPIError) -> int | None:
    """The MariaDB error number of `error` (the driver's first argument), None for another server's."""
    args: tuple[Any, ...] = getattr(error.orig, "args", ())
    return args[0] if args and isinstance(args[0], int) else None


def is_retryable(error: DBAPIError) -> bool:
    """Whether the database refused a statement only because a concurrent transaction was in the way."""
    if is_deadlock_victim(error) or _mariadb_code(error) == _LOCK_WAIT_TIMEOUT_MARIADB:
        return True
    return "database is locked" in str(error.orig)


def is_deadlock_victim(error: DBAPIError) -> bool:
    """Whether the database chose this transaction as the victim of a deadlock or of a serialization
    failure: refused at once, where a lock timeout or a busy SQLite file had waited its time out first."""
    if _mariadb_code(error) == _DEADLOCK_MARIADB:
        return True
    return getattr(error.orig, "sqlstate", None) in _DEADLOCK_POSTGRESQL


def begin_ddl(connection: Connection) -> None:
    """Begin a transaction that DDL rolls back with, where the driver would otherwise commit DDL at once.

    Python's sqlite3 runs DDL outside any transaction unless one was begun explicitly; SQLite itself rolls
    DDL back, so begin one and let commit and rollback end it. PostgreSQL rolls DDL back anyway; MariaDB
    commits every CREATE at once whatever is done (the caller drops what a failure left behind).
    """
    dbapi_connection = connection.connection.dbapi_connection
    if connection.dialect.name == SQLITE and not getattr(dbapi_connection, "in_transaction", True):
        connection.exec_driver_sql("BEGIN")


def analyze_statements(dialect: str, table: Table) -> list[str]:
    """Statements that give the planner statistics of a temporary table this job just filled.

    PostgreSQL's autovacuum never analyzes a temporary table, and without statistics the planner guesses its
    size. SQLite guesses every table without statistics to be equally large, and may then read sys_history
    whole to join a batch of a few thousand records: with the batch table's statistics (kept in the temporary
    schema, never in the installation's file) it reads the batch and looks the history up. InnoDB (MariaDB)
    keeps its own statistics; its join order is fixed where it matters (adapters.dialect.plans.in_order).
    """
    if dialect == POSTGRESQL:
        return [f"ANALYZE {table.name}"]
    if dialect == SQLITE:
        return [f"ANALYZE temp.{table.name}"]
    return []


# The share of a page PostgreSQL fills on insert in a batch table whose rows are updated in place: the rest
# holds the new version of each row on its page, so that an update of a column no index holds writes no index
# entry (a heap-only tuple). The waits flag of 20,000 runs, each set: 167 ms against 30 ms (measured).
UPDATED_FILLFACTOR = 50


def temporary_table(
    metadata: MetaData,
    name: str,
    *columns: Any,
    in_memory: bool = False,
    updated_in_place: bool = False,
    sqlite_order: Sequence[str] = (),
    hashed: bool = False,
) -> Table:
    """A batch table of one connection, declared with its column types (create_temporary_tables makes it).

    `in_memory`: MariaDB keeps it in memory (MEMORY_TABLE_BYTES) unless a column is TEXT or BLOB, which that
    engine cannot hold. `updated_in_place`: most of its rows are updated after they are inserted
    (UPDATED_FILLFACTOR). `sqlite_order`: unique columns SQLite stores the rows ordered by (the primary key
    of a `WITHOUT ROWID` table there), so that a scan or a range of them reads the rows in that order; an
    index of the table that begins with them is not made there. The other engines keep the rows as they come,
    with the table's indexes. `hashed`: PostgreSQL joins the table by hashing it in every statement that
    reads it, so its indexes are not made there (each index costs every row inserted)."""
    options: dict[str, Any] = (
        {"postgresql_with": {"fillfactor": UPDATED_FILLFACTOR}} if updated_in_place else {}
    )
    table = Table(name, metadata, *columns, prefixes=["TEMPORARY"], **options)
    table.info[_IN_MEMORY] = in_memory and not any(
        isinstance(column.type, (Text, LargeBinary)) for column in table.columns
    )
    table.info[_SQLITE_ORDER] = tuple(sqlite_order)
    table.info[_HASHED] = hashed
    return table


def integer_column(name: str, *, nullable: bool = False, key: bool = False) -> Column[int]:
    """An integer column of a batch table; a key is never autoincremented (its values come from a SELECT)."""
    return Column(name, Integer, nullable=nullable, primary_key=key, autoincrement=False)


def create_temporary_tables(connection: Connection, tables: Sequence[Table]) -> None:
    """Create a job's temporary tables afresh on its connection, with their indexes (a pooled connection
    outlives the job, and may still hold an earlier run's).

    The statements are compiled once per dialect and sent in as few round trips as the dialect takes: one
    DROP for every table where it takes a list, and on PostgreSQL every CREATE in one string. MariaDB creates
    them again for every batch (empty_temporary_tables), where each round trip counts. The tables are empty,
    so the first empty_temporary_tables after them has nothing to do."""
    try:
        _create(connection, tables)
    except DBAPIError as error:
        if _mariadb_code(error) == _DATABASE_DENIED_MARIADB:
            said = getattr(error.orig, "args", ("",))[-1]
            raise RunrecordError(
                f"the account may not create the temporary tables the job works in ({said}): grant it CREATE "
                "TEMPORARY TABLES on the database (docs/installation.md)"
            ) from None
        raise
    connection.info[_UNTOUCHED] = True


def _create(connection: Connection, tables: Sequence[Table]) -> None:
    drop_temporary_tables(connection, tables)
    memory = is_mariadb(connection.dialect.name) and not connection.info.get(_ON_DISK, False)
    statements = [statement for table in tables for statement in _creating(connection.dialect, table, memory)]
    if connection.dialect.name == POSTGRESQL:
        connection.exec_driver_sql(";\n".join(statements))
        return
    for statement in statements:
        connection.exec_driver_sql(statement)


_CREATING: WeakKeyDictionary[Dialect, dict[tuple[str, bool], tuple[str, ...]]] = WeakKeyDictionary()


def _creating(dialect: Dialect, table: Table, memory: bool) -> tuple[str, ...]:
    """The CREATE TABLE and CREATE INDEX statements of a temporary table, compiled once per dialect; with
    `memory`, of a table MariaDB may keep in memory there."""
    memory = memory and bool(table.info.get(_IN_MEMORY))
    compiled = _CREATING.setdefault(dialect, {})
    if (table.name, memory) not in compiled:
        order: tuple[str, ...] = table.info.get(_SQLITE_ORDER, ()) if dialect.name == SQLITE else ()
        made = [i for i in table.indexes if not order or order[: len(i.columns)] != tuple(i.columns.keys())]
        if dialect.name == POSTGRESQL and table.info.get(_HASHED):
            made = []
        ddl: list[ExecutableDDLElement] = [CreateTable(table), *(CreateIndex(i) for i in made)]
        create, *indexes = (str(element.compile(dialect=dialect)).strip() for element in ddl)
        if order:
            create = create.removesuffix(")").rstrip() + f", PRIMARY KEY ({', '.join(order)})) WITHOUT ROWID"
        if memory:  # a MEMORY table's keys are hashes unless they say otherwise: no ranges, no order
            create = create.replace("PRIMARY KEY (", "PRIMARY KEY USING BTREE (") + " ENGINE=MEMORY"
            indexes = [f"{index} USING BTREE" for index in indexes]
        compiled[(table.name, memory)] = (create, *indexes)
    return compiled[(table.name, memory)]


def spill_to_disk(connection: Connection, error: DBAPIError) -> bool:
    """Whether `error` is a batch table in memory that was full (MEMORY_TABLE_BYTES); this job's tables are
    then created on disk from the next batch on, which the caller tries again."""
    if _mariadb_code(error) != _TABLE_FULL_MARIADB or connection.info.get(_ON_DISK, False):
        return False
    connection.info[_ON_DISK] = True
    return True


def drop_temporary_tables(connection: Connection, tables: Sequence[Table]) -> None:
    """Drop a job's temporary tables from its connection: in one statement where the dialect takes a list."""
    for statement in _dropping(connection.dialect.name, tables):
        connection.exec_driver_sql(statement)


# SQLite: a batch table's statistics are taken again in a later batch where it holds more than this many
# times the rows they counted, and at least STALE_ROWS more (BatchStatistics).
STALE_GROWTH = 2
STALE_ROWS = 100


class BatchStatistics:
    """The statistics a job gives the planner of its batch tables (analyze_statements): taken in the first
    batch that fills a table, and kept for the job's later batches, which hold rows of the same kind.

    PostgreSQL scales the row count it stored by the table's pages now. SQLite plans with the count itself:
    a table that held a few rows in the first batch (the oldest conversations of an installation have no
    run record) was read whole for each row of a later batch that probed it, 25 s of a 68 s measurement of
    43,500 conversations cut to three messages each, against 0.07 s for the first batch (measured). There its
    statistics are taken again where a later batch outgrew them (STALE_GROWTH); the first batch, a night's
    only one, counts nothing. MariaDB takes no statistics here."""

    def __init__(self) -> None:
        self._kept: set[str] = set()  # the tables whose statistics a committed batch took
        self._taken: set[str] = set()  # this batch's, until it commits

    def take(self, connection: Connection, *tables: Table) -> None:
        """Give the planner the statistics of the tables just filled, where it has none or stale ones."""
        for table in tables:
            statements = analyze_statements(connection.dialect.name, table)
            if not statements or (table.name in self._kept and not _outgrown(connection, table)):
                continue
            for statement in statements:
                connection.exec_driver_sql(statement)
            self._taken.add(table.name)

    def committed(self) -> None:
        """The batch has committed: the statistics it took hold for the batches after it."""
        self._kept |= self._taken
        self._taken.clear()


def _outgrown(connection: Connection, table: Table) -> bool:
    """SQLite: whether the table holds many more rows than its stored statistics count (STALE_GROWTH). A
    table without them (ANALYZE stores none of an empty one) is planned as a large one."""
    if connection.dialect.name != SQLITE:
        return False
    # Our own table's name, as the ANALYZE names it, and statements nothing compiles.
    stat = connection.exec_driver_sql(
        "SELECT stat FROM temp.sqlite_stat1 WHERE tbl = ? LIMIT 1", (table.name,)
    ).scalar()
    if stat is None:
        return False
    counted = int(str(stat).split()[0])
    rows = int(connection.exec_driver_sql(f"SELECT count(*) FROM temp.{table.name}").scalar_one())
    return rows > max(STALE_GROWTH * counted, counted + STALE_ROWS)


def empty_temporary_tables(connection: Connection, tables: Sequence[Table]) -> None:
    """Empty a job's temporary tables for the next batch, inside its transaction.

    PostgreSQL: TRUNCATE (in the transaction, undone with it). A DELETE leaves the dead rows in the table's
    pages until a VACUUM that never comes for a temporary table, so every later batch would read all earlier
    batches' pages again. MariaDB: each table dropped and created again, which neither commits nor ends the
    transaction for a temporary table (TRUNCATE would commit it); a DELETE undo-logs every row, 0.24 s for
    100,000 rows against about 1 ms (measured). SQLite empties a table on an unconditional DELETE.

    Nothing is done before the first batch after create_temporary_tables: the tables are empty then (on
    MariaDB a night's batch created them twice, 68 statements). A batch tried again empties them, since the
    first try may have left rows where the transaction does not undo them (MariaDB's tables in memory)."""
    if connection.info.pop(_UNTOUCHED, False):
        return
    dialect = connection.dialect.name
    if dialect == POSTGRESQL:
        # Only the tables that hold rows: a TRUNCATE gives each table and index a new file, empty or not
        # (a batch leaves a third of its tables empty, and all of them are empty before the first).
        filled = " UNION ALL ".join(
            f"SELECT {number} WHERE EXISTS (SELECT 1 FROM pg_temp.{table.name})"
            for number, table in enumerate(tables)
        )
        holding = [tables[number] for number in connection.exec_driver_sql(filled).scalars()]
        if holding:
            connection.exec_driver_sql("TRUNCATE " + ", ".join(f"pg_temp.{table.name}" for table in holding))
        return
    if is_mariadb(dialect):
        _create(connection, tables)
        return
    for table in tables:
        connection.exec_driver_sql(f"DELETE FROM {table.name}")


def _dropping(dialect: str, tables: Sequence[Table]) -> list[str]:
    """DROP of temporary tables that can never reach a permanent table of the same name: one statement for all
    of them where the dialect takes a list (PostgreSQL, MariaDB), one a table on SQLite."""
    if not tables:
        return []
    if dialect == POSTGRESQL:
        return ["DROP TABLE IF EXISTS " + ", ".join(f"pg_temp.{table.name}" for table in tables)]
    if is_mariadb(dialect):
        return ["DROP TEMPORARY TABLE IF EXISTS " + ", ".join(table.name for table in tables)]
    if dialect == SQLITE:
        return [f"DROP TABLE IF EXISTS temp.{table.name}" for table in tables]
    raise NotImplementedError(f"no temporary tables for the {dialect} dialect")
