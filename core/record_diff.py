"""The stored run record against the one rebuilt from events: the entries that differ, and how."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from core.run_record import RunRecordEntry


class DifferenceKind(StrEnum):
    ONLY_STORED = "only_stored"
    ONLY_REBUILT = "only_rebuilt"
    CHANGED = "changed"


@dataclass(frozen=True)
class EntryDifference:
    run_uuid: str
    segment: int
    kind: DifferenceKind
    fields: tuple[str, ...]  # the JSON keys that differ; every key for an entry on one side only
    stored: RunRecordEntry | None
    rebuilt: RunRecordEntry | None


def diff(
    stored: Sequence[RunRecordEntry],
    rebuilt: Sequence[RunRecordEntry],
    *,
    ignore: frozenset[str] = frozenset(),
) -> tuple[EntryDifference, ...]:
    """The entries that differ, matched by run and segment, stored order first; `ignore` names JSON keys."""
    stored_by_key = {(entry.run_uuid, entry.segment): entry for entry in stored}
    rebuilt_by_key = {(entry.run_uuid, entry.segment): entry for entry in rebuilt}
    differences: list[EntryDifference] = []
    for key in [*stored_by_key, *(key for key in rebuilt_by_key if key not in stored_by_key)]:
        old, new = stored_by_key.get(key), rebuilt_by_key.get(key)
        if old is None or new is None:
            one = old or new
            assert one is not None
            keys = tuple(name for name in one.to_json() if name not in ignore)
            kind = DifferenceKind.ONLY_REBUILT if old is None else DifferenceKind.ONLY_STORED
            differences.append(EntryDifference(key[0], key[1], kind, keys, old, new))
            continue
        old_json, new_json = old.to_json(), new.to_json()
        fields = tuple(name for name in old_json if name not in ignore and old_json[name] != new_json[name])
        if fields:
            differences.append(EntryDifference(key[0], key[1], DifferenceKind.CHANGED, fields, old, new))
    return tuple(differences)
