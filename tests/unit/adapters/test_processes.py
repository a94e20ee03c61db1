"""What this process can see of the process a running job-run row names (adapters.processes)."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from adapters import processes
from core.job_runs import ProcessSeen, RunningJobRun


def row(host: str, pid: int) -> RunningJobRun:
    return RunningJobRun(1, "watch-conversations", 0, host, pid, 0)


def never_ended(pid: int) -> bool:
    return False


def always_ended(pid: int) -> bool:
    return True


@pytest.mark.parametrize(
    ("host", "pid", "token", "ended", "seen"),
    [
        ("elsewhere", 4242, "", always_ended, ProcessSeen.UNKNOWN),
        (processes.HOST, os.getpid(), processes.TOKEN, always_ended, ProcessSeen.THIS_PROCESS),
        (processes.HOST, os.getpid(), "an earlier one", never_ended, ProcessSeen.ENDED),
        (processes.HOST, 4242, "", always_ended, ProcessSeen.ENDED),
        (processes.HOST, 4242, "", never_ended, ProcessSeen.UNKNOWN),
    ],
    # Ids without the pid and token, which differ from process to process (and so between test workers).
    ids=["another host", "this process", "an earlier process of this pid", "an ended pid", "a pid in use"],
)
def test_only_a_row_of_this_host_can_be_seen_to_have_ended(host, pid, token, ended, seen) -> None:
    assert processes.seen(row(host, pid), token, ended=ended) is seen


def test_a_reaped_process_has_ended_and_this_one_has_not() -> None:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()

    assert processes.pid_ended(child.pid)
    assert not processes.pid_ended(os.getpid())
    assert not processes.pid_ended(0)


def test_a_killed_process_not_yet_reaped_has_ended() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        child.kill()
        deadline = time.monotonic() + 10
        while not processes.pid_ended(child.pid) and time.monotonic() < deadline:
            time.sleep(0.02)

        ended = processes.pid_ended(child.pid)
    finally:
        child.wait()

    assert ended
