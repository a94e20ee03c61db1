"""watch-conversations: stuck conversations, the history horizon and pending derivations, as one health row.

It reads the chat's and nr-llm's tables with SELECTs only and writes one row to tx_runrecord_health, in one
transaction; it never writes to the chat's tables (failing a stuck conversation is ai-chat:cleanup's job).
The rules are core.health's.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Connection, Engine, and_, case, exists, func, insert, select

from adapters import settings
from adapters.database import make_engine
from adapters.schema import agentrun, agentrun_event, conversation, sys_history, write_outcome
from adapters.schema import health as health_table
from core import health as rules
from core.outcomes import FINISHED_STATUSES
from jobs.job_log import JobResult

JOB = "watch-conversations"

TOOL_WRITE = "tool_write"  # tx_nrllm_agentrun_event.kind of a write step (DOMAIN.md)


def run_job(db_url: str, *, now: datetime | None = None) -> JobResult:
    """The job callable (contract: jobs.job_log): one health reading of the database, stored."""
    engine = make_engine(db_url)
    try:
        reading = watch(engine, now=now or datetime.now(UTC), window_s=settings.window_seconds())
    finally:
        engine.dispose()
    return result_of(reading)


def watch(engine: Engine, *, now: datetime, window_s: int) -> rules.Health:
    """Read the installation's health at `now` and store it as one row; one unit of work."""
    with engine.begin() as connection:
        reading = read_health(connection, now=int(now.timestamp()), window_s=window_s)
        connection.execute(insert(health_table).values(**health_row(reading)))
    return reading


def read_health(connection: Connection, *, now: int, window_s: int) -> rules.Health:
    """The health at `now`, from SELECTs on the upstream tables and ours."""
    claimed = _claimed_conversations(connection)
    oldest = connection.execute(select(func.min(sys_history.c.tstamp))).scalar()
    pending, overdue = _pending_writes(connection, now=now, window_s=window_s)
    return rules.Health(
        checked_at=now,
        stuck=rules.stuck(claimed, now),
        horizon=rules.horizon(None if oldest is None else int(oldest), now, window_s),
        pending_writes=pending,
        overdue_writes=overdue,
    )


def result_of(reading: rules.Health) -> JobResult:
    """The job's result: one reading, no item that could fail, the reading as its message."""
    return JobResult(processed=1, failed=0, message=f"{reading.status}: {rules.message(reading)}")


def health_row(reading: rules.Health) -> dict[str, Any]:
    """The tx_runrecord_health row of a reading."""
    return {
        "checked_at": reading.checked_at,
        "status": reading.status,
        "stuck_conversations": len(reading.stuck),
        "stuck_since": reading.stuck_since,
        "oldest_history": reading.horizon.oldest,
        "horizon": reading.horizon.level.value,
        "horizon_warning": int(reading.horizon.warning),
        "window_s": reading.horizon.window_s,
        "pending_writes": reading.pending_writes,
        "overdue_writes": reading.overdue_writes,
        "message": rules.message(reading),
    }


def as_json(reading: rules.Health) -> dict[str, Any]:
    """The reading for `--json`: times in ISO 8601, conversations by uid and status only."""
    horizon = reading.horizon
    return {
        "checked_at": _iso(reading.checked_at),
        "status": reading.status,
        "stuck_conversations": [
            {"uid": c.uid, "status": c.status, "since": _iso(c.since), "stuck_for_s": c.stuck_for_s}
            for c in reading.stuck
        ],
        "history": {
            "oldest": None if horizon.oldest is None else _iso(horizon.oldest),
            "retained_s": horizon.span_s,
            "window_s": horizon.window_s,
            "horizon": horizon.level.value,
            "warning": horizon.warning,
        },
        "pending_writes": reading.pending_writes,
        "overdue_writes": reading.overdue_writes,
        "message": rules.message(reading),
    }


def _claimed_conversations(connection: Connection) -> list[rules.ConversationState]:
    # Deleted conversations are out of every editor's sight and out of the cleanup's; be_user is never read.
    rows = connection.execute(
        select(conversation.c.uid, conversation.c.status, conversation.c.tstamp).where(
            conversation.c.status.in_(rules.CLAIMED_STATUSES), conversation.c.deleted == 0
        )
    )
    return [rules.ConversationState(int(r.uid), str(r.status), int(r.tstamp)) for r in rows]


def _pending_writes(connection: Connection, *, now: int, window_s: int) -> tuple[int, int]:
    """Write steps up to `now` without an outcome row; and those of finished runs overdue for derivation (a
    run still running or waiting is derived once it ends: core.outcomes.is_finished)."""
    event = agentrun_event
    last_write = (
        select(event.c.run, func.max(event.c.crdate).label("last_at"))
        .where(event.c.kind == TOOL_WRITE, event.c.crdate <= now)
        .group_by(event.c.run)
        .subquery()
    )
    late = last_write.c.last_at < rules.overdue_before(now, window_s)
    overdue = case((and_(late, agentrun.c.status.in_(sorted(FINISHED_STATUSES))), 1), else_=0)
    row = connection.execute(
        select(func.count(), func.coalesce(func.sum(overdue), 0))
        .select_from(
            event.join(last_write, last_write.c.run == event.c.run).outerjoin(
                agentrun, agentrun.c.uid == event.c.run
            )
        )
        .where(
            event.c.kind == TOOL_WRITE,
            event.c.crdate <= now,
            ~exists().where(write_outcome.c.event_uid == event.c.uid),
        )
    ).one()
    return int(row[0]), int(row[1])


def _iso(unix: int) -> str:
    return datetime.fromtimestamp(unix, UTC).isoformat().replace("+00:00", "Z")
