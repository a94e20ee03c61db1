"""What differs between SQLite, MariaDB and PostgreSQL for the outcome derivation, in one place.

* insert-or-ignore: SQLite `INSERT OR IGNORE`, PostgreSQL `ON CONFLICT DO NOTHING`, MariaDB `INSERT IGNORE`;
  on all three a `RETURNING` clause returns only the rows that were really inserted.
* reading JSON in SQL without ever failing on a text that is not JSON: SQLite and MariaDB guard with their
  `json_valid`; PostgreSQL 15 raises on an invalid text in a cast, so it goes through `tx_runrecord_jsonb`, a
  plpgsql function with an EXCEPTION clause that the migration 0002 creates on PostgreSQL only.
* the KEYS of a history row's record (DESIGN.md rule 7: never its values), as a list the driver hands over.
* which errors mean "another transaction was in the way, try the batch again".
* a batch's keys in one parameter (SQLite `json_each`, PostgreSQL an array; MariaDB an IN list), looked up
  one index probe per key on PostgreSQL (`each_key`), and many rows in one statement (`insert_rows`).

Every function takes the dialect's name (`connection.dialect.name`): "sqlite", "mysql" (MariaDB reports
itself as mysql through PyMySQL; `mariadb` is the name of MariaDB's own driver dialect) or "postgresql".
"""

from __future__ import annotations

import functools
import json
import sqlite3
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

from sqlalchemy import (
    ColumnElement,
    Connection,
    Integer,
    Select,
    String,
    Table,
    Text,
    any_,
    bindparam,
    case,
    cast,
    func,
    insert,
    literal,
    literal_column,
    or_,
    select,
    true,
)
from sqlalchemy.dialects import postgresql as pg
from sqlalchemy.dialects import sqlite
from sqlalchemy.exc import DBAPIError
from sqlalchemy.sql.dml import Insert
from sqlalchemy.sql.selectable import TableValuedAlias
from sqlalchemy.types import TypeEngine

from core.events import KEPT_KEYS, PayloadShape

_T = TypeVar("_T")

POSTGRESQL = "postgresql"
SQLITE = "sqlite"
MARIADB = frozenset({"mysql", "mariadb"})

# Created by migration 0002 on PostgreSQL: the text as jsonb, or NULL when it is not JSON.
PG_JSONB_FUNCTION = "tx_runrecord_jsonb"

# The largest uid a record table holds: TYPO3's uid is an int; ours is a signed 32-bit integer column.
MAX_UID = 2_147_483_647

# A write target's table name is at most this long (DOMAIN.md: it matches [A-Za-z0-9_]{1,64}); a longer
# text cannot be a table name and is not copied into a VARCHAR column (which would fail on a strict server).
MAX_TABLE_NAME = 64

# The history_data of a modify row holds the changed fields in newRecord; an add row is the record itself.
_MODIFY = 2
_ADD = 1

# Server errors that only say another transaction was in the way: deadlock, lock wait timeout,
# serialization failure, SQLite's busy database. The batch is safe to run again (it inserts or ignores).
_RETRYABLE_MARIADB = frozenset({1205, 1213})
_RETRYABLE_POSTGRESQL = frozenset({"40001", "40P01"})


def is_mariadb(dialect: str) -> bool:
    """MariaDB (or MySQL), whichever driver dialect name it came through."""
    return dialect in MARIADB


def insert_or_ignore(dialect: str, table: Table) -> Insert:
    """An INSERT that silently skips a row whose unique key is taken, on every supported dialect."""
    if dialect == SQLITE:
        return sqlite.insert(table).on_conflict_do_nothing()
    if dialect == POSTGRESQL:
        return pg.insert(table).on_conflict_do_nothing()
    if is_mariadb(dialect):
        return insert(table).prefix_with("IGNORE")
    raise NotImplementedError(f"no insert-or-ignore for the {dialect} dialect")


def insert_many(connection: Connection, statement: Insert, rows: list[dict[str, Any]]) -> None:
    """Execute an INSERT for many rows through the driver's executemany, with plain tuples.

    The same statement SQLAlchemy would run, compiled once per call; what is saved is SQLAlchemy's
    processing of every parameter of every row, which costs more than the insert itself on SQLite.
    """
    if not rows:
        return
    names = list(rows[0])
    compiled = statement.values({name: bindparam(name) for name in names}).compile(connection)
    order = compiled.positiontup
    if order is None:
        connection.execute(statement, rows)  # a driver with named parameters: no gain to be had
        return
    connection.exec_driver_sql(compiled.string, [tuple(row[name] for name in order) for row in rows])


