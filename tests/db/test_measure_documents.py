"""The JSON readings measure-rates counts with (adapters.dialect.documents), on every dialect.

Each rule is checked against what Python's json and core.run_record_json say of the same text, once on the
document itself and once through the fragments `member_table` hands over (on MariaDB each member's own JSON
text, read by one JSON_TABLE pass; the other dialects read the document itself both times).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from sqlalchemy import ColumnElement, Engine, String, literal, select

from adapters.dialect import documents as doc
from adapters.dialect import json as sqljson
from adapters.dialect.document_members import Members, fragmented, member_table
from adapters.dialect.names import is_mariadb

MEMBERS: tuple[doc.Path, ...] = (("n",), ("l",), ("d",), ("d", "t"))
Reading = Callable[[str, Members], ColumnElement[Any]]


def _both(engine: Engine, text: str, reading: Reading) -> tuple[Any, Any]:
    """The reading of the text as a document, and through its members' fragments: member_table's (MariaDB),
    else fragmented's (SQLite from 3.38; elsewhere the document again)."""
    with engine.connect() as connection:
        dialect = connection.dialect.name
        source = select(literal(text, String).label("payload")).subquery("source")
        document = doc.document(dialect, source.c.payload)
        direct = connection.execute(select(reading(dialect, Members(document))).select_from(source))
        table, members = member_table(dialect, document, MEMBERS, "member")
        if table is not None:
            rows: Any = source.outerjoin(table, literal(True))
        else:
            rows, _, members = fragmented(dialect, source, [], members, MEMBERS, "member")
        through = connection.execute(select(reading(dialect, members)).select_from(rows))
        return direct.scalar_one(), through.scalar_one()


def _python_count(text: str, *, optional: bool) -> bool:
    """core.run_record_json._int: an int (not a bool) of at least 0; None only where a default exists."""
    value = json.loads(text).get("n")
    if value is None:
        return optional
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


COUNTS = (
    '{"n": 0}',
    '{"n": 7}',
    '{"n": -0}',
    '{"n": 12345678901}',
    '{"n": -1}',
    '{"n": -12345678901}',
    '{"n": 1.5}',
    '{"n": 2.0}',
    '{"n": "1"}',
    '{"n": true}',
    '{"n": null}',
    '{"n": [1]}',
    '{"n": {"a": 1}}',
    "{}",
)


@pytest.mark.parametrize("optional", [True, False], ids=["optional", "required"])
@pytest.mark.parametrize("text", COUNTS)
def test_a_count_is_an_integer_of_at_least_zero_and_missing_or_null_only_where_it_has_a_default(
    installation_engine: Engine, text: str, optional: bool
) -> None:
    def reading(dialect: str, members: Members) -> ColumnElement[Any]:
        return doc.is_count(dialect, *members.at(("n",)), optional=optional)

    direct, through = _both(installation_engine, text, reading)

    assert (bool(direct), bool(through)) == (_python_count(text, optional=optional),) * 2


def _has_integer_x(dialect: str) -> doc.Item:
    return lambda item: doc.is_kind(dialect, item, ("x",), "integer")


LISTS = (
    ('{"l": []}', True),
    ('{"l": [{"x": 1}, {"x": 2}]}', True),
    ('{"l": [{"x": 1}, {"x": "a"}]}', False),
    ('{"l": [3]}', False),
    ('{"l": null}', None),  # None: as optional says
    ("{}", None),
    ('{"l": {}}', False),
    ('{"l": "a"}', False),
)


@pytest.mark.parametrize("optional", [True, False], ids=["optional", "required"])
@pytest.mark.parametrize(("text", "expected"), LISTS)
def test_a_list_of_items_passes_when_every_item_does_and_an_empty_list_passes_unread(
    installation_engine: Engine, text: str, expected: bool | None, optional: bool
) -> None:
    def reading(dialect: str, members: Members) -> ColumnElement[Any]:
        return doc.is_list_of(dialect, *members.at(("l",)), _has_integer_x(dialect), optional=optional)

    direct, through = _both(installation_engine, text, reading)

    wanted = optional if expected is None else expected
    assert (bool(direct), bool(through)) == (wanted, wanted)


