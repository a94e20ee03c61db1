"""What one batch of derive-outcomes writes (adapters.derive_batch), inserted or ignored on each row's unique
key so that two processes deriving the same runs write each row once: the run rows first, then only for the
runs this transaction really inserted their write rows, survival counts and observed rows (mirrored into
tx_nrllm_call_outcome for nr-llm's own readouts).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from sqlalchemy import (
    Connection,
    Select,
    case,
    delete,
    func,
    insert,
    literal,
    select,
)

from adapters import decision, schema, survival
from adapters import write_targets as targets
from adapters.derive_scratch import (
    UNREADABLE,
    batch_decided,
    batch_fact,
    batch_mine,
    batch_mirror,
    batch_run,
)
from adapters.dialect import bulk, plans
from adapters.outcomes import RUN_COLUMNS, WRITE_COLUMNS
from adapters.own_rows import Statistics
from core.outcomes import RULE_VERSION


@dataclass(frozen=True)
class Saved:
    """What the batch's transaction wrote: the runs whose row it inserted, the observed rows it mirrored, and
    the outcomes of those runs and their writes."""

    runs_mine: int
    mirrored: int
    runs_by_outcome: Counter[str]
    writes: Counter[tuple[str, str, str]]  # (outcome, reason, edit_scope) → writes


def save(connection: Connection, *, now: int, window_s: int, statistics: Statistics) -> Saved:
    """The run rows, then the write rows and survival counts of the runs this transaction really inserted,
    their observed rows in tx_nrllm_call_outcome, and the pending runs forgotten."""
    r, f = batch_run, batch_fact
    # The highest place taken once, below the statement that names it for each place: SQLite computes an
    # aggregate with bound values again wherever it is repeated.
    grouped = (
        select(
            r.c.run_uid,
            r.c.correlation_id,
            func.max(decision.rank(f.c.outcome)).label("highest"),
            func.count().label("writes"),
        )
        .select_from(r.join(f, f.c.run_uid == r.c.run_uid))
        .where(r.c.derivable == 1)
        .group_by(r.c.run_uid, r.c.correlation_id)
        .subquery("grouped")
    )
    g = grouped.c
    # The run rows first: their unique key decides which of two concurrent transactions derives each run,
    # and only the runs this one really inserted get their write rows and their observed row.
    mine = _insert_runs(
        connection,
        select(g.run_uid, g.correlation_id, decision.ranked(g.highest), g.writes),
        now=now,
        window_s=window_s,
    )
    statistics(batch_mine)
    _save_writes(connection, now)
    m = batch_mine
    survival.add_counts(
        connection,
        f.join(m, m.c.run_uid == f.c.run_uid).join(r, r.c.run_uid == f.c.run_uid),
        configuration=r.c.configuration_identifier,
        run_uid=f.c.run_uid,
        outcome=f.c.outcome,
        first_change_after_s=f.c.first_change_after_s,
        window_s=window_s,
    )
    mirrored = _mirror(connection, now)
    targets.forget_pending(connection, r.c.run_uid, r.c.derivable == 1)
    runs_by_outcome, writes = _count(connection)
    return Saved(mine, mirrored, runs_by_outcome, writes)


def _insert_runs(connection: Connection, derived: Select[Any], *, now: int, window_s: int) -> int:
    """Insert the run rows of the `derived` runs (run_uid, correlation_id, outcome, writes) where no other
    transaction inserted them first, and keep the runs this one inserted in batch_mine; how many.

    The derived runs are kept as this transaction's and their rows inserted in a savepoint, checked by the
    number the insert reports. Only when another transaction took some first (two processes deriving the
    same runs) is the insert undone and done again, returning the runs it inserted: a round trip of every
    run through Python (MariaDB: 0.15 s for the 32,000 runs of the wide shape's 0.05, measured)."""
    dialect = connection.dialect.name
    out, m, r = schema.run_outcome, batch_mine, batch_run
    counted = {"preserve_rowcount": True}  # else PostgreSQL's count of an INSERT is not kept (-1)
    kept = insert(m).from_select(["run_uid", "correlation_id", "outcome", "writes"], derived)
    listed = connection.execute(kept, execution_options=counted).rowcount
    runs = select(
        m.c.run_uid,
        m.c.correlation_id,
        m.c.outcome,
        m.c.writes,
        r.c.configuration_identifier,
        literal(window_s),
        literal(RULE_VERSION),
        literal(now),
        r.c.last_write_at,
    ).select_from(m.join(r, r.c.run_uid == m.c.run_uid))
    inserting = bulk.insert_or_ignore_select(dialect, out, RUN_COLUMNS, runs)
    with connection.begin_nested() as attempt:
        inserted = connection.execute(inserting, execution_options=counted).rowcount
        if listed >= 0 and inserted == listed:
            return listed
        attempt.rollback()
    returned = inserting.returning(out.c.run_uid, out.c.correlation_id, out.c.outcome)
    mine = [tuple(row) for row in connection.execute(returned)]
    connection.execute(delete(m))
    bulk.insert_rows(connection, m, ("run_uid", "correlation_id", "outcome"), mine)
    return len(mine)


def _save_writes(connection: Connection, now: int) -> None:
    f, r, m, dd = batch_fact, batch_run, batch_mine, batch_decided
    readable = f.c.target_state != UNREADABLE
    rows = select(
        f.c.run_uid,
        r.c.correlation_id,
        f.c.event_uid,
        case((readable, f.c.tablename), else_=literal("")),
        case((readable, f.c.recuid), else_=literal(0)),
        f.c.written_at,
        f.c.outcome,
        f.c.reason,
        f.c.edit_scope,
        f.c.first_change_after_s,
        literal(RULE_VERSION),
        literal(now),
        func.coalesce(dd.c.decided_by, literal("[]")),
    ).select_from(
        f.join(r, r.c.run_uid == f.c.run_uid)
        .join(m, m.c.run_uid == f.c.run_uid)
        .outerjoin(dd, dd.c.event_uid == f.c.event_uid)
    )
    # A plain insert: the writes are those of the runs whose row this transaction inserted, and an event is
    # one run's, so a row already there would be an error to report, not one to skip (PostgreSQL's ON
    # CONFLICT also checked the key of every row before inserting it: 0.31 s against 0.20 s for 100,000).
    connection.execute(insert(schema.write_outcome).from_select(WRITE_COLUMNS, rows))


def _mirror(connection: Connection, now: int) -> int:
    """The observed rows of tx_nrllm_call_outcome for the runs this transaction derived, one per correlation
    id: a correlation id that already has an observed row (nr-llm's own deriver) is left as it is.

    Each row is looked up through nr-llm's KEY correlation on every dialect: the job's own bulk inserts leave
    InnoDB's statistics of the table behind, and MariaDB then read it whole (plans.by_index)."""
    m, dialect = batch_mine, connection.dialect.name
    joined, unobserved = targets.unobserved(dialect, m, m.c.correlation_id)
    first = select(m.c.correlation_id, func.min(m.c.run_uid)).select_from(joined)
    first = first.group_by(m.c.correlation_id).having(unobserved)
    first = plans.by_index(dialect, first, schema.call_outcome, "correlation")
    connection.execute(insert(batch_mirror).from_select(["correlation_id", "run_uid"], first))
    b = batch_mirror
    rows = select(literal(0), m.c.correlation_id, m.c.outcome, literal(now), literal(now))
    rows = rows.select_from(b.join(m, m.c.run_uid == b.c.run_uid))
    columns = ["pid", "correlation_id", "outcome", "crdate", "tstamp"]
    connection.execute(insert(schema.call_outcome).from_select(columns, rows))
    return int(connection.execute(select(func.count()).select_from(b)).scalar_one())


def _count(connection: Connection) -> tuple[Counter[str], Counter[tuple[str, str, str]]]:
    f, m = batch_fact, batch_mine
    writes = connection.execute(
        select(f.c.outcome, f.c.reason, f.c.edit_scope, func.count())
        .select_from(f.join(m, m.c.run_uid == f.c.run_uid))
        .group_by(f.c.outcome, f.c.reason, f.c.edit_scope)
    ).all()
    runs = connection.execute(select(m.c.outcome, func.count()).group_by(m.c.outcome)).all()
    return Counter({o: int(n) for o, n in runs}), Counter({(o, r, s): int(n) for o, r, s, n in writes})
