"""Reading JSON in SQL without ever failing on a text that is not JSON.

SQLite and MariaDB guard with their `json_valid`; PostgreSQL 15 raises on an invalid text in a cast, so it
goes through `tx_runrecord_jsonb`, a plpgsql function with an EXCEPTION clause that the migration 0002 creates
on PostgreSQL only (`cast_first` tries the direct cast first). Of a history row's record only the KEYS are
read (DESIGN.md rule 7: never its values), as a list the driver hands over.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from sqlalchemy import (
    ColumnElement,
    Connection,
    FromClause,
    Integer,
    LargeBinary,
    Select,
    String,
    Subquery,
    Table,
    Text,
    and_,
    case,
    cast,
    func,
    literal,
    select,
    true,
)
from sqlalchemy.dialects import postgresql as pg
from sqlalchemy.exc import DBAPIError

from adapters.dialect import plans
from adapters.dialect.names import POSTGRESQL, SQLITE, is_mariadb
from core.outcomes import Action
from core.table_names import MAX_RECORD_UID

_T = TypeVar("_T")

# Created by migration 0002 on PostgreSQL: the text as jsonb, or NULL when it is not JSON.
PG_JSONB_FUNCTION = "tx_runrecord_jsonb"

# The largest uid a write target names (core.table_names): sys_history.recuid and our own column are signed
# 32-bit integers.
MAX_UID = MAX_RECORD_UID


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


def with_members(dialect: str, rows: Select[Any], keys: Sequence[str]) -> Subquery:
    """`rows`, whose `document` column is json_document's, as the subquery json_string and json_uid read
    `keys` of. MariaDB parses the whole document again for each function that reads it, and those two read a
    member three times or more: there each key's member is extracted once per row, as JSON text beside the
    other columns, in a subquery it does not merge (the targets of 50,000 tool_write events: 355 ms against
    658 ms, measured). SQLite keeps the documents it parsed, PostgreSQL's are jsonb already: they read the
    document."""
    if not is_mariadb(dialect):
        return rows.subquery("parsed")
    documents = rows.subquery("documents")
    kept = [column for column in documents.c if column.name != "document"]
    members = [func.json_extract(documents.c.document, f"$.{key}").label(key) for key in keys]
    return plans.evaluated_once(select(*kept, *members)).subquery("parsed")


def json_string(dialect: str, parsed: Subquery, key: str, max_length: int) -> ColumnElement[Any]:
    """The document's top-level `key` when it is a string of at most max_length characters, else NULL.
    `parsed`: with_members' subquery."""
    if dialect == POSTGRESQL:
        document = parsed.c.document
        value = document[key].astext
        return case(
            (
                func.jsonb_typeof(document[key]) == "string",
                case((func.char_length(value) <= max_length, value)),
            )
        )
    if dialect == SQLITE:
        path = f"$.{key}"
        document = parsed.c.document
        value = func.json_extract(document, path)
        fits = case((func.length(value) <= max_length, value))
        return case((func.json_type(document, path) == "text", fits))
    member = parsed.c[key]
    text = func.json_unquote(member)
    return case((func.json_type(member) == "STRING", case((func.char_length(text) <= max_length, text))))


