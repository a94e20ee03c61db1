"""core.run_record_schema: the one statement of a run record entry's shape, read by core.run_record_json (and
compiled into SQL by adapters.measure_batch.entries, tests/db/test_run_record_schema.py)."""

from __future__ import annotations

from typing import Any

import pytest

from core.run_record import (
    Completeness,
    Decision,
    Ended,
    RunRecordEntry,
    ToolUse,
    Undecided,
    UndecidedBy,
    UndecidedKind,
    UnreadableEntry,
    WrittenRecord,
)
from core.run_record_json import from_json
from core.run_record_schema import ENTRY, Field, Holds, Shape
from tests.unit.core.run_record_schema_cases import MALFORMED, cases, entry_with, schema_fields

SCALARS = [
    (path, field) for path, field in schema_fields(ENTRY) if field.holds not in (Holds.LIST, Holds.OBJECT)
]


def _written_keys(shape: Shape, value: dict[str, Any]) -> dict[str, Any]:
    """The value's keys, with those of the objects it holds (a list's first item) where the shape has some."""
    found: dict[str, Any] = {}
    for key, member in value.items():
        field = next((f for f in shape.fields if f.key == key), None)
        inner = member[0] if isinstance(member, list) and member else member
        found[key] = (
            _written_keys(field.shape, inner) if field and field.shape and isinstance(inner, dict) else None
        )
    return found


def _schema_keys(shape: Shape) -> dict[str, Any]:
    return {f.key: None if f.shape is None else _schema_keys(f.shape) for f in shape.fields}


def test_every_kind_a_field_can_hold_has_malformed_values_to_test_it_with() -> None:
    assert set(MALFORMED) == set(Holds)


def test_the_python_reader_calls_an_entry_readable_exactly_where_the_schema_does() -> None:
    table = cases()

    found = {what: isinstance(from_json(entry), RunRecordEntry) for what, entry, _ in table}

    assert found == {what: readable for what, _, readable in table}


@pytest.mark.parametrize(("path", "field"), SCALARS, ids=[".".join(map(str, path)) for path, _ in SCALARS])
def test_a_malformed_field_is_the_reason_the_entry_is_unreadable(
    path: tuple[str | int, ...], field: Field
) -> None:
    value = MALFORMED[field.holds][0]

    read = from_json(entry_with(path, value))

    assert read == UnreadableEntry(field.problem)


def test_an_entry_is_written_with_exactly_the_keys_the_schema_reads() -> None:
    entry = RunRecordEntry(
        "run",
        1,
        2,
        0,
        Ended.WAITING,
        tools=(ToolUse("read_page", 1, 0),),
        writes=(WrittenRecord("pages:1", Completeness.COMPLETE),),
        waiting=("update_page",),
        decision=Decision("update_page", "abgelehnt"),
        undecided=Undecided(UndecidedKind.CARD, UndecidedBy.NEW_MESSAGE),
        at=5,
    )
    written = entry.to_json()

    assert _written_keys(ENTRY, written) == _schema_keys(ENTRY)
    assert from_json(written) == entry


def test_a_shape_without_a_builder_holds_one_field() -> None:
    with pytest.raises(ValueError, match="exactly one field"):
        Shape((Field("a", Holds.TEXT), Field("b", Holds.TEXT)))
