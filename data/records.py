"""The records an installation holds (pages, tt_content, …) and their sys_history rows, as planted."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from core.outcomes import Action

INTEGER_FIELDS = frozenset({"og_image", "hidden", "pid", "sorting"})


def new_value(field_name: str) -> Any:
    """A value the AI writes into a field: a file reference count for an image, else a text."""
    return 1 if field_name in INTEGER_FIELDS else f"neu: {field_name}"


def empty_value(field_name: str) -> Any:
    """What a field the record was created without holds: 0 for a number, else an empty text."""
    return 0 if field_name in INTEGER_FIELDS else ""


@dataclass
class HistoryRow:
    """A sys_history row as planted: who wrote it when, what it holds, where it stands in insertion order."""

    stamp: int  # tstamp: the start of the process that wrote it
    moment: int  # when it was really inserted
    call: int  # the order of the builder's calls
    action: Action | int  # an int: a code no TYPO3 action has, as an extension may write one
    user: int
    workspace: int
    old: Mapping[str, Any] | None  # modify rows: oldRecord; None when history_data is not a modify's
    new: Mapping[str, Any] | None  # modify rows: newRecord, add rows: the fields; None when unreadable
    names_run: str = ""  # the run uuid its correlation_id names ('' for a DataHandler scope of its own)
    insertion: tuple[int, int] = (0, 0)  # sorts rows into the order of their uids
    uid: int = 0  # given when it is numbered: at once in CALLS order, at the flush in MOMENTS order

    @property
    def keys(self) -> frozenset[str] | None:
        """The fields a modify or add row holds; None when its history_data cannot be read."""
        return None if self.new is None else frozenset(self.new)


@dataclass
class Record:
    """A row of a record table (pages, tt_content, …) with its final state."""

    table: str
    uid: int
    values: dict[str, Any]
    deleted: bool = False
    hidden: bool = False
    gone: bool = False  # hard-deleted: no row left
    history: list[HistoryRow] = field(default_factory=list)  # its sys_history rows, in the order planted
    written: bool = False  # its row was flushed: its story must be complete by then
    ai_fields: set[str] = field(default_factory=set)  # the fields AI writes changed
    before_ai: dict[str, Any] = field(default_factory=dict)  # each AI-written field's value before the first

    @property
    def history_times(self) -> list[int]:
        """The tstamps of its sys_history rows."""
        return [row.stamp for row in self.history]

    @property
    def delete_times(self) -> list[int]:
        """The tstamps of its delete rows."""
        return [row.stamp for row in self.history if row.action == Action.DELETE]

    def value(self, field_name: str) -> Any:
        """What a field holds now."""
        return self.values.get(field_name, empty_value(field_name))

    @property
    def ref(self) -> str:
        return f"{self.table}:{self.uid}"
