"""Run record entries built from core.run_record_schema.ENTRY: a well-formed one, and one per field that is
malformed, null or missing there, with what the schema says of each (tests/unit/core/test_run_record_schema.py
and tests/db/test_run_record_schema.py give them to both readers)."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

from core.run_record_schema import ENTRY, Field, Holds, Shape

# A value of the wrong kind for each kind a field can hold: the entry holding it is unreadable.
MALFORMED: dict[Holds, tuple[Any, ...]] = {
    Holds.COUNT: (-1, "1", True, 1.5, [1]),
    Holds.TEXT: (3, False, {"a": "x"}),
    Holds.NAME: (3, ["x"]),
    Holds.CHOICE: ("no such value", 1),
    Holds.RECORD: ("pages", "pages:0", "pa-ges:1", 7),
    Holds.LIST: ({}, "x", [3]),
    Holds.OBJECT: ([], "x", 4),
}
MISSING = object()


def well_formed(shape: Shape) -> dict[str, Any]:
    """An object of the shape with every field present and well-formed (a list of one such object)."""
    values = {
        Holds.COUNT: 1,
        Holds.TEXT: "x",
        Holds.NAME: "x",
        Holds.RECORD: "pages:1",
    }
    found: dict[str, Any] = {}
    for field in shape.fields:
        if field.holds is Holds.CHOICE:
            assert field.choices is not None
            found[field.key] = next(iter(field.choices)).value
        elif field.holds is Holds.LIST:
            assert field.shape is not None
            found[field.key] = [well_formed(field.shape)]
        elif field.holds is Holds.OBJECT:
            assert field.shape is not None
            found[field.key] = well_formed(field.shape)
        else:
            found[field.key] = values[field.holds]
    return found


def schema_fields(
    shape: Shape, path: tuple[str | int, ...] = ()
) -> Iterator[tuple[tuple[str | int, ...], Field]]:
    """Every field of the shape with its path in `well_formed`'s object (a list's item at index 0)."""
    for field in shape.fields:
        at = (*path, field.key)
        yield at, field
        if field.shape is not None:
            yield from schema_fields(field.shape, (*at, 0) if field.holds is Holds.LIST else at)


def entry_with(path: tuple[str | int, ...], value: object) -> dict[str, Any]:
    entry = well_formed(ENTRY)
    parent: Any = entry
    for key in path[:-1]:
        parent = parent[key]
    if value is MISSING:
        del parent[path[-1]]
    else:
        parent[path[-1]] = copy.deepcopy(value)
    return entry


def cases() -> list[tuple[str, dict[str, Any], bool]]:
    """(what, the entry, whether the schema calls it readable): each field malformed, null and missing."""
    cases: list[tuple[str, dict[str, Any], bool]] = [("well-formed", well_formed(ENTRY), True)]
    for path, field in schema_fields(ENTRY):
        name = ".".join(str(key) for key in path)
        for value in MALFORMED[field.holds]:
            cases.append((f"{name} = {json.dumps(value)}", entry_with(path, value), False))
        if field.holds is Holds.TEXT and field.nonempty:
            cases.append((f"{name} empty", entry_with(path, ""), False))
        cases.append((f"{name} null", entry_with(path, None), not field.required))
        cases.append((f"{name} missing", entry_with(path, MISSING), not field.required))
    return cases
