"""tx_runrecord_job_run: one row per job execution — started running, then finished (ok or failed), or
marked interrupted once its process is gone — and the reads of the Health page.

Every function takes the connection of the caller's unit of work.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, func, insert, select, update

from adapters.processes import process_columns
from adapters.schema import job_run
from core.job_runs import INTERRUPTED, OK, RUNNING, RunningJobRun

TABLE = job_run.name


def start(connection: Connection, job: str, started: int) -> int:
    """Insert the running row of an execution of `job`, naming this process; its uid."""
    row = {"job": job, "started": started, "status": RUNNING, "heartbeat_at": started, **process_columns()}
    key = connection.execute(insert(job_run).values(**row)).inserted_primary_key
    assert key is not None  # an INSERT of one row into a table with a primary key has one
    return int(key[0])


def finish(connection: Connection, uid: int | None, row: Mapping[str, Any]) -> None:
    """Write a finished execution over its running row, or as a row of its own when it has none."""
    if uid is None:
        connection.execute(insert(job_run).values(**row))
    else:
        connection.execute(update(job_run).where(job_run.c.uid == uid).values(**row))


# --- liveness ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RunningRow:
    """A running row: its liveness (core.job_runs) and the token of the process it names."""

    run: RunningJobRun
    token: str


def running(connection: Connection) -> list[RunningRow]:
    """Every row still running."""
    j = job_run.c
    rows = connection.execute(
        select(j.uid, j.job, j.started, j.host, j.pid, j.token, j.heartbeat_at).where(j.status == RUNNING)
    ).all()
    return [
        RunningRow(
            RunningJobRun(row.uid, row.job, row.started, row.host, row.pid, row.heartbeat_at), row.token
        )
        for row in rows
    ]


def mark_interrupted(connection: Connection, run: RunningJobRun, why: str) -> bool:
    """Mark the row interrupted, only if it is still running with the heartbeat that was read (a run that
    finished or beat meanwhile is left alone); whether it was marked."""
    j = job_run.c
    changed = connection.execute(
        update(job_run)
        .where(j.uid == run.uid, j.status == RUNNING, j.heartbeat_at == run.heartbeat_at)
        .values(status=INTERRUPTED, message=why)
    ).rowcount
    return bool(changed == 1)


def beat(connection: Connection, uid: int, at: int) -> None:
    """Renew the heartbeat of a row still running."""
    connection.execute(
        update(job_run).where(job_run.c.uid == uid, job_run.c.status == RUNNING).values(heartbeat_at=at)
    )


# --- what the Health page reads ----------------------------------------------------------------------------


def newest(connection: Connection, limit: int) -> Sequence[Any]:
    """The newest rows, newest first: uid, job, started, finished, status, processed, failed, message and
    heartbeat_at."""
    j = job_run.c
    query = select(
        j.uid, j.job, j.started, j.finished, j.status, j.processed, j.failed, j.message, j.heartbeat_at
    ).order_by(j.uid.desc())
    return connection.execute(query.limit(limit)).all()


def jobs(connection: Connection) -> set[str]:
    """The jobs that have a row."""
    return set(connection.execute(select(job_run.c.job).distinct()).scalars())


def last_started(connection: Connection, job: str) -> Any | None:
    """The job's newest run by its start: started and status; None when it never ran."""
    j = job_run.c
    return connection.execute(
        select(j.started, j.status).where(j.job == job).order_by(j.started.desc()).limit(1)
    ).first()


def last_success(connection: Connection, job: str) -> int | None:
    """When the job's newest successful run finished; None when none did."""
    j = job_run.c
    finished = connection.execute(select(func.max(j.finished)).where(j.job == job, j.status == OK)).scalar()
    return None if finished is None else int(finished)
