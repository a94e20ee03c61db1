"""The shape of a run record entry (DESIGN.md, "Chat-side JSON") as data: its keys, what each holds, what a
missing one reads as, and the reason an entry is unreadable when one is malformed.

core.run_record_json reads a stored entry by walking ENTRY; adapters.measure_batch.entries compiles the same
table into the SQL check that an entry is readable. A field added here is read by both, and
tests/db/test_run_record_schema.py holds them to the same verdict on a malformed entry per field.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Final

from core.run_record import (
    Completeness,
    Decision,
    Ended,
    RunRecordEntry,
    ToolUse,
    Undecided,
    UndecidedBy,
    UndecidedKind,
    WrittenRecord,
)


class Holds(StrEnum):
    """What a member holds, each one reading in Python and one in SQL."""

    COUNT = "count"  # an integer of at least 0 (a boolean is not one)
    TEXT = "text"  # a string
    NAME = "name"  # a string, read reduced to identifier characters (core.events.identifier)
    CHOICE = "choice"  # a string that is exactly one of `choices`' values
    RECORD = "record"  # "table:uid" as core.table_names says, or core.run_record.UNREADABLE_RECORD
    LIST = "list"  # a list of objects, each of `shape`
    OBJECT = "object"  # an object of `shape`


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


# The default of a member that must be there: missing or the JSON null, the entry is unreadable.
REQUIRED: Final = _Required()

_PROBLEMS = {
    Holds.COUNT: "{key} is not a count",
    Holds.TEXT: "{key} is not text",
    Holds.NAME: "{key} is not a name",
    Holds.CHOICE: "{key} has an unknown value",
    Holds.RECORD: "{key} is not table:uid",
    Holds.LIST: "{key} is not a list",
    Holds.OBJECT: "{key} is not an object",
}
_CAPITAL = re.compile(r"(?<!^)(?=[A-Z])")


@dataclass(frozen=True)
class Field:
    """One member of an object: its key, what it holds, and what it reads as when missing or null."""

    key: str
    holds: Holds
    default: object = REQUIRED
    choices: type[StrEnum] | None = None  # CHOICE: the enum whose values it may hold
    shape: Shape | None = None  # LIST and OBJECT: the shape of the object(s) it holds
    nonempty: bool = False  # TEXT: at least one character
    reason: str = ""  # the unreadable entry's reason where it is not _PROBLEMS' wording

    @property
    def required(self) -> bool:
        """The member must be there (not missing, not the JSON null)."""
        return self.default is REQUIRED

    @property
    def attribute(self) -> str:
        """The attribute of the built value the member fills: the key in snake case (cardOutcomesBefore →
        card_outcomes_before)."""
        return _CAPITAL.sub("_", self.key).lower()

    @property
    def problem(self) -> str:
        """Why an entry whose member is malformed is unreadable."""
        return self.reason or _PROBLEMS[self.holds].format(key=self.key)


@dataclass(frozen=True)
class Shape:
    """An object's fields, in the order they are checked (the first malformed one gives the reason), and
    what they make: `build` called with each field's value by attribute, or without one the value of the
    single field itself (a waiting call is its tool's name)."""

    fields: tuple[Field, ...]
    build: Callable[..., Any] | None = None

    def __post_init__(self) -> None:
        if self.build is None and len(self.fields) != 1:
            raise ValueError("a shape without build has exactly one field")


ENTRY = Shape(
    (
        Field("runUuid", Holds.TEXT, nonempty=True, reason="runUuid missing or not text"),
        Field("segment", Holds.COUNT),
        Field("position", Holds.COUNT, default=0),
        Field("cardOutcomesBefore", Holds.COUNT, default=0),
        Field("ended", Holds.CHOICE, choices=Ended),
        Field(
            "tools",
            Holds.LIST,
            default=(),
            shape=Shape(
                (
                    Field("name", Holds.NAME),
                    Field("calls", Holds.COUNT, default=0),
                    Field("failed", Holds.COUNT, default=0),
                ),
                ToolUse,
            ),
        ),
        Field(
            "writes",
            Holds.LIST,
            default=(),
            shape=Shape(
                (
                    Field("record", Holds.RECORD),
                    # "unconfirmed" when the key is absent (DESIGN.md, tool_write), as in the event itself.
                    Field(
                        "completeness", Holds.CHOICE, default=Completeness.UNCONFIRMED, choices=Completeness
                    ),
                ),
                WrittenRecord,
            ),
        ),
        Field("waiting", Holds.LIST, default=(), shape=Shape((Field("tool", Holds.NAME),))),
        Field(
            "decision",
            Holds.OBJECT,
            default=None,
            shape=Shape(
                (
                    Field("answer", Holds.TEXT, reason="decision answer is not text"),
                    Field("tool", Holds.NAME),
                ),
                Decision,
            ),
        ),
        Field(
            "undecided",
            Holds.OBJECT,
            default=None,
            shape=Shape(
                (
                    Field("kind", Holds.CHOICE, choices=UndecidedKind),
                    Field("by", Holds.CHOICE, choices=UndecidedBy),
                ),
                Undecided,
            ),
        ),
        Field("at", Holds.COUNT, default=0),
    ),
    RunRecordEntry,
)