def json_uid(dialect: str, parsed: Subquery, key: str) -> ColumnElement[Any]:
    """The document's top-level `key` when it is a JSON integer from 1 to MAX_UID, else NULL. `parsed`:
    with_members' subquery.

    Nested CASEs, because only CASE promises the order of evaluation: a cast is reached only for a text of
    at most ten digits, so that no cast can fail or be truncated with a warning.
    """
    digits = len(str(MAX_UID))
    if dialect == POSTGRESQL:
        document = parsed.c.document
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
    if dialect == SQLITE:
        path = f"$.{key}"
        document = parsed.c.document
        value = func.json_extract(document, path)
        return case((func.json_type(document, path) == "integer", case((value.between(1, MAX_UID), value))))
    # Digits only, as on PostgreSQL: MariaDB's json_type calls 1e3 an INTEGER, which a cast reads as 1.
    member = parsed.c[key]
    number = member.cast(Integer)
    return case(
        (
            func.json_type(member) == "INTEGER",
            case((member.regexp_match(f"^[0-9]{{1,{digits}}}$"), case((number.between(1, MAX_UID), number)))),
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
        target = case((actiontype == Action.MODIFY.value, document["newRecord"]), else_=document)
        key = func.jsonb_object_keys(target).column_valued("key")
        keys = cast(select(func.json_agg(key)).scalar_subquery(), Text)
        no_keys = literal("[]")  # json_agg over no rows is NULL, not empty
        object_keys = case((func.jsonb_typeof(target) == "object", func.coalesce(keys, no_keys)))
        return case((actiontype.in_((Action.ADD.value, Action.MODIFY.value)), object_keys))
    if dialect == SQLITE:
        modify = _sqlite_keys(document, "$.newRecord")
        add = _sqlite_keys(document, "$")
        return case((actiontype == Action.MODIFY.value, modify), (actiontype == Action.ADD.value, add))
    if is_mariadb(dialect):
        # JSON_KEYS gives NULL when the path is missing or not an object, '[]' for an empty object.
        return case(
            (actiontype == Action.MODIFY.value, func.json_keys(document, "$.newRecord")),
            (actiontype == Action.ADD.value, func.json_keys(document)),
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


def is_json_cast_error(error: DBAPIError) -> bool:
    """PostgreSQL refused a text as jsonb: what the guarded function turns into NULL (SQLSTATE class 22, a
    data exception, or 54, a program limit exceeded)."""
    state = getattr(error.orig, "sqlstate", None)
    return isinstance(state, str) and state.startswith(("22", "54"))


def cast_first(connection: Connection, run: Callable[[bool], _T]) -> _T:
    """`run(guarded)`: on PostgreSQL first unguarded, in a savepoint, and guarded only if that fails.

    The guarded reading (`json_document`, `documents.is_object`, `payload_shape`, `kept_payload`) opens a
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


def needs_ordinals(dialect: str) -> bool:
    """Whether `array_elements` joins a table of ordinals (0, 1, …) to unnest an array: MariaDB, whose
    JSON_TABLE SQLAlchemy cannot state. The table must reach the longest array's length."""
    return is_mariadb(dialect)


def array_elements(
    dialect: str, source: FromClause, array: ColumnElement[Any], ordinals: Table | None
) -> tuple[FromClause, ColumnElement[Any]]:
    """`source` joined to the strings of the JSON array text `array` (one row each), and that string.

    SQLite `json_each`, PostgreSQL `json_array_elements_text`, MariaDB the ordinals table (`needs_ordinals`)
    with `JSON_EXTRACT(array, '$[n]')` (its column `n`). `array` is a text this module produced (record_keys),
    so valid JSON.
    """
    if dialect == SQLITE:
        each = func.json_each(array).table_valued("value", joins_implicitly=True).alias("element")
        return source.join(each, true()), each.c.value
    if dialect == POSTGRESQL:
        texts = func.json_array_elements_text(cast(array, pg.JSON))
        each = texts.table_valued("value", joins_implicitly=True).alias("element")
        return source.join(each, true()), each.c.value
    if is_mariadb(dialect):
        assert ordinals is not None, "MariaDB unnests through a table of ordinals"
        n = ordinals.c.n
        joined = source.join(ordinals, n < func.json_length(array))
        return joined, func.json_unquote(func.json_extract(array, func.concat("$[", n, "]")))
    raise NotImplementedError(f"no JSON arrays for the {dialect} dialect")


# A field name that may enter a JSON path (MariaDB and SQLite read the field through a path text); any other
# name is never compared, so it never holds its old value again (DESIGN.md rule 7, `reverted`).
PLAIN_KEY_CHARACTERS = "A-Za-z0-9_"


def is_plain_key(dialect: str, field: ColumnElement[Any]) -> ColumnElement[bool]:
    """Whether the field name is one or more of the characters PLAIN_KEY_CHARACTERS."""
    if dialect == SQLITE:
        return and_(
            func.length(field) > 0, field.op("NOT GLOB", is_comparison=True)(f"*[^{PLAIN_KEY_CHARACTERS}]*")
        )
    if dialect == POSTGRESQL:
        return field.op("~")(f"^[{PLAIN_KEY_CHARACTERS}]+$")
    if is_mariadb(dialect):
        # Binary: no collation folds another character into the class.
        pattern = literal(f"^[{PLAIN_KEY_CHARACTERS}]+$", String())
        return cast(field, LargeBinary).op("REGEXP", is_comparison=True)(pattern)
    raise NotImplementedError(f"no key test for the {dialect} dialect")


def same_value(
    dialect: str,
    new_document: ColumnElement[Any],
    old_document: ColumnElement[Any],
    field: ColumnElement[Any],
) -> ColumnElement[bool]:
    """Whether newRecord[field] of one history document equals oldRecord[field] of another, as JSON values.

    Compared inside the statement only: the values are never selected (DESIGN.md rule 7, "Privacy"). The
    documents are json_document's (NULL when not JSON); a missing field is never equal. `field` must pass
    is_plain_key first (the caller's CASE asks it before this). PostgreSQL compares jsonb values; MariaDB
    with JSON_EQUALS; SQLite the JSON type and json_extract's SQL value (objects and arrays as their minified
    text). The dialects agree on the values TYPO3 writes (strings and integers, one json_encode), and may
    differ on 1.5 against 1.50 or on an escaped against a literal character.
    """
    new: ColumnElement[Any]
    old: ColumnElement[Any]
    if dialect == POSTGRESQL:
        new = new_document.op("->")(literal("newRecord")).op("->")(field)
        old = old_document.op("->")(literal("oldRecord")).op("->")(field)
        return new.op("=")(old)
    new_path = (
        func.concat('$.newRecord."', field, '"') if dialect != SQLITE else '$.newRecord."' + field + '"'
    )
    old_path = (
        func.concat('$.oldRecord."', field, '"') if dialect != SQLITE else '$.oldRecord."' + field + '"'
    )
    if dialect == SQLITE:
        # The values first, with IS (equal, or both NULL: a JSON null or a missing field), then the types
        # (which tell a null from a missing field, and 1 from 1.0 or true): the types are read only for the
        # values that agree, and SQLite parses a document again for each function that reads it.
        new_value = func.json_extract(new_document, new_path)
        old_value = func.json_extract(old_document, old_path)
        new_type, old_type = func.json_type(new_document, new_path), func.json_type(old_document, old_path)
        return and_(new_value.is_not_distinct_from(old_value), new_type == old_type)
    if is_mariadb(dialect):
        new = func.json_extract(new_document, new_path)
        old = func.json_extract(old_document, old_path)
        return func.coalesce(func.json_equals(new, old), 0) == 1
    raise NotImplementedError(f"no JSON comparison for the {dialect} dialect")
