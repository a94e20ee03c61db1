"""An event or message payload's kept keys (DESIGN.md "Privacy"), read in SQL: no other value leaves the
database."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from sqlalchemy import ColumnElement, Text, and_, case, cast, func, literal, literal_column, or_, select
from sqlalchemy.dialects import postgresql as pg

from adapters.dialect.json import PG_JSONB_FUNCTION
from adapters.dialect.names import POSTGRESQL, SQLITE, is_mariadb
from core.events import KEPT_KEYS, PayloadShape
from core.transcript import CONTENT_ROLES, KEPT_MESSAGE_KEYS

# Tool arguments and results are never read: the database hands over only the keys core.events.KEPT_KEYS
# names, requestedToolCalls reduced to its calls' names and toolSpecs to the names (strings) it lists, and
# what the payload is (core.events.PayloadShape).
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
        numbers: tuple[str, ...] = ("integer", "real")
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
    names none), or null when it is no list (core drops it then); toolSpecs the list of its items that are
    strings, or null when it is no list. NULL when the payload is not a JSON object.
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


def kept_message(dialect: str, payload: ColumnElement[Any], *, guarded: bool = True) -> ColumnElement[Any]:
    """The JSON text of an object holding only the core.transcript.KEPT_MESSAGE_KEYS a chat message's payload
    holds, `content` only where its role is one of core.transcript.CONTENT_ROLES (a tool's result stays in
    the database, and so do an assistant message's tool calls); each value as written, as `kept_payload`
    keeps them. NULL when the payload is not a JSON object.
    PostgreSQL with `guarded=False` raises a data exception on a text that is not JSON (see `cast_first`).
    """
    kept = sorted(KEPT_MESSAGE_KEYS)
    roles = sorted(CONTENT_ROLES)
    role: ColumnElement[Any]
    if dialect == POSTGRESQL:
        document = _pg_payload_document(payload, guarded=guarded)
        role = func.json_extract_path_text(document, literal_column("'role'"))
        return _pg_kept(document, kept, {"content": role.in_(roles)})
    if dialect == SQLITE:
        # Only CASE promises json_valid is asked first: json_extract fails on a text that is not JSON.
        role = case((func.json_valid(payload) == 1, func.json_extract(payload, "$.role")))
        return _sqlite_kept(payload, kept, {"content": role.in_(roles)})
    if is_mariadb(dialect):
        role = func.json_unquote(func.json_extract(payload, "$.role"))
        return _mariadb_kept(payload, kept, {"content": role.in_(roles)})
    raise NotImplementedError(f"no JSON reading for the {dialect} dialect")


def _only_where(key: ColumnElement[Any], only_where: Mapping[str, ColumnElement[bool]]) -> list[Any]:
    """A member named `key` is kept only where its condition of `only_where` holds."""
    return [or_(key != name, condition) for name, condition in only_where.items()]


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


def _pg_kept(
    document: ColumnElement[Any], kept: list[str], only_where: Mapping[str, ColumnElement[bool]] | None = None
) -> ColumnElement[Any]:
    json_null: ColumnElement[Any] = literal_column("'null'::json")
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
    spec = (
        func.json_array_elements(member.c.value)
        .table_valued("value", with_ordinality="ordinality")
        .render_derived("spec")
    )
    spec_names = (
        select(
            func.coalesce(
                func.json_agg(pg.aggregate_order_by(spec.c.value, spec.c.ordinality)),
                literal_column("'[]'::json"),
            )
        )
        .where(func.json_typeof(spec.c.value) == "string")
        .correlate_except(spec)
        .scalar_subquery()
    )
    is_array = func.json_typeof(member.c.value) == "array"
    value = case(
        (member.c.key == "requestedToolCalls", case((is_array, names), else_=json_null)),
        (member.c.key == "toolSpecs", case((is_array, spec_names), else_=json_null)),
        else_=member.c.value,
    )
    members = (
        select(func.json_object_agg(member.c.key, pg.aggregate_order_by(value, member.c.ordinality)))
        .where(member.c.key.in_(kept), *_only_where(member.c.key, only_where or {}))
        .correlate_except(member)
        .scalar_subquery()
    )
    as_text = func.coalesce(cast(members, Text), literal("{}", Text))
    return case((func.json_typeof(document) == "object", as_text))


def _sqlite_kept(
    payload: ColumnElement[Any], kept: list[str], only_where: Mapping[str, ColumnElement[bool]] | None = None
) -> ColumnElement[Any]:
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
    spec = func.json_each(payload, member.c.fullkey).table_valued("type", "fullkey").alias("spec")
    spec_names = (
        select(
            literal("[", Text)
            + func.coalesce(func.group_concat(payload.op("->")(spec.c.fullkey), ","), "")
            + literal("]", Text)
        )
        .where(spec.c.type == "text")
        .correlate_except(spec)
        .scalar_subquery()
    )
    is_array = member.c.type == "array"
    value = case(
        (member.c.key == "requestedToolCalls", case((is_array, names), else_=literal("null", Text))),
        (member.c.key == "toolSpecs", case((is_array, spec_names), else_=literal("null", Text))),
        else_=payload.op("->")(member.c.fullkey),
    )
    pair = func.json_quote(member.c.key) + literal(":", Text) + value
    members = (
        select(literal("{", Text) + func.coalesce(func.group_concat(pair, ","), "") + literal("}", Text))
        .where(member.c.key.in_(kept), *_only_where(member.c.key, only_where or {}))
        .correlate_except(member)
        .scalar_subquery()
    )
    # Only CASE promises json_valid is asked first: json_each fails on a text that is not JSON.
    return case((func.json_valid(payload) == 1, case((func.json_type(payload) == "object", members))))


def _mariadb_kept(
    payload: ColumnElement[Any], kept: list[str], only_where: Mapping[str, ColumnElement[bool]] | None = None
) -> ColumnElement[Any]:
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
    specs_path = "$.toolSpecs"
    spec = (
        func.json_table(raw(specs_path), literal_column("'$[*]' COLUMNS (ord FOR ORDINALITY)"))
        .table_valued("ord")
        .alias("spec")
    )
    spec_path = func.concat(f"{specs_path}[", spec.c.ord - 1, "]")
    spec_names = (
        select(
            func.concat(
                "[",
                func.coalesce(func.group_concat(raw(spec_path)).aggregate_order_by(spec.c.ord), ""),
                "]",
            )
        )
        .where(func.json_type(raw(spec_path)) == "STRING")
        .correlate_except(spec)
        .scalar_subquery()
    )
    reduced = {"requestedToolCalls": names, "toolSpecs": spec_names}
    pairs = []
    for key in kept:
        path = f"$.{key}"
        value = raw(path)
        if key in reduced:
            value = case((func.json_type(raw(path)) == "ARRAY", reduced[key]), else_="null")
        present = func.json_contains_path(payload, "one", path) == 1
        if only_where and key in only_where:
            present = and_(present, only_where[key])
        pairs.append(case((present, func.concat(json.dumps(key), ":", value))))
    members = func.concat("{", func.concat_ws(",", *pairs), "}")
    return case((func.json_valid(payload) == 1, case((func.json_type(payload) == "OBJECT", members))))