def job_execution_options(dialect: str) -> dict[str, Any]:
    """Connection options for the derivation job.

    MariaDB's REPEATABLE READ makes `INSERT … SELECT` take shared next-key locks on every row it reads, so
    filling the write targets would block nr-llm from writing events while it runs; READ COMMITTED reads a
    consistent snapshot without locking, as PostgreSQL does by default.
    """
    return {"isolation_level": "READ COMMITTED"} if is_mariadb(dialect) else {}


def job_session(dialect: str) -> tuple[list[str], list[str]]:
    """Settings of the derivation job's own connection: the statements that set them, those that undo them.

    PostgreSQL: no JIT compilation. The job's statements are index lookups of a few thousand rows, but without
    statistics the planner's cost estimates pass jit_above_cost and every statement was compiled first: 57 ms
    of compiling for a 6 ms lookup (measured). Only this session's planning changes, never what is stored.
    The undoing statements run when the job ends, since a pooled connection outlives it.
    """
    if dialect == POSTGRESQL:
        return ["SET jit = off"], ["RESET jit"]
    return [], []


def is_retryable(error: DBAPIError) -> bool:
    """Whether the database refused a statement only because a concurrent transaction was in the way."""
    original = error.orig
    args = getattr(original, "args", ())
    if args and isinstance(args[0], int) and args[0] in _RETRYABLE_MARIADB:
        return True
    if getattr(original, "sqlstate", None) in _RETRYABLE_POSTGRESQL:
        return True
    return "database is locked" in str(original)


# --- JSON documents ---------------------------------------------------------------------------------------


def json_document(dialect: str, text: ColumnElement[Any], *, guarded: bool = True) -> ColumnElement[Any]:
    """The text as a JSON document the other functions here read, or NULL when it is not valid JSON.

    PostgreSQL only: `guarded=False` casts directly, without the guarded function's subtransaction per row,
    but raises on a text that is not JSON (`is_json_cast_error`); the caller asks again guarded then.
    """
    if dialect == POSTGRESQL:
        if not guarded:
            return text.cast(pg.JSONB)
        parsed: ColumnElement[Any] = getattr(func, PG_JSONB_FUNCTION)(text, type_=pg.JSONB)
        return parsed
    if dialect == SQLITE:
        return case((func.json_valid(text) == 1, text))
    if is_mariadb(dialect):
        return case((func.json_valid(text) == 1, text))
    raise NotImplementedError(f"no JSON reading for the {dialect} dialect")


def fenced(dialect: str, query: Select[Any]) -> Select[Any]:
    """Keep PostgreSQL from inlining a subquery, so that its parsed document is computed once per row.

    The planner would otherwise copy the `tx_runrecord_jsonb(...)` call into every place that reads the
    column; OFFSET 0 is PostgreSQL's documented way to stop that. The other dialects need no fence (their
    document is the text itself), and a LIMIT would make MariaDB materialise the subquery.
    """
    return query.offset(0) if dialect == POSTGRESQL else query


def json_string(dialect: str, document: ColumnElement[Any], key: str, max_length: int) -> ColumnElement[Any]:
    """The document's top-level `key` when it is a string of at most max_length characters, else NULL."""
    if dialect == POSTGRESQL:
        value = document[key].astext
        return case(
            (
                func.jsonb_typeof(document[key]) == "string",
                case((func.char_length(value) <= max_length, value)),
            )
        )
    path = f"$.{key}"
    if dialect == SQLITE:
        value = func.json_extract(document, path)
        return case(
            (func.json_type(document, path) == "text", case((func.length(value) <= max_length, value)))
        )
    value = func.json_value(document, path)
    return case(
        (
            func.json_type(func.json_extract(document, path)) == "STRING",
            case((func.char_length(value) <= max_length, value)),
        )
    )


def json_uid(dialect: str, document: ColumnElement[Any], key: str) -> ColumnElement[Any]:
    """The document's top-level `key` when it is a JSON integer from 1 to MAX_UID, else NULL.

    Nested CASEs, because only CASE promises the order of evaluation: a cast is reached only for a text of
    at most ten digits, so that no cast can fail or be truncated with a warning.
    """
    digits = len(str(MAX_UID))
    if dialect == POSTGRESQL:
        text = document[key].astext
        number = text.cast(pg.BIGINT)
        return case(
            (
                func.jsonb_typeof(document[key]) == "number",
                case(
                    (
                        text.regexp_match(f"^[0-9]{{1,{digits}}}$"),
                        case((number.between(1, MAX_UID), number.cast(Integer))),
                    )
                ),
            )
        )
    path = f"$.{key}"
    if dialect == SQLITE:
        value = func.json_extract(document, path)
        return case((func.json_type(document, path) == "integer", case((value.between(1, MAX_UID), value))))
    text = func.json_value(document, path)
    number = text.cast(Integer)
    return case(
        (
            func.json_type(func.json_extract(document, path)) == "INTEGER",
            case(
                (
                    func.char_length(text) <= digits,
                    case((number.between(1, MAX_UID), number)),
                )
            ),
        )
    )


