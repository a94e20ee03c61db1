"""The run record's stored column (tx_nrmcpagent_conversation.run_record, DESIGN.md "Chat-side JSON"): read
it tolerating keys it does not know, report what it cannot read as UnreadableEntry, and write the newest
entries back. An entry is read by walking core.run_record_schema.ENTRY, the table the SQL check of a
readable entry (adapters.measure_batch.entries) is compiled from."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from core import json_text
from core.events import identifier
from core.run_record import RECORD_LIMIT, UNREADABLE_RECORD, RunRecordEntry, UnreadableEntry
from core.run_record_schema import ENTRY, Field, Holds, Shape
from core.table_names import TABLE_NAME


class _UnreadableError(Exception):
    pass


def from_json(value: object) -> RunRecordEntry | UnreadableEntry:
    """The entry a stored value describes; keys it does not know are ignored, a malformed known key is not."""
    try:
        return _entry(value)
    except _UnreadableError as error:
        return UnreadableEntry(str(error))


def parse_run_record(
    text: str | bytes | None,
) -> tuple[tuple[RunRecordEntry, ...], tuple[UnreadableEntry, ...]]:
    """The stored column's entries and the ones it cannot read; NULL or empty is a record without entries."""
    if text is None or not text.strip():
        return (), ()
    try:
        decoded = json_text.loads(text)
    except (ValueError, RecursionError):  # RecursionError: nested deeper than json reads
        return (), (UnreadableEntry("not JSON"),)
    if not isinstance(decoded, list):
        return (), (UnreadableEntry(f"not a list but {type(decoded).__name__}"),)
    entries: list[RunRecordEntry] = []
    problems: list[UnreadableEntry] = []
    for index, item in enumerate(decoded):
        read = from_json(item)
        if isinstance(read, UnreadableEntry):
            problems.append(replace(read, index=index))
        else:
            entries.append(read)
    return tuple(entries), tuple(problems)


def dump_run_record(entries: Sequence[RunRecordEntry], limit: int = RECORD_LIMIT) -> str:
    """The column's text: the newest `limit` entries as a JSON list."""
    return json.dumps([entry.to_json() for entry in keep_newest(entries, limit)], ensure_ascii=False)


def keep_newest(entries: Sequence[RunRecordEntry], limit: int = RECORD_LIMIT) -> tuple[RunRecordEntry, ...]:
    """The newest `limit` entries, in stored order; entries are appended, so the newest are the last."""
    return tuple(entries[-limit:]) if limit > 0 else ()


_RECORD = re.compile(rf"{TABLE_NAME.pattern}:[1-9][0-9]*")


def _entry(value: object) -> RunRecordEntry:
    entry = _built(ENTRY, _object(value, "entry"))
    assert isinstance(entry, RunRecordEntry)
    return entry


def _built(shape: Shape, data: Mapping[str, Any]) -> Any:
    """The value an object of the shape makes; the first malformed field (in the shape's order) stops it."""
    values = {field.attribute: _member(field, data.get(field.key)) for field in shape.fields}
    if shape.build is None:
        (only,) = values.values()
        return only
    return shape.build(**values)


def _member(field: Field, value: object) -> Any:
    if value is None:
        if field.required:
            raise _UnreadableError(field.problem)
        return field.default
    if field.holds is Holds.LIST:
        if not isinstance(value, list):
            raise _UnreadableError(field.problem)
        assert field.shape is not None
        items = [_object(item, field.key) for item in value]  # every item an object, before any is read
        return tuple(_built(field.shape, item) for item in items)
    if field.holds is Holds.OBJECT:
        assert field.shape is not None
        return _built(field.shape, _object(value, field.key))
    if not _READS[field.holds](field, value):
        raise _UnreadableError(field.problem)
    if field.holds is Holds.NAME:
        return identifier(str(value))
    if field.holds is Holds.CHOICE:
        assert field.choices is not None
        return field.choices(str(value))
    return value


def _object(value: object, what: str) -> Mapping[str, Any]:
    if not isinstance(value, dict):
        raise _UnreadableError(f"{what} is not an object")
    return value


def _is_count(_: Field, value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _is_text(field: Field, value: object) -> bool:
    return isinstance(value, str) and (bool(value) or not field.nonempty)


def _is_choice(field: Field, value: object) -> bool:
    assert field.choices is not None
    return isinstance(value, str) and value in {member.value for member in field.choices}


def _is_record(_: Field, value: object) -> bool:
    return isinstance(value, str) and (value == UNREADABLE_RECORD or _RECORD.fullmatch(value) is not None)


# What a scalar member must be (a null or missing one is read by its default above).
_READS: Mapping[Holds, Callable[[Field, object], bool]] = {
    Holds.COUNT: _is_count,
    Holds.TEXT: _is_text,
    Holds.NAME: lambda _, value: isinstance(value, str),
    Holds.CHOICE: _is_choice,
    Holds.RECORD: _is_record,
}
