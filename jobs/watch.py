"""watch-conversations: stuck conversations, the history horizon and pending derivations, as one health row.

It reads the chat's and nr-llm's tables with SELECTs only and writes one row to tx_runrecord_health, in one
transaction, through adapters.health; it never writes to the chat's tables (failing a stuck conversation is
ai-chat:cleanup's job). The rules are core.health's.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Engine

from adapters import clock, settings
from adapters import health as health_queries
from adapters.database import job_engine
from adapters.history import oldest_retained_tstamp
from core import health as rules
from core.time import iso_utc
from jobs.job_log import JobResult

JOB = "watch-conversations"


def run_job(db_url: str, *, now: datetime | None = None) -> JobResult:
    """The job callable (contract: jobs.job_log): one health reading of the database, stored."""
    with job_engine(db_url) as engine:
        reading = watch(engine, now=now or clock.now(), window_s=settings.window_seconds())
    return result_of(reading)


def watch(engine: Engine, *, now: datetime, window_s: int) -> rules.Health:
    """Read the installation's health at `now` and store it as one row; one unit of work."""
    with engine.begin() as connection:
        reading = read_health(connection, now=int(now.timestamp()), window_s=window_s)
        health_queries.store(connection, reading)
    return reading


def read_health(connection: Connection, *, now: int, window_s: int) -> rules.Health:
    """The health at `now`, from SELECTs on the upstream tables and ours."""
    claimed = health_queries.claimed_conversations(connection)
    oldest = oldest_retained_tstamp(connection)
    pending, overdue = health_queries.pending_writes(connection, now=now, window_s=window_s)
    return rules.Health(
        checked_at=now,
        stuck=rules.stuck(claimed, now),
        horizon=rules.horizon(oldest, now, window_s),
        pending_writes=pending,
        overdue_writes=overdue,
    )


def result_of(reading: rules.Health) -> JobResult:
    """The job's result: one reading, no item that could fail, the reading as its message."""
    return JobResult(processed=1, failed=0, message=f"{reading.status}: {rules.message(reading)}")


def as_json(reading: rules.Health) -> dict[str, Any]:
    """The reading for `--json`: times in ISO 8601, conversations by uid and status only."""
    horizon = reading.horizon
    return {
        "checked_at": iso_utc(reading.checked_at),
        "status": reading.status,
        "stuck_conversations": [
            {"uid": c.uid, "status": c.status, "since": iso_utc(c.since), "stuck_for_s": c.stuck_for_s}
            for c in reading.stuck
        ],
        "history": {
            "oldest": None if horizon.oldest is None else iso_utc(horizon.oldest),
            "retained_s": horizon.span_s,
            "window_s": horizon.window_s,
            "horizon": horizon.level.value,
            "warning": horizon.warning,
        },
        "pending_writes": reading.pending_writes,
        "overdue_writes": reading.overdue_writes,
        "message": rules.message(reading),
    }