def record_keys(
    dialect: str, document: ColumnElement[Any], actiontype: ColumnElement[int]
) -> ColumnElement[Any]:
    """The field names a history row records: newRecord's keys (modify), the record's keys (add).

    Only the keys, never the values (DESIGN.md rule 7). NULL when history_data is not JSON or does not hold
    an object there, and for every other action. The driver returns a JSON array text on every dialect,
    which `fields_of` turns into a frozenset (once per distinct list: editors change the same fields again).
    On PostgreSQL a text rather than a text[]: an array is parsed element by element in Python by the driver
    and SQLAlchemy, three times the cost of the whole rest of a history row (measured).
    """
    if dialect == POSTGRESQL:
        target = case((actiontype == _MODIFY, document["newRecord"]), else_=document)
        key = func.jsonb_object_keys(target).column_valued("key")
        keys = cast(select(func.json_agg(key)).scalar_subquery(), Text)
        no_keys = literal("[]")  # json_agg over no rows is NULL, not empty
        object_keys = case((func.jsonb_typeof(target) == "object", func.coalesce(keys, no_keys)))
        return case((actiontype.in_((_ADD, _MODIFY)), object_keys))
    if dialect == SQLITE:
        modify = _sqlite_keys(document, "$.newRecord")
        add = _sqlite_keys(document, "$")
        return case((actiontype == _MODIFY, modify), (actiontype == _ADD, add))
    if is_mariadb(dialect):
        # JSON_KEYS gives NULL when the path is missing or not an object, '[]' for an empty object.
        return case(
            (actiontype == _MODIFY, func.json_keys(document, "$.newRecord")),
            (actiontype == _ADD, func.json_keys(document)),
        )
    raise NotImplementedError(f"no history keys for the {dialect} dialect")


def _sqlite_keys(document: ColumnElement[Any], path: str) -> ColumnElement[Any]:
    each = func.json_each(document, path).table_valued("key")
    keys = select(func.json_group_array(each.c.key)).select_from(each).scalar_subquery()
    return case((func.json_type(document, path) == "object", keys))


def fields_of(value: Any) -> frozenset[str] | None:
    """The keys `record_keys` returned, as a frozenset; None when they could not be read."""
    if value is None:
        return None
    if isinstance(value, str):
        return _fields_of_text(value)
    return frozenset(value) if all(isinstance(key, str) for key in value) else None


@functools.lru_cache(maxsize=4_096)
def _fields_of_text(value: str) -> frozenset[str] | None:
    # A record table has a few dozen fields and editors change a few at a time: the same key lists recur.
    keys = json.loads(value)
    if not isinstance(keys, list) or not all(isinstance(key, str) for key in keys):
        return None
    return frozenset(keys)


def analyze_statements(dialect: str, table: Table) -> list[str]:
    """Statements that give the planner statistics of a temporary table this job just filled.

    PostgreSQL's autovacuum never analyzes a temporary table, and without statistics the planner guesses its
    size; InnoDB (MariaDB) keeps its own statistics, and SQLite's planner needs none for an equality lookup.
    """
    return [f"ANALYZE {table.name}"] if dialect == POSTGRESQL else []


def drop_temporary_table(dialect: str, table: Table) -> str:
    """DROP of a temporary table that can never reach a permanent table of the same name."""
    if dialect == POSTGRESQL:
        return f"DROP TABLE IF EXISTS pg_temp.{table.name}"
    if dialect == SQLITE:
        return f"DROP TABLE IF EXISTS temp.{table.name}"
    if is_mariadb(dialect):
        return f"DROP TEMPORARY TABLE IF EXISTS {table.name}"
    raise NotImplementedError(f"no temporary tables for the {dialect} dialect")


# --- measure-rates ----------------------------------------------------------------------------------------


def upsert(dialect: str, table: Table, keys: tuple[str, ...]) -> Insert:
    """An INSERT that replaces every other column of a row whose unique key `keys` is taken.

    SQLite and PostgreSQL `ON CONFLICT (keys) DO UPDATE`, MariaDB `ON DUPLICATE KEY UPDATE` (which takes any
    unique key of the table: the table must have no other than `keys` and its primary key).
    """
    columns = [column.name for column in table.columns if column.name not in keys and not column.primary_key]
    if dialect in (SQLITE, POSTGRESQL):
        statement = (sqlite.insert if dialect == SQLITE else pg.insert)(table)
        return statement.on_conflict_do_update(
            index_elements=list(keys), set_={name: statement.excluded[name] for name in columns}
        )
    if is_mariadb(dialect):
        from sqlalchemy.dialects import mysql

        statement_mysql = mysql.insert(table)
        return statement_mysql.on_duplicate_key_update(
            {name: statement_mysql.inserted[name] for name in columns}
        )
    raise NotImplementedError(f"no upsert for the {dialect} dialect")


