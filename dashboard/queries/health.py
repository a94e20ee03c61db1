"""The Health page (administrators): job runs and their freshness, stuck conversations, the history horizon
against the window, and the derivations still pending. Stuck conversations are named by uid and status
only, never by editor; the rules are core.health's. The rows come from adapters.job_log, adapters.health and
adapters.history; this module shapes them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd
from sqlalchemy import Engine

from adapters import health as health_queries
from adapters import job_log as job_rows
from adapters import schema
from adapters.database import reported
from adapters.health import Reading
from adapters.history import TableCatalog, TableNotReadableError, oldest_retained_tstamp, reads_automation
from core import health as rules
from core import job_runs as liveness
from core.formatting import duration
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
    with reported(engine, "reading the job runs"), engine.connect() as connection:
        rows = job_rows.newest(connection, limit)
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
    with reported(engine, "reading the job runs"), engine.connect() as connection:
        names = job_rows.jobs(connection) | set(FRESH_FOR_S)
        rows = []
        for name in sorted(names):
            last = job_rows.last_started(connection, name)
            last_ok = job_rows.last_success(connection, name)
            limit = FRESH_FOR_S.get(name)
            age = None if last_ok is None else max(0, now - last_ok)  # now is rounded down
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
                    "last success (UTC)": when(last_ok) if last_ok else "",
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
    with reported(engine, "reading the health"), engine.connect() as connection:
        return health_queries.latest(connection)


def stuck_now(engine: Engine, *, now: int) -> pd.DataFrame:
    """Conversations stuck in a claimed status now: uid, status, since, stuck for (core.health.stuck)."""
    with reported(engine, "reading the conversations"), engine.connect() as connection:
        states = health_queries.claimed_conversations(connection)
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
            oldest = oldest_retained_tstamp(connection)
    reading = rules.horizon(oldest, now, window_s)
    return HorizonView(reading.level.value, reading.oldest, reading.span_s, reading.window_s, reading.warning)


def reads_automation_user(engine: Engine) -> bool:
    """Whether derive-outcomes can tell the `_cli_` user's rows from a person's (adapters.history); not where
    MariaDB keeps be_users from the account (derive-outcomes then stops, and says so)."""
    with reported(engine, "reading the backend users' columns"), engine.connect() as connection:
        try:
            return reads_automation(TableCatalog(connection))
        except TableNotReadableError:
            return False


def _age(seconds: int | None) -> str:
    return "" if seconds is None else duration(seconds)