KINDS = (
    ('{"d": {"t": "x"}}', "object"),
    ('{"d": {"t": 1}}', "object, no text"),
    ('{"d": null}', "null"),
    ("{}", "missing"),
    ('{"d": []}', "other"),
    ('{"d": "x"}', "other"),
)


@pytest.mark.parametrize(("text", "found"), KINDS)
def test_a_member_is_read_by_its_kind_once_missing_apart_and_any_other_kind_false(
    installation_engine: Engine, text: str, found: str
) -> None:
    def reading(dialect: str, members: Members) -> ColumnElement[Any]:
        named = doc.is_kind(dialect, *members.at(("d", "t")), "string")
        return doc.by_kind(dialect, *members.at(("d",)), {"object": named, "null": True}, missing=True)

    direct, through = _both(installation_engine, text, reading)

    wanted = found in ("object", "null", "missing")
    assert (bool(direct), bool(through)) == (wanted, wanted)


@pytest.mark.parametrize(
    "text",
    ['{"n": "Überschrift \\u00e9 \\"zitiert\\""}', '{"n": 5}', '{"n": null}', "{}", '{"n": [1, {"a": 2}]}'],
)
def test_a_member_reads_the_same_from_its_fragment_as_from_the_document(
    installation_engine: Engine, text: str
) -> None:
    readings: dict[str, Reading] = {
        "kind": lambda d, m: doc.kind(d, *m.at(("n",))),
        "string": lambda d, m: doc.string(d, *m.at(("n",)), 255),
        "integer": lambda d, m: doc.integer(d, *m.at(("n",))),
        "absent or null": lambda d, m: doc.absent_or_null(d, *m.at(("n",))),
        "length": lambda d, m: doc.array_length(d, *m.at(("n",))),
    }
    found = {name: _both(installation_engine, text, reading) for name, reading in readings.items()}

    assert {name: direct for name, (direct, _) in found.items()} == {
        name: through for name, (_, through) in found.items()
    }
    value = json.loads(text).get("n")
    assert found["string"][0] == (value if isinstance(value, str) else None)


OBJECTS = ('{"a": 1}', ' {"a": 1} ', '\n{"a": [1]}\t', "[1]", '"x"', "null", "42", "{not json", "", "{")
# Escapes and a number PostgreSQL's jsonb refuses and Python reads.
UNUSUAL_OBJECTS = ('{"a": "x\\u0000y"}', '{"a": "\\ud800"}', '{"a": 1e1000000}')


@pytest.mark.parametrize("unguarded_first", [False, True], ids=["guarded", "unguarded first"])
@pytest.mark.parametrize("text", [*OBJECTS, *UNUSUAL_OBJECTS, None])
def test_a_payload_is_an_object_where_python_reads_one_and_never_where_python_does_not(
    installation_engine: Engine, text: str | None, unguarded_first: bool
) -> None:
    # Unguarded first is how measure-rates checks every event payload (adapters.events.doubtful): a run
    # whose events it vouches for is counted without core reading them.
    try:
        expected = isinstance(json.loads(text or ""), dict)
    except json.JSONDecodeError:
        expected = False
    with installation_engine.begin() as connection:
        dialect = connection.dialect.name

        def is_object(guarded: bool) -> Any:
            return connection.execute(
                select(doc.is_object(dialect, literal(text, String), guarded=guarded))
            ).scalar_one()

        found = sqljson.cast_first(connection, is_object) if unguarded_first else is_object(True)

    if text in UNUSUAL_OBJECTS:
        # A database may call such a text no object (MariaDB a lone surrogate): core reads it and decides.
        assert expected or not found
    else:
        assert bool(found) is expected


def test_a_member_path_is_plain_keys_only(installation_engine: Engine) -> None:
    with installation_engine.connect() as connection:
        dialect = connection.dialect.name
    if not is_mariadb(dialect):
        pytest.skip("only MariaDB writes member paths into its SQL (JSON_TABLE columns)")

    with pytest.raises(ValueError, match="plain keys"):
        member_table(dialect, literal("{}", String), [("a' OR '1",)], "member")