def is_json_object(dialect: str, text: ColumnElement[Any], *, guarded: bool = True) -> ColumnElement[Any]:
    """1 when the text is a JSON object, else 0 (NULL, not JSON, or another JSON value); never an error.

    PostgreSQL only: `guarded=False` casts directly, about twice as fast as the guarded function but raising
    a data exception (SQLSTATE class 22) on a text that is not JSON; the caller asks again guarded then.
    """
    if dialect == POSTGRESQL:
        document = json_document(dialect, text) if guarded else text.cast(pg.JSONB)
        return case((func.jsonb_typeof(document) == "object", 1), else_=0)
    if dialect == SQLITE or is_mariadb(dialect):
        # json_type would fail on a text that is not JSON; only CASE promises json_valid is asked first.
        kind = "object" if dialect == SQLITE else "OBJECT"
        return case((func.json_valid(text) == 1, case((func.json_type(text) == kind, 1), else_=0)), else_=0)
    raise NotImplementedError(f"no JSON reading for the {dialect} dialect")


def is_json_cast_error(error: DBAPIError) -> bool:
    """PostgreSQL refused a text as jsonb: what the guarded function turns into NULL (SQLSTATE class 22, a
    data exception, or 54, a program limit exceeded)."""
    state = getattr(error.orig, "sqlstate", None)
    return isinstance(state, str) and state.startswith(("22", "54"))


# --- many keys in one parameter, many rows in one statement (derive-outcomes) -----------------------------


def in_values(dialect: str, column: ColumnElement[Any], values: Iterable[Any]) -> ColumnElement[bool]:
    """`column IN (values)`, with the values bound as ONE parameter where the dialect can.

    SQLite: `IN (SELECT value FROM json_each(:json))`, a list subquery its planner drives the column's index
    with; MariaDB: an expanded IN list (PyMySQL interpolates it cheaply and the range optimizer reads it as
    index lookups); PostgreSQL: `= ANY(:array)`, which its planner, without statistics, may answer with a scan
    of every row: a lookup that must stay one index probe per key uses `each_key` there instead.
    """
    ordered = sorted(set(values))
    if dialect == SQLITE:
        each = func.json_each(bindparam(None, json.dumps(ordered), type_=String)).table_valued("value")
        return column.in_(select(each.c.value))
    if dialect == POSTGRESQL:
        return column == any_(_pg_array(None, column.type, ordered))
    if is_mariadb(dialect):
        return column.in_(ordered)
    raise NotImplementedError(f"no IN list for the {dialect} dialect")


def key_table(name: str, keys: Mapping[str, tuple[TypeEngine[Any], Sequence[Any]]]) -> TableValuedAlias:
    """PostgreSQL: the keys as a table, `unnest(:a, :b, …) AS name(a, b, …)`: an array parameter a column."""
    arrays = [_pg_array(f"{name}_{column}", kind, values) for column, (kind, values) in keys.items()]
    return func.unnest(*arrays).table_valued(*keys).render_derived(name=name)


def _pg_array(name: str | None, kind: TypeEngine[Any], values: Sequence[Any]) -> ColumnElement[Any]:
    """An array parameter, bound as the text of a PostgreSQL array literal and cast to `kind`[] in SQL.

    psycopg adapts a Python list element by element in Python, a regular expression per text (1.3 ms for
    2,000 integers, 3.7 ms for 2,000 uuids, measured); the literal is built in a few string joins and parsed
    by the server in C (0.4 ms and 1.1 ms).
    """
    return cast(bindparam(name, array_literal(values), type_=String), pg.ARRAY(_unsized(kind)))


def array_literal(values: Iterable[Any]) -> str:
    """The text of a PostgreSQL array literal of integers, texts and NULLs: `{1,NULL}`, `{"a","b\\"c"}`.

    Integers are written as digits; texts in double quotes with any double quote or backslash escaped by a
    backslash, which is all the array syntax asks (any other character, braces and commas too, is literal
    inside the quotes); None is NULL. Any other type is refused rather than guessed at.
    """
    values = list(values)
    kinds = set(map(type, values))
    # The common cases in a few joins: uids and counts (some NULL), texts without a quote or backslash.
    if kinds <= {int}:
        return "{" + ",".join(map(str, values)) + "}"
    if kinds <= {int, type(None)}:
        return "{" + ",".join("NULL" if value is None else str(value) for value in values) + "}"
    if kinds <= {str}:
        text = "".join(values)
        if "\\" not in text and '"' not in text:
            return '{"' + '","'.join(values) + '"}'
    parts = []
    for value in values:
        if value is None:
            parts.append("NULL")
        elif isinstance(value, str):
            parts.append('"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"')
        elif isinstance(value, int) and not isinstance(value, bool):
            parts.append(str(value))
        else:
            raise TypeError(f"no array literal for a {type(value).__name__}")
    return "{" + ",".join(parts) + "}"


