"""The observed outcomes (tx_runrecord_run_outcome, tx_runrecord_write_outcome, and the observed rows of
tx_nrllm_call_outcome): what derive-outcomes writes, and how the Run page reads them back (a run's outcome,
each of its writes', and which sys_history rows decided each).

`decided_by` is NULL, or a JSON array of sys_history uids: the evidence row and the human rows that decided
the write (core.outcomes.WriteOutcome.decided_by). A write derived before the column existed has NULL, and a
database whose tables predate the column has none; both read as not recorded.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import ColumnElement, Connection, inspect, select

from adapters import schema

run_outcome = schema.run_outcome
write_outcome = schema.write_outcome

DECIDED_BY = "decided_by"


@dataclass(frozen=True)
class StoredRunOutcome:
    outcome: str
    window_s: int


@dataclass(frozen=True)
class StoredWriteOutcome:
    """One write's stored outcome; `decided_by` None: which rows decided it is not recorded."""

    event_uid: int
    outcome: str
    reason: str
    edit_scope: str
    first_change_after_s: int | None
    rule_version: str
    decided_by: tuple[int, ...] | None


def run_outcome_of(connection: Connection, run_uid: int) -> StoredRunOutcome | None:
    """The run's stored outcome and the window it was derived with; None before it is derived."""
    o = run_outcome.c
    row = connection.execute(select(o.outcome, o.window_s).where(o.run_uid == run_uid)).first()
    return None if row is None else StoredRunOutcome(str(row.outcome), int(row.window_s or 0))


def write_outcomes_of(connection: Connection, run_uid: int) -> dict[int, StoredWriteOutcome]:
    """The stored outcomes of the run's writes, by tool_write event uid."""
    w = write_outcome.c
    columns: list[ColumnElement[Any]] = [
        w.event_uid,
        w.outcome,
        w.reason,
        w.edit_scope,
        w.first_change_after_s,
        w.rule_version,
    ]
    recorded = _decided_by_column(connection)
    if recorded is not None:
        columns.append(recorded)
    found: dict[int, StoredWriteOutcome] = {}
    for row in connection.execute(select(*columns).where(w.run_uid == run_uid)):
        found[int(row.event_uid)] = StoredWriteOutcome(
            event_uid=int(row.event_uid),
            outcome=str(row.outcome or ""),
            reason=str(row.reason or ""),
            edit_scope=str(row.edit_scope or ""),
            first_change_after_s=row.first_change_after_s,
            rule_version=str(row.rule_version or ""),
            decided_by=decided_by_of(row._mapping.get(DECIDED_BY)),
        )
    return found


def decided_by_of(stored: object) -> tuple[int, ...] | None:
    """The stored column read: its uids, or None when it is NULL or not a JSON array of integers."""
    if not isinstance(stored, str):
        return None
    try:
        value = json.loads(stored)
    except json.JSONDecodeError:
        return None
    if not isinstance(value, list) or not all(_is_uid(uid) for uid in value):
        return None
    return tuple(sorted(value))


def _is_uid(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _decided_by_column(connection: Connection) -> ColumnElement[Any] | None:
    """The decided_by column when both the table definition and the database have it, else None."""
    column = write_outcome.c.get(DECIDED_BY)
    if column is None:
        return None
    present: Collection[str] = {c["name"] for c in inspect(connection).get_columns(write_outcome.name)}
    return column if DECIDED_BY in present else None


# --- what derive-outcomes writes ---------------------------------------------------------------------------

# The column orders of the rows derive-outcomes writes (adapters.derive_batch; the benchmark writes them too).
RUN_COLUMNS = (
    "run_uid",
    "correlation_id",
    "outcome",
    "writes",
    "configuration_identifier",
    "window_s",
    "rule_version",
    "derived_at",
    "last_write_at",
)
WRITE_COLUMNS = (
    "run_uid",
    "correlation_id",
    "event_uid",
    "tablename",
    "recuid",
    "written_at",
    "outcome",
    "reason",
    "edit_scope",
    "first_change_after_s",
    "rule_version",
    "derived_at",
    DECIDED_BY,
)


def decided_by_text(uids: Iterable[int]) -> str:
    """The decided_by column of a write: its distinct sys_history uids as a sorted JSON array, "[101,107]"
    (as adapters.dialect.aggregate.uid_array writes it in SQL)."""
    return json.dumps(sorted(set(uids)), separators=(",", ":"))
