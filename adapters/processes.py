"""This process as a job-run row names it, and what it can see of the process another row names.

* A row names its process by `host` (the host name and, where the system has one, its process namespace:
  two containers may share a host name, never a namespace), `pid`, and `token`, a random part drawn once
  per process (a restarted container's scheduler has the same pid again).
* Only a process on the same host can tell whether another has ended; of one elsewhere it knows nothing.
"""

from __future__ import annotations

import os
import secrets
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

from core.job_runs import ProcessSeen, RunningJobRun

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