def each_key(keys: TableValuedAlias, lookup: Select[Any], name: str) -> Select[Any]:
    """PostgreSQL: the rows `lookup` finds for each row of `keys`, one index probe per key.

    `lookup` is correlated to `keys` (its WHERE compares indexed columns with theirs). It runs as a LATERAL
    subquery fenced with OFFSET 0, which the planner cannot merge into a join: without the fence, and without
    statistics, it may hash-join a scan of the whole table instead (measured: 1.5 s against 12 ms for the
    sys_history of 1,500 records among 2,000,000 rows). The fence also computes each column once per row.
    """
    found = lookup.offset(0).lateral(name)
    return select(*found.c).select_from(keys).join(found, true())


def placeholder(dialect: str) -> str:
    """The positional parameter marker the driver takes in a statement text."""
    return "?" if dialect == SQLITE else "%s"


def insert_rows(
    connection: Connection,
    table: Table,
    columns: Sequence[str],
    rows: Sequence[Sequence[Any]],
    *,
    or_ignore: bool = False,
    returning: str | None = None,
) -> list[Any]:
    """Insert rows (tuples in `columns` order) in as few statements and round trips as the driver allows.

    With `or_ignore` a row whose unique key is taken is skipped (`insert_or_ignore`). With `returning`,
    that column of the rows really inserted is returned (never of a skipped row); otherwise [].

    * PostgreSQL: the rows COPYed into a temporary table of those columns, then one `INSERT … SELECT` from
      it, where a taken key is skipped and the inserted rows returned: COPY only adds rows, the INSERT keeps
      insert-or-ignore. 2.5 s against 3.9 s for 191,525 write rows as one `INSERT … SELECT * FROM
      unnest(:column1, …)` of array parameters (measured); executemany and multi-row VALUES, which psycopg
      sends one message a row or parses one parameter at a time, are slower still.
    * SQLite and MariaDB without `returning`: the driver's executemany of plain tuples (one C loop in
      sqlite3; PyMySQL rewrites it into multi-row INSERTs).
    * SQLite and MariaDB with `returning`: multi-row `INSERT … VALUES (…), (…) RETURNING`, as many rows a
      statement as the driver's parameter limit allows.
    """
    if not rows:
        return []
    dialect = connection.dialect.name
    if dialect == POSTGRESQL:
        return _insert_copied(connection, table, columns, rows, or_ignore=or_ignore, returning=returning)
    if returning is None:
        text = _insert_text(dialect, connection, table, columns, 1, or_ignore=or_ignore, returning=None)
        connection.exec_driver_sql(text, [tuple(row) for row in rows])
        return []
    per_statement = max(1, min(_MULTIROW_ROWS, _parameter_limit(connection) // len(columns)))
    inserted: list[Any] = []
    for start in range(0, len(rows), per_statement):
        chunk = rows[start : start + per_statement]
        text = _insert_text(
            dialect, connection, table, columns, len(chunk), or_ignore=or_ignore, returning=returning
        )
        values = tuple(value for row in chunk for value in row)
        inserted.extend(connection.exec_driver_sql(text, values).scalars())
    return inserted


# Rows per multi-row INSERT … RETURNING: large enough that a batch takes a statement or two.
_MULTIROW_ROWS = 1_000
# SQLite before 3.32 takes at most 999 parameters a statement (sqlite3 can tell the real limit from 3.11 on).
_SQLITE_PARAMETERS = 999
_SERVER_PARAMETERS = 30_000  # MariaDB has no parameter limit (PyMySQL interpolates); this bounds the text


def _parameter_limit(connection: Connection) -> int:
    if connection.dialect.name != SQLITE:
        return _SERVER_PARAMETERS
    raw = connection.connection.driver_connection
    getlimit = getattr(raw, "getlimit", None)
    if getlimit is None:
        return _SQLITE_PARAMETERS
    return int(getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER))


def _insert_text(
    dialect: str,
    connection: Connection,
    table: Table,
    columns: Sequence[str],
    count: int,
    *,
    or_ignore: bool,
    returning: str | None,
) -> str:
    """A positional INSERT of `count` rows; the names only from our own Table, quoted by the dialect."""
    quote = connection.dialect.identifier_preparer.quote
    mark = placeholder(dialect)
    group = "(" + ", ".join([mark] * len(columns)) + ")"
    # As insert_or_ignore: SQLite skips only a row whose unique key is taken (not OR IGNORE, which would
    # also skip a row breaking NOT NULL), MariaDB's INSERT IGNORE.
    verb = "INSERT IGNORE" if or_ignore and is_mariadb(dialect) else "INSERT"
    conflict = " ON CONFLICT DO NOTHING" if or_ignore and dialect == SQLITE else ""
    if or_ignore and not (dialect == SQLITE or is_mariadb(dialect)):
        raise NotImplementedError(f"no insert-or-ignore for the {dialect} dialect")
    text = (
        f"{verb} INTO {quote(table.name)} ({', '.join(quote(name) for name in columns)}) "
        f"VALUES {', '.join([group] * count)}{conflict}"
    )
    return text if returning is None else f"{text} RETURNING {quote(returning)}"


def _insert_copied(
    connection: Connection,
    table: Table,
    columns: Sequence[str],
    rows: Sequence[Sequence[Any]],
    *,
    or_ignore: bool,
    returning: str | None,
) -> list[Any]:
    quote = connection.dialect.identifier_preparer.quote
    names = ", ".join(quote(name) for name in columns)
    # Names only from our own Table; the temporary table lives in this transaction only.
    target = quote(table.name)
    staged = f"pg_temp.{quote(table.name + '_new')}"
    connection.exec_driver_sql(
        f"CREATE TEMPORARY TABLE {staged} ON COMMIT DROP AS SELECT {names} FROM {target} WITH NO DATA"
    )
    cursor = connection.connection.driver_connection.cursor()
    with cursor.copy(f"COPY {staged} ({names}) FROM STDIN") as copy:
        for row in rows:
            copy.write_row(row)
    text = f"INSERT INTO {target} ({names}) SELECT {names} FROM {staged}"
    text += " ON CONFLICT DO NOTHING" if or_ignore else ""
    text += f" RETURNING {quote(returning)}" if returning is not None else ""
    result = connection.exec_driver_sql(text)
    inserted = list(result.scalars()) if returning is not None else []
    connection.exec_driver_sql(f"DROP TABLE {staged}")
    return inserted


def _unsized(kind: TypeEngine[Any]) -> TypeEngine[Any]:
    # VARCHAR(n)[] would truncate a longer text in the cast; VARCHAR[] leaves the column to refuse it, as a
    # plain INSERT does.
    return String() if isinstance(kind, String) else kind


# --- an event payload's kept keys (DESIGN.md "Privacy") -----------------------------------------------------
#
# Tool arguments and results are never read: the database hands over only the keys core.events.KEPT_KEYS
# names, requestedToolCalls reduced to its calls' names, and what the payload is (core.events.PayloadShape).
# No other value of a payload reaches Python; core.events.read_event reads the two.
#
# * SQLite: json_each over the payload, each kept member's value as its raw JSON text (`payload -> fullkey`,
#   which keeps a number as written), joined with group_concat.
# * PostgreSQL: json_each over the payload cast to json (not jsonb, which would rewrite 1e2 as 100),
#   json_object_agg and json_agg + json_build_object. The cast raises on a text that is not JSON, and
#   json_each on a \u0000 or a lone surrogate anywhere in it: `cast_first` then asks again with the guarded
#   document, which reads such a text with those escapes as spaces.
# * MariaDB: no function lists an object's members, so each kept key is asked by its path (JSON_CONTAINS_PATH,
#   JSON_EXTRACT, which keeps a number as written), joined with CONCAT_WS; the calls through JSON_TABLE.


def payload_shape(dialect: str, payload: ColumnElement[Any], *, guarded: bool = True) -> ColumnElement[Any]:
    """What the payload text is, as a core.events.PayloadShape value; never its content.

    PostgreSQL with `guarded=False` raises a data exception on a text that is not JSON (see `cast_first`).
    """
    number = case(
        (
            payload.regexp_match("[.eE]") if dialect == POSTGRESQL else _has_fraction(payload),
            PayloadShape.FLOAT.value,
        ),
        else_=PayloadShape.INTEGER.value,
    )
    if dialect == POSTGRESQL:
        document = _pg_payload_document(payload, guarded=guarded)
        kinds = {
            "object": PayloadShape.OBJECT,
            "array": PayloadShape.ARRAY,
            "string": PayloadShape.STRING,
            "boolean": PayloadShape.BOOLEAN,
            "null": PayloadShape.NULL,
        }
        typed = func.json_typeof(document)
        return case(
            (payload.is_(None), PayloadShape.ABSENT.value),
            (typed.is_(None), PayloadShape.INVALID.value),
            (typed == "number", number),
            *((typed == name, shape.value) for name, shape in kinds.items()),
            else_=PayloadShape.INVALID.value,
        )
    if dialect == SQLITE:
        kinds = {
            "object": PayloadShape.OBJECT,
            "array": PayloadShape.ARRAY,
            "text": PayloadShape.STRING,
            "true": PayloadShape.BOOLEAN,
            "false": PayloadShape.BOOLEAN,
            "null": PayloadShape.NULL,
        }
        typed = func.json_type(payload)
        numbers = ("integer", "real")
    elif is_mariadb(dialect):
        kinds = {
            "OBJECT": PayloadShape.OBJECT,
            "ARRAY": PayloadShape.ARRAY,
            "STRING": PayloadShape.STRING,
            "BOOLEAN": PayloadShape.BOOLEAN,
            "NULL": PayloadShape.NULL,
        }
        typed = func.json_type(payload)
        numbers = ("INTEGER", "DOUBLE", "DECIMAL")
    else:
        raise NotImplementedError(f"no JSON reading for the {dialect} dialect")
    # Only CASE promises json_valid is asked before json_type, which fails on a text that is not JSON.
    of_json = case(
        (typed.in_(numbers), number),
        *((typed == name, shape.value) for name, shape in kinds.items()),
        else_=PayloadShape.INVALID.value,
    )
    return case(
        (payload.is_(None), PayloadShape.ABSENT.value),
        (func.json_valid(payload) == 1, of_json),
        else_=PayloadShape.INVALID.value,
    )


def _has_fraction(payload: ColumnElement[Any]) -> ColumnElement[bool]:
    # A payload that is a number is that number and white space: json reads it as a float when it is
    # written with a fraction or an exponent, whatever the database's own type says.
    lowered = func.lower(payload)
    return or_(payload.contains(".", autoescape=True), lowered.contains("e", autoescape=True))


def kept_payload(dialect: str, payload: ColumnElement[Any], *, guarded: bool = True) -> ColumnElement[Any]:
    """The JSON text of an object holding only the core.events.KEPT_KEYS the payload holds.

    A key the payload does not hold stays absent, one it holds with null stays null, every value as written;
    requestedToolCalls becomes the list of `{"name": …}` of its calls that are objects (null when the call
    names none), or null when it is no list (core drops it then). NULL when the payload is not a JSON object.
    PostgreSQL with `guarded=False` raises a data exception on a text that is not JSON (see `cast_first`).
    """
    kept = sorted(KEPT_KEYS)
    if dialect == POSTGRESQL:
        return _pg_kept(_pg_payload_document(payload, guarded=guarded), kept)
    if dialect == SQLITE:
        return _sqlite_kept(payload, kept)
    if is_mariadb(dialect):
        return _mariadb_kept(payload, kept)
    raise NotImplementedError(f"no JSON reading for the {dialect} dialect")


def cast_first(connection: Connection, run: Callable[[bool], _T]) -> _T:
    """`run(guarded)`: on PostgreSQL first unguarded, in a savepoint, and guarded only if that fails.

    The guarded reading (`json_document`, `is_json_object`, `payload_shape`, `kept_payload`) opens a
    subtransaction for every text it parses: a third of the time it takes to read the tool_write payloads
    (measured). The direct cast gives the same documents and raises only on a text it cannot read as JSON
    (`is_json_cast_error`), which the guarded run then reads as no JSON, as always. Other dialects read
    guarded at no extra cost.
    """
    if connection.dialect.name != POSTGRESQL:
        return run(True)
    try:
        with connection.begin_nested():
            return run(False)
    except DBAPIError as error:
        if not is_json_cast_error(error):
            raise
    return run(True)


# A \u0000 or a surrogate escape that is an escape (after an even run of backslashes): PostgreSQL's json
# functions cannot turn it into text and fail on the whole document, though it is JSON. The guarded document
# reads it as \u0020; it is never in a kept key as nr-llm writes them.
_PG_UNTRANSLATABLE = r"(?<!\\)((?:\\\\)*)\\u(?:0000|[dD][89a-fA-F][0-9a-fA-F]{2})"


def _pg_payload_document(payload: ColumnElement[Any], *, guarded: bool) -> ColumnElement[Any]:
    """The payload as json, every value as written; guarded: NULL when it is not JSON, never an error."""
    if not guarded:
        return payload.cast(pg.JSON)
    readable = getattr(func, PG_JSONB_FUNCTION)
    cleaned = func.regexp_replace(payload, _PG_UNTRANSLATABLE, r"\1\\u0020", "g")
    return case(
        (readable(payload).is_not(None), payload.cast(pg.JSON)),
        (readable(cleaned).is_not(None), cleaned.cast(pg.JSON)),
    )


def _pg_kept(document: ColumnElement[Any], kept: list[str]) -> ColumnElement[Any]:
    json_null = literal_column("'null'::json")
    member = (
        func.json_each(document)
        .table_valued("key", "value", with_ordinality="ordinality")
        .render_derived("kept")
    )
    call = (
        func.json_array_elements(member.c.value)
        .table_valued("value", with_ordinality="ordinality")
        .render_derived("call")
    )
    name = func.coalesce(func.json_extract_path(call.c.value, literal_column("'name'")), json_null)
    names = (
        select(
            func.coalesce(
                func.json_agg(
                    pg.aggregate_order_by(
                        func.json_build_object(literal_column("'name'"), name), call.c.ordinality
                    )
                ),
                literal_column("'[]'::json"),
            )
        )
        .where(func.json_typeof(call.c.value) == "object")
        .correlate_except(call)
        .scalar_subquery()
    )
    value = case(
        (
            member.c.key == "requestedToolCalls",
            case((func.json_typeof(member.c.value) == "array", names), else_=json_null),
        ),
        else_=member.c.value,
    )
    members = (
        select(func.json_object_agg(member.c.key, pg.aggregate_order_by(value, member.c.ordinality)))
        .where(member.c.key.in_(kept))
        .correlate_except(member)
        .scalar_subquery()
    )
    as_text = func.coalesce(cast(members, Text), literal("{}", Text))
    return case((func.json_typeof(document) == "object", as_text))


def _sqlite_kept(payload: ColumnElement[Any], kept: list[str]) -> ColumnElement[Any]:
    member = func.json_each(payload).table_valued("key", "type", "fullkey").alias("kept")
    call = func.json_each(payload, member.c.fullkey).table_valued("type", "fullkey").alias("call")
    field = func.json_each(payload, call.c.fullkey).table_valued("key", "fullkey").alias("field")
    raw_name = (
        select(payload.op("->")(field.c.fullkey))
        .where(field.c.key == "name")
        .limit(1)
        .correlate_except(field)
        .scalar_subquery()
    )
    item = literal('{"name":', Text) + func.coalesce(raw_name, literal("null", Text)) + literal("}", Text)
    names = (
        select(literal("[", Text) + func.coalesce(func.group_concat(item, ","), "") + literal("]", Text))
        .where(call.c.type == "object")
        .correlate_except(call)
        .scalar_subquery()
    )
    value = case(
        (
            member.c.key == "requestedToolCalls",
            case((member.c.type == "array", names), else_=literal("null", Text)),
        ),
        else_=payload.op("->")(member.c.fullkey),
    )
    pair = func.json_quote(member.c.key) + literal(":", Text) + value
    members = (
        select(literal("{", Text) + func.coalesce(func.group_concat(pair, ","), "") + literal("}", Text))
        .where(member.c.key.in_(kept))
        .correlate_except(member)
        .scalar_subquery()
    )
    # Only CASE promises json_valid is asked first: json_each fails on a text that is not JSON.
    return case((func.json_valid(payload) == 1, case((func.json_type(payload) == "object", members))))


def _mariadb_kept(payload: ColumnElement[Any], kept: list[str]) -> ColumnElement[Any]:
    def raw(path: ColumnElement[Any] | str) -> ColumnElement[Any]:
        return func.json_extract(payload, path)

    calls_path = "$.requestedToolCalls"
    call = (
        func.json_table(raw(calls_path), literal_column("'$[*]' COLUMNS (ord FOR ORDINALITY)"))
        .table_valued("ord")
        .alias("call")
    )
    call_path = func.concat(f"{calls_path}[", call.c.ord - 1, "]")
    item = func.concat('{"name":', func.coalesce(raw(func.concat(call_path, ".name")), "null"), "}")
    names = (
        select(
            func.concat(
                "[",
                func.coalesce(func.group_concat(item).aggregate_order_by(call.c.ord), ""),
                "]",
            )
        )
        .where(func.json_type(raw(call_path)) == "OBJECT")
        .correlate_except(call)
        .scalar_subquery()
    )
    pairs = []
    for key in kept:
        path = f"$.{key}"
        value = raw(path)
        if key == "requestedToolCalls":
            value = case((func.json_type(raw(path)) == "ARRAY", names), else_="null")
        present = func.json_contains_path(payload, "one", path) == 1
        pairs.append(case((present, func.concat(json.dumps(key), ":", value))))
    members = func.concat("{", func.concat_ws(",", *pairs), "}")
    return case((func.json_valid(payload) == 1, case((func.json_type(payload) == "OBJECT", members))))
