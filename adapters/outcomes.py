"""The observed outcomes (tx_runrecord_run_outcome, tx_runrecord_write_outcome, and the observed rows of
tx_nrllm_call_outcome): what derive-outcomes writes, and how the Run page reads them back (a run's outcome,
each of its writes', and which sys_history rows decided each).

`decided_by` is NULL, or a JSON array of sys_history uids: the evidence row and the human rows that decided
the write (core.outcomes.WriteOutcome.decided_by). A write derived before the column existed has NULL, and a
database whose tables predate the column has none; both read as not recorded.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import ColumnElement, Connection, Select, String, inspect, select

from adapters import schema
from adapters.derivation import DueRun, TargetRow
from adapters.dialect import bulk, plans
from core.outcomes import RULE_VERSION, CallOutcome, UnknownReason, WriteOutcome

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


def derived_write_times(
    connection: Connection, tablename: str, recuid: int, *, written_from: int, written_to: int
) -> list[int]:
    """When derived writes of any run wrote the record between the two times (DESIGN.md rule 4), sorted."""
    w = write_outcome.c
    query = select(w.written_at).where(
        w.tablename == tablename, w.recuid == recuid, w.written_at.between(written_from, written_to)
    )
    return sorted({int(at) for at in connection.execute(query).scalars()})


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
    return tuple(value)


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

# The column orders of the rows derive-outcomes writes (the benchmark writes the same rows alone).
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
CALL_COLUMNS = ("pid", "correlation_id", "outcome", "crdate", "tstamp")

_OBSERVED = tuple(outcome.value for outcome in CallOutcome)


def run_row(run: DueRun, outcome: CallOutcome, writes: int, *, window_s: int, now: int) -> tuple[Any, ...]:
    """A tx_runrecord_run_outcome row, in RUN_COLUMNS order."""
    return (
        run.run_uid,
        run.uuid,
        outcome.value,
        writes,
        run.configuration_identifier,
        window_s,
        RULE_VERSION,
        now,
        run.last_write_at,
    )


def write_row(run: DueRun, write: TargetRow, outcome: WriteOutcome, now: int) -> tuple[Any, ...]:
    """A tx_runrecord_write_outcome row, in WRITE_COLUMNS order."""
    readable = write.readable and outcome.reason is not UnknownReason.UNREADABLE_TARGET
    return (
        run.run_uid,
        run.uuid,
        write.event_uid,
        write.tablename if readable else "",
        write.recuid if readable else 0,
        write.written_at,
        outcome.outcome.value,
        outcome.reason.value if outcome.reason is not None else "",
        outcome.edit_scope.value if outcome.edit_scope is not None else "",
        outcome.first_change_after_s,
        outcome.rule_version,
        now,
        decided_by_text(outcome.decided_by),
    )


def decided_by_text(uids: Iterable[int]) -> str:
    """The decided_by column of a write: its sys_history uids as a sorted JSON array, "[101, 107]"."""
    return json.dumps(sorted(uids))


def insert_run_outcomes(connection: Connection, rows: Sequence[Sequence[Any]]) -> frozenset[int]:
    """Insert-or-ignore the run rows (RUN_COLUMNS) in one statement; the run uids really inserted.

    Their unique key decides which of two concurrent transactions derives each run."""
    inserted = bulk.insert_rows(
        connection, run_outcome, RUN_COLUMNS, rows, or_ignore=True, returning="run_uid"
    )
    return frozenset(inserted)


def insert_write_outcomes(connection: Connection, rows: Sequence[Sequence[Any]]) -> None:
    """Insert-or-ignore the write rows (WRITE_COLUMNS)."""
    bulk.insert_rows(connection, write_outcome, WRITE_COLUMNS, rows, or_ignore=True)


def mirror_observed(connection: Connection, runs: Iterable[tuple[str | None, CallOutcome]], now: int) -> int:
    """The observed rows of tx_nrllm_call_outcome for runs (uuid, outcome) this transaction derived; how many
    were written.

    One row per correlation id and source (DOMAIN.md): a run whose uuid already has an observed row — from
    nr-llm's own deriver — is left as it is, never rewritten; explicit ratings are never read or touched.
    The table has no unique key upstream, so the uuids are looked up first.
    """
    wanted = list(runs)
    taken = observed_correlation_ids(connection, {uuid for uuid, _ in wanted if uuid})
    rows = []
    for uuid, outcome in wanted:
        if uuid is None or uuid in taken:
            continue
        taken.add(uuid)
        rows.append((0, uuid, outcome.value, now, now))
    bulk.insert_rows(connection, schema.call_outcome, CALL_COLUMNS, rows)
    return len(rows)


def observed_correlation_ids(connection: Connection, correlation_ids: Collection[str]) -> set[str]:
    """The correlation ids that already have an observed row in tx_nrllm_call_outcome (from any deriver)."""
    if not correlation_ids:
        return set()
    return set(connection.execute(observed_query(connection.dialect.name, correlation_ids)).scalars())


def observed_query(dialect: str, correlation_ids: Collection[str]) -> Select[Any]:
    """The correlation ids of those given that have an observed row, through the correlation_id index."""
    outcome = schema.call_outcome

    def lookup(match: plans.Match) -> Select[Any]:
        return select(outcome.c.correlation_id).where(
            match(outcome.c.correlation_id), outcome.c.outcome.in_(_OBSERVED)
        )

    return plans.for_values(dialect, String(), correlation_ids, lookup, "observed")
