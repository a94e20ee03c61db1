"""Whether a job run left `running` is still running: this process's identity, the heartbeat, and marking the
runs of processes that are gone as interrupted (the rule is core.job_runs').

* Every row names its process: `host` (the host name and, where the system has one, its process
  namespace: two containers may share a host name, never a namespace), `pid`, and `token`, a random part
  drawn once per process (a restarted container's scheduler has the same pid again).
* While the job runs, a thread renews the row's `heartbeat_at` every core.job_runs.HEARTBEAT_S.
* `mark_interrupted` looks at every running row. A row of this host whose process has ended is interrupted
  at once; any other row only once its heartbeat is older than core.job_runs.SILENT_AFTER_S. So a row of a
  live process — a scheduler on another host, a command run by hand beside the scheduler — is never marked
  while that process renews its heartbeat. It runs before every job run is recorded (jobs.job_log.execute)
  and when a scheduler takes the lease (jobs.scheduler).

Marking is conditional on the row still being running with the heartbeat that was read, so that a run that
finished or beat meanwhile is left alone; and a process that was only cut off from the database for longer
than SILENT_AFTER_S still writes its real end over the mark when it finishes.
"""

from __future__ import annotations

import logging
import os
import secrets
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, select, update
from sqlalchemy.exc import SQLAlchemyError

from adapters.database import one_line
from adapters.schema import job_run
from core.job_runs import HEARTBEAT_S, INTERRUPTED, RUNNING, ProcessSeen, RunningJobRun, interruption

logger = logging.getLogger(__name__)
logger.addHandler(logging.NullHandler())  # silent unless the application configures logging

HOST_LENGTH = 255  # the host column's length
TOKEN = secrets.token_hex(8)  # this process's random part (the token column holds 16 characters)


def _host() -> str:
    name = socket.gethostname()
    try:
        namespace = os.readlink("/proc/self/ns/pid")  # "pid:[4026531836]" on Linux
    except OSError:
        return name[:HOST_LENGTH]
    return f"{name} {namespace}"[:HOST_LENGTH]


HOST = _host()


def process_columns() -> dict[str, Any]:
    """The columns that name this process in a job-run row."""
    return {"host": HOST, "pid": os.getpid(), "token": TOKEN}


def pid_ended(pid: int) -> bool:
    """Whether no process of this pid runs on this host any more (a zombie has ended too)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False  # it exists, under another user
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return False
    # The state follows the command name in parentheses, which may itself hold ")".
    return stat.rpartition(")")[2].split()[:1] == ["Z"]


def seen(run: RunningJobRun, token: str, *, ended: Callable[[int], bool] = pid_ended) -> ProcessSeen:
    """What this process can see of the process a running row names (`token` is the row's)."""
    if run.host != HOST:
        return ProcessSeen.UNKNOWN
    if run.pid == os.getpid():
        # Our pid: the row is ours, or that of an earlier process that had our pid and has ended.
        return ProcessSeen.THIS_PROCESS if token == TOKEN else ProcessSeen.ENDED
    return ProcessSeen.ENDED if ended(run.pid) else ProcessSeen.UNKNOWN


def mark_interrupted(engine: Engine, *, now: int | None = None) -> list[int]:
    """Mark the running rows whose process is gone (core.job_runs.interruption) interrupted; their uids."""
    at = int(time.time()) if now is None else now
    j = job_run.c
    with engine.connect() as connection:
        rows = connection.execute(
            select(j.uid, j.job, j.started, j.host, j.pid, j.token, j.heartbeat_at).where(j.status == RUNNING)
        ).all()
    marked = []
    for row in rows:
        run = RunningJobRun(row.uid, row.job, row.started, row.host, row.pid, row.heartbeat_at)
        why = interruption(run, seen(run, row.token), at)
        if why is None:
            continue
        with engine.begin() as connection:
            changed = connection.execute(
                update(job_run)
                .where(j.uid == run.uid, j.status == RUNNING, j.heartbeat_at == run.heartbeat_at)
                .values(status=INTERRUPTED, message=why)
            ).rowcount
        if changed == 1:
            marked.append(run.uid)
            logger.warning("%s run %s %s", run.job, run.uid, why)
    return marked


@contextmanager
def heartbeat(engine: Engine, uid: int, *, every_s: float = HEARTBEAT_S) -> Iterator[None]:
    """Renew the row's heartbeat every `every_s` while the block runs; a failed renewal waits for the next."""
    stop = threading.Event()

    def beat() -> None:
        while not stop.wait(every_s):
            try:
                with engine.begin() as connection:
                    connection.execute(
                        update(job_run)
                        .where(job_run.c.uid == uid, job_run.c.status == RUNNING)
                        .values(heartbeat_at=int(time.time()))
                    )
            except SQLAlchemyError as error:
                logger.info("job run %s: cannot renew its heartbeat: database: %s", uid, one_line(error))

    thread = threading.Thread(target=beat, name=f"runrecord-heartbeat-{uid}", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        # A renewal in hand may wait for a lock; the job's end need not wait for it (it renews only a running
        # row, and the end is written over it).
        thread.join(timeout=every_s)
