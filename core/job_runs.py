"""When a job run left `running` is interrupted: the process that ran it ended without finishing it.

A job run is recorded as running when it starts and completed (ok or failed) when it ends. A process killed
in between (kill -9, out of memory, a host lost) leaves its row running for ever. The row therefore names
the process that runs it (host, pid and a random part per process) and carries a heartbeat the process
renews while the job runs. A later run decides from those alone — never from the job's name, and never from
the lease by itself: a scheduler that lost the lease goes on with the job in hand, and a job run by hand
(`runrecord derive-outcomes`) holds no lease at all.

Plain values in, plain values out; the caller says what it can see of the row's process.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from core.time import iso_utc

# tx_runrecord_job_run.status while a job runs, once it returned or raised, and once a later run found its
# process gone.
RUNNING = "running"
OK = "ok"
FAILED = "failed"
INTERRUPTED = "interrupted"

# A running job's process renews the heartbeat this often.
HEARTBEAT_S = 30

# A run whose heartbeat is older than this is interrupted, wherever it ran. Twenty missed heartbeats: long
# enough for a SQLite write lock held through a long batch, a short database outage and clocks that differ
# by well under a minute (the lease needs that already); short enough that the Health page shows a killed
# run as interrupted within minutes, not days.
SILENT_AFTER_S = 600


class ProcessSeen(StrEnum):
    """What the process deciding can see of the process a running row names."""

    THIS_PROCESS = "this_process"  # the row is this process's own: it finishes it, or writes it once it can
    ENDED = "ended"  # the row's host is this one, and its process has ended (or its pid is another's now)
    UNKNOWN = "unknown"  # another host, or a pid that is alive here and may have been reused


@dataclass(frozen=True)
class RunningJobRun:
    """A tx_runrecord_job_run row in status running, as far as its liveness goes."""

    uid: int
    job: str
    started: int
    host: str
    pid: int
    heartbeat_at: int  # 0 in rows written before rows carried one

    @property
    def last_sign_of_life(self) -> int:
        """The newer of its start and its last heartbeat."""
        return max(self.started, self.heartbeat_at)


def interruption(
    run: RunningJobRun, seen: ProcessSeen, now: int, silent_after_s: int = SILENT_AFTER_S
) -> str | None:
    """Why a running job run is interrupted — its process ended, or it gave no sign of life for
    silent_after_s —, in one line; None while it may still be running."""
    if seen is ProcessSeen.THIS_PROCESS:
        return None
    if seen is ProcessSeen.ENDED:
        return f"interrupted: its process (pid {run.pid} on {run.host}) ended without finishing it"
    if now - run.last_sign_of_life > silent_after_s:
        return (
            f"interrupted: no sign of life since {iso_utc(run.last_sign_of_life)} "
            f"(a running job renews it every {HEARTBEAT_S} s)"
        )
    return None
