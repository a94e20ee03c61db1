"""A run's writes as its page shows them: each record, its stored outcome, reason and edit_scope, and the
retained sys_history rows of its record around its window, each marked by the part it played.

The rows that decided the outcome are those derive-outcomes stored (tx_runrecord_write_outcome.decided_by);
a write derived before it stored them reads "not recorded", and no row is marked as deciding it. Only the
keys of history_data are read (in SQL, by adapters.history), never its values or sys_history's `userid`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection

from adapters import schema
from adapters.history import history_rows
from adapters.outcomes import StoredWriteOutcome
from core.events import Event, Segment, write_completeness, write_target
from core.events import WriteTarget as Target
from core.outcomes import Action, HistoryRow
from core.row_parts import RowPart, row_parts
from core.window import window_closes_at
from dashboard.queries.common import when
from dashboard.queries.runs import observed_later

ACTIONS = {
    Action.ADD: "add",
    Action.MODIFY: "modify",
    Action.MOVE: "move",
    Action.DELETE: "delete",
    Action.UNDELETE: "undelete",
    Action.STAGE: "stage change",
    Action.PUBLISH: "publish",
}

EVIDENCE = RowPart.EVIDENCE.value
DECIDED = RowPart.DECIDED.value
NOT_RECORDED = "not recorded"
NOT_DERIVED = "—"  # the outcome of a write derive-outcomes has not stored one for (its window open, or due)


@dataclass(frozen=True)
class WriteView:
    """One tool_write of the run: its target, its stored outcome, and the history rows around its window."""

    event_uid: int
    segment: int  # the run segment that wrote it
    record: str
    written_at: int
    completeness: str
    outcome: str  # the stored outcome, or NOT_DERIVED
    reason: str
    edit_scope: str
    first_change_after_s: int | None
    rule_version: str
    decided_by: str  # the uids of the history rows that decided the outcome, NOT_RECORDED, or "none"
    history: list[dict[str, Any]]
    note: str


def write_views(
    connection: Connection,
    segments: Sequence[Segment],
    stored: dict[int, StoredWriteOutcome],
    tables: frozenset[str],
    window_s: int,
    now: int,
) -> list[WriteView]:
    writes = [(segment.index, event) for segment in segments for event in segment.writes]
    if not writes:
        return []
    has_history = schema.sys_history.name in tables
    views = []
    for segment_index, event in writes:
        target = write_target(event)
        saved = stored.get(event.uid)
        history: list[dict[str, Any]] = []
        note = observed_later(event.crdate, now, window_s) if saved is None else _not_recorded(saved)
        if isinstance(target, Target):
            record = target.record
            if has_history:
                decided = saved.decided_by if saved is not None else None
                history, gone = _history(connection, event, target, decided, window_s)
                if gone:
                    note = (
                        f"{len(gone)} of the history rows that decided this outcome are no longer retained: "
                        "they were trimmed after the outcome was derived, and the stored outcome is final"
                    )
        else:
            record = f"unreadable target ({target.reason})"
        views.append(
            WriteView(
                event_uid=event.uid,
                segment=segment_index,
                record=record,
                written_at=event.crdate,
                completeness=write_completeness(event).value,
                outcome=(saved.outcome if saved is not None else "") or NOT_DERIVED,
                reason=saved.reason if saved is not None else "",
                edit_scope=saved.edit_scope if saved is not None else "",
                first_change_after_s=saved.first_change_after_s if saved is not None else None,
                rule_version=saved.rule_version if saved is not None else "",
                decided_by=decided_by_label(saved),
                history=history,
                note=note,
            )
        )
    return views


def decided_by_label(saved: StoredWriteOutcome | None) -> str:
    """The history rows that decided a stored outcome as the page names them: their uids, NOT_RECORDED, or
    "none" (an unknown outcome, decided by no row); "" before the write is derived."""
    if saved is None:
        return ""
    if saved.decided_by is None:
        return NOT_RECORDED
    return ", ".join(str(uid) for uid in saved.decided_by) or "none"


def _not_recorded(saved: StoredWriteOutcome) -> str:
    if saved.decided_by is not None:
        return ""
    return (
        "Which history rows decided this outcome is not recorded: it was derived before derive-outcomes "
        "stored them, so no row below is marked as deciding it."
    )


def _history(
    connection: Connection,
    event: Event,
    target: Target,
    decided_by: Sequence[int] | None,
    window_s: int,
) -> tuple[list[dict[str, Any]], set[int]]:
    """The record's retained history rows around the write, each marked by the part it played
    (core.row_parts, from the stored decided_by), and the stored deciding rows that are no longer retained."""
    t = event.crdate
    rows = history_rows(
        connection, {target.table: [target.uid]}, keys_from=0, keys_to=window_closes_at(t, window_s)
    ).get((target.table, target.uid), [])
    marked = [_history_row(row, part, t) for row, part in row_parts(rows, t, window_s, decided_by)]
    return marked, set(decided_by or ()) - {row.uid for row in rows}


def _history_row(row: HistoryRow, part: RowPart, t: int) -> dict[str, Any]:
    action = row.action
    return {
        "history uid": row.uid,
        "when (UTC)": when(row.tstamp, seconds=True),
        "after the write": duration(row.tstamp - t),
        "action": ACTIONS[action] if action is not None else f"action {row.actiontype}",
        "fields": ", ".join(sorted(row.fields)) if row.fields else "",
        "part": part.value,
    }


def duration(seconds: int) -> str:
    """A span of seconds as the page shows it: seconds, hours or days."""
    if abs(seconds) < 120:
        return f"{seconds} s"
    if abs(seconds) < 2 * 86_400:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86_400:.1f} days"
