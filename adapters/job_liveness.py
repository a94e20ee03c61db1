"""Whether a job run left `running` is still running: the heartbeat, and marking the runs of processes that
are gone as interrupted (the rule is core.job_runs'; what this process can see is adapters.processes').

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
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import Engine
from sqlalchemy.exc import SQLAlchemyError

from adapters import clock, job_log
from adapters.database import RunrecordError, one_line
from adapters.processes import seen
from core.job_runs import HEARTBEAT_S, interruption

logger = logging.getLogger(__name__)
logger.addHandler(logging.NullHandler())  # silent unless the application configures logging


def mark_interrupted(engine: Engine, *, now: int | None = None) -> list[int]:
    """Mark the running rows whose process is gone (core.job_runs.interruption) interrupted; their uids."""
    at = clock.unix() if now is None else now
    with engine.connect() as connection:
        rows = job_log.running(connection)
    marked = []
    for row in rows:
        run = row.run
        why = interruption(run, seen(run, row.token), at)
        if why is None:
            continue
        with engine.begin() as connection:
            changed = job_log.mark_interrupted(connection, run, why)
        if changed:
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
                    job_log.beat(connection, uid, clock.unix())
            except SQLAlchemyError as error:
                logger.info("job run %s: cannot renew its heartbeat: database: %s", uid, one_line(error))
            except RunrecordError as error:  # a malformed RUNRECORD_NOW
                logger.info("job run %s: cannot renew its heartbeat: %s", uid, one_line(error))

    thread = threading.Thread(target=beat, name=f"runrecord-heartbeat-{uid}", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        # A renewal in hand may wait for a lock; the job's end need not wait for it (it renews only a running
        # row, and the end is written over it).
        thread.join(timeout=every_s)
