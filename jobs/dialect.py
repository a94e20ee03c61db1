"""What differs between SQLite, MariaDB and PostgreSQL for the outcome derivation, in one place.

* insert-or-ignore: SQLite `INSERT OR IGNORE`, PostgreSQL `ON CONFLICT DO NOTHING`, MariaDB `INSERT IGNORE`;
  on all three a `RETURNING` clause returns only the rows that were really inserted.
* reading JSON in SQL without ever failing on a text that is not JSON: SQLite and MariaDB guard with their
  `json_valid`; PostgreSQL 15 raises on an invalid text in a cast, so it goes through `tx_runrecord_jsonb`, a
  plpgsql function with an EXCEPTION clause that the migration 0004 creates on PostgreSQL only.
* the KEYS of a history row's record (DESIGN.md rule 7: never its values), as a list the driver hands over.
* which errors mean "another transaction was in the way, try the batch again".

Every function takes the dialect's name (`connection.dialect.name`): "sqlite", "mysql" (MariaDB reports
itself as mysql through PyMySQL; `mariadb` is the name of MariaDB's own driver dialect) or "postgresql".
"""

from __future__ import annotations

import functools
import json
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Connection,
    Integer,
    Select,
    String,
    Table,
    bindparam,
    case,
    cast,
    func,
    insert,
    literal,
    select,
)
from sqlalchemy.dialects import postgresql as pg
from sqlalchemy.dialects import sqlite
from sqlalchemy.exc import DBAPIError
from sqlalchemy.sql.dml import Insert

POSTGRESQL = "postgresql"
SQLITE = "sqlite"
MARIADB = frozenset({"mysql", "mariadb"})

# Created by migration 0004 on PostgreSQL: the text as jsonb, or NULL when it is not JSON.
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


def json_document(dialect: str, text: ColumnElement[Any]) -> ColumnElement[Any]:
    """The text as a JSON document the other functions here read, or NULL when it is not valid JSON."""
    if dialect == POSTGRESQL:
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
    an object there, and for every other action. The driver returns a JSON array text (SQLite, MariaDB) or
    a list (PostgreSQL); `fields_of` turns either into a frozenset.
    """
    if dialect == POSTGRESQL:
        target = case((actiontype == _MODIFY, document["newRecord"]), else_=document)
        key = func.jsonb_object_keys(target).column_valued("key")
        keys = select(func.array_agg(key)).scalar_subquery()
        no_keys = cast(literal("{}"), pg.ARRAY(String))  # array_agg over no rows is NULL, not empty
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


def is_json_object(dialect: str, text: ColumnElement[Any]) -> ColumnElement[Any]:
    """1 when the text is a JSON object, else 0 (NULL, not JSON, or another JSON value); never an error."""
    if dialect == POSTGRESQL:
        return case((func.jsonb_typeof(json_document(dialect, text)) == "object", 1), else_=0)
    if dialect == SQLITE or is_mariadb(dialect):
        # json_type would fail on a text that is not JSON; only CASE promises json_valid is asked first.
        kind = "object" if dialect == SQLITE else "OBJECT"
        return case((func.json_valid(text) == 1, case((func.json_type(text) == kind, 1), else_=0)), else_=0)
    raise NotImplementedError(f"no JSON reading for the {dialect} dialect")
