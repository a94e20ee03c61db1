"""The Health page (administrators): job runs and their freshness, stuck conversations, the history horizon
against the window, and the derivations still pending. Stuck conversations are named by uid and status
only, never by editor; the rules are core.health's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd
from sqlalchemy import Engine, func, select

from adapters import derivation as outcome_queries
from adapters import schema
from adapters.database import reported
from core import health as rules
from core import job_runs as liveness
from dashboard.queries.common import when

JOB_RUNS_SHOWN = 50  # the newest job runs listed

# How old each job's last successful run may be before the page calls it stale: a nightly job may be a day and
# two hours old (its schedule plus a slow night), the five-minute watch a quarter of an hour (three missed
# runs).
FRESH_FOR_S: dict[str, int] = {
    "derive-outcomes": 26 * 3600,
    "measure-rates": 26 * 3600,
    "watch-conversations": 15 * 60,
}


@dataclass(frozen=True)
class Reading:
    """The newest tx_runrecord_health row."""

    checked_at: int
    status: str
    stuck_conversations: int
    horizon: str
    horizon_warning: bool
    window_s: int
    pending_writes: int
    overdue_writes: int
    message: str


@dataclass(frozen=True)
class HorizonView:
    """The oldest retained sys_history row now, and what it means for the window (core.health.horizon)."""

    level: str
    oldest: int | None
    span_s: int | None
    window_s: int
    warning: bool


def job_runs(engine: Engine, *, now: int, limit: int = JOB_RUNS_SHOWN) -> pd.DataFrame:
    """The newest job runs: job, started, finished, status, processed, failed, seconds, message. A row still
    running that has given no sign of life for too long reads as interrupted (core.job_runs), before a job
    or a scheduler has marked it so: the page cannot see the row's process, only its heartbeat."""
    j = schema.job_run.c
    query = select(
        j.uid, j.job, j.started, j.finished, j.status, j.processed, j.failed, j.message, j.heartbeat_at
    ).order_by(j.uid.desc())
    with reported(engine, "reading the job runs"), engine.connect() as connection:
        rows = connection.execute(query.limit(limit)).all()
    columns = [
        "job",
        "started (UTC)",
        "finished (UTC)",
        "status",
        "processed",
        "failed",
        "seconds",
        "message",
    ]
    return pd.DataFrame(
        [
            {
                "job": row.job,
                "started (UTC)": when(row.started, seconds=True),
                "finished (UTC)": when(row.finished or 0, seconds=True),
                "status": status,
                "processed": row.processed,
                "failed": row.failed,
                "seconds": None if row.finished is None else row.finished - row.started,
                "message": message,
            }
            for row in rows
            for status, message in [_status(row, now)]
        ],
        columns=columns,
    )


def _status(row: Any, now: int) -> tuple[str, str]:
    if row.status != liveness.RUNNING:
        return row.status, row.message or ""
    # The page sees only the heartbeat: whoever runs it, not marked yet.
    running = liveness.RunningJobRun(row.uid, row.job, row.started, "", 0, row.heartbeat_at)
    why = liveness.interruption(running, liveness.ProcessSeen.UNKNOWN, now)
    return (liveness.INTERRUPTED, f"{why} (not marked yet)") if why else (row.status, row.message or "")


def freshness(engine: Engine, *, now: int) -> pd.DataFrame:
    """Per job: its last run, its last successful run, its age, and whether it is fresh."""
    j = schema.job_run.c
    with reported(engine, "reading the job runs"), engine.connect() as connection:
        names = set(connection.execute(select(j.job).distinct()).scalars()) | set(FRESH_FOR_S)
        rows = []
        for name in sorted(names):
            last = connection.execute(
                select(j.started, j.status).where(j.job == name).order_by(j.started.desc()).limit(1)
            ).first()
            last_ok = connection.execute(
                select(func.max(j.finished)).where(j.job == name, j.status == "ok")
            ).scalar()
            limit = FRESH_FOR_S.get(name)
            age = None if last_ok is None else max(0, now - int(last_ok))  # now is rounded down
            if last_ok is None:
                state = "never finished"
            elif limit is not None and age is not None and age > limit:
                state = f"stale: expected within {_age(limit)}"
            else:
                state = "fresh"
            rows.append(
                {
                    "job": name,
                    "last started (UTC)": when(last.started) if last else "",
                    "last status": last.status if last else "",
                    "last success (UTC)": when(int(last_ok)) if last_ok else "",
                    "age": _age(age),
                    "state": state,
                }
            )
    return pd.DataFrame(
        rows, columns=["job", "last started (UTC)", "last status", "last success (UTC)", "age", "state"]
    )


def latest_reading(engine: Engine, tables: frozenset[str]) -> Reading | None:
    """The newest watch-conversations reading, or None when there is none."""
    if schema.health.name not in tables:
        return None
    h = schema.health.c
    query = select(
        h.checked_at,
        h.status,
        h.stuck_conversations,
        h.horizon,
        h.horizon_warning,
        h.window_s,
        h.pending_writes,
        h.overdue_writes,
        h.message,
    ).order_by(h.uid.desc())
    with reported(engine, "reading the health"), engine.connect() as connection:
        row = connection.execute(query.limit(1)).first()
    if row is None:
        return None
    return Reading(
        checked_at=int(row.checked_at),
        status=row.status,
        stuck_conversations=int(row.stuck_conversations),
        horizon=row.horizon,
        horizon_warning=bool(row.horizon_warning),
        window_s=int(row.window_s),
        pending_writes=int(row.pending_writes),
        overdue_writes=int(row.overdue_writes),
        message=row.message or "",
    )


def stuck_now(engine: Engine, *, now: int) -> pd.DataFrame:
    """Conversations stuck in a claimed status now: uid, status, since, stuck for (core.health.stuck)."""
    c = schema.conversation.c
    query = select(c.uid, c.status, c.tstamp).where(c.status.in_(rules.CLAIMED_STATUSES), c.deleted == 0)
    with reported(engine, "reading the conversations"), engine.connect() as connection:
        states = [
            rules.ConversationState(int(r.uid), str(r.status), int(r.tstamp))
            for r in connection.execute(query)
        ]
    found = rules.stuck(states, now)
    return pd.DataFrame(
        [
            {
                "conversation": c.uid,
                "status": c.status,
                "since (UTC)": when(c.since),
                "stuck for": _age(c.stuck_for_s),
            }
            for c in found
        ],
        columns=["conversation", "status", "since (UTC)", "stuck for"],
    )


def horizon_now(engine: Engine, tables: frozenset[str], *, now: int, window_s: int) -> HorizonView:
    """The history horizon against the window at `now` (an index walk over sys_history, not a scan)."""
    oldest = None
    if schema.sys_history.name in tables:
        with reported(engine, "reading the history horizon"), engine.connect() as connection:
            oldest = outcome_queries.oldest_retained_tstamp(connection)
    reading = rules.horizon(oldest, now, window_s)
    return HorizonView(reading.level.value, reading.oldest, reading.span_s, reading.window_s, reading.warning)


def _age(seconds: int | None) -> str:
    if seconds is None:
        return ""
    if seconds < 3600:
        return f"{seconds // 60} min"
    if seconds < 2 * 86_400:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86_400:.1f} days"
