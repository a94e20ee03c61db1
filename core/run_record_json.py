"""The run record's stored column (tx_nrmcpagent_conversation.run_record, DESIGN.md "Chat-side JSON"): read
it tolerating keys it does not know, report what it cannot read as UnreadableEntry, and write the newest
entries back."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from enum import StrEnum
from typing import Any, TypeVar

from core.events import identifier
from core.run_record import (
    RECORD_LIMIT,
    UNREADABLE_RECORD,
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
        decoded = json.loads(text)
    except ValueError:
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


_E = TypeVar("_E", bound=StrEnum)
_RECORD = re.compile(rf"{TABLE_NAME.pattern}:[1-9][0-9]*")


def _entry(value: object) -> RunRecordEntry:
    data = _object(value, "entry")
    run_uuid = data.get("runUuid")
    if not isinstance(run_uuid, str) or not run_uuid:
        raise _UnreadableError("runUuid missing")
    return RunRecordEntry(
        run_uuid=run_uuid,
        segment=_int(data, "segment", None),
        position=_int(data, "position", 0),
        card_outcomes_before=_int(data, "cardOutcomesBefore", 0),
        ended=_enum(Ended, data.get("ended"), "ended"),
        tools=tuple(
            ToolUse(_name(tool, "name"), _int(tool, "calls", 0), _int(tool, "failed", 0))
            for tool in _objects(data, "tools")
        ),
        writes=tuple(_written_record(write) for write in _objects(data, "writes")),
        waiting=tuple(_name(call, "tool") for call in _objects(data, "waiting")),
        decision=_decision(data.get("decision")),
        undecided=_undecided(data.get("undecided")),
        at=_int(data, "at", 0),
    )


def _object(value: object, what: str) -> Mapping[str, Any]:
    if not isinstance(value, dict):
        raise _UnreadableError(f"{what} is not an object")
    return value


def _objects(data: Mapping[str, Any], key: str) -> list[Mapping[str, Any]]:
    value = data.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise _UnreadableError(f"{key} is not a list")
    return [_object(item, key) for item in value]


def _int(data: Mapping[str, Any], key: str, default: int | None) -> int:
    value = data.get(key)
    if value is None and default is not None:
        return default
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise _UnreadableError(f"{key} is not a count")
    return value


def _name(data: Mapping[str, Any], key: str) -> str:
    value = data.get(key)
    if not isinstance(value, str):
        raise _UnreadableError(f"{key} is not a name")
    return identifier(value)


def _enum(kind: type[_E], value: object, key: str) -> _E:
    if isinstance(value, str):
        for member in kind:
            if member.value == value:
                return member
    raise _UnreadableError(f"{key} has an unknown value")


def _written_record(data: Mapping[str, Any]) -> WrittenRecord:
    record = data.get("record")
    if not isinstance(record, str) or not (record == UNREADABLE_RECORD or _RECORD.fullmatch(record)):
        raise _UnreadableError("record is not table:uid")
    completeness = data.get("completeness")
    if completeness is None:
        return WrittenRecord(record, Completeness.UNCONFIRMED)
    return WrittenRecord(record, _enum(Completeness, completeness, "completeness"))


def _decision(value: object) -> Decision | None:
    if value is None:
        return None
    data = _object(value, "decision")
    answer = data.get("answer")
    if not isinstance(answer, str):
        raise _UnreadableError("decision answer is not text")
    return Decision(_name(data, "tool"), answer)


def _undecided(value: object) -> Undecided | None:
    if value is None:
        return None
    data = _object(value, "undecided")
    return Undecided(_enum(UndecidedKind, data.get("kind"), "kind"), _enum(UndecidedBy, data.get("by"), "by"))
