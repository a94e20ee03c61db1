"""When a job run left running is interrupted: its process ended, or it gave no sign of life for too long."""

import pytest

from core.job_runs import HEARTBEAT_S, SILENT_AFTER_S, ProcessSeen, RunningJobRun, interruption

NOW = 1_790_000_000


def running(*, started: int = NOW - 3600, heartbeat_at: int = 0) -> RunningJobRun:
    return RunningJobRun(1, "derive-outcomes", started, "web-1", 4242, heartbeat_at)


@pytest.mark.parametrize(
    ("seen", "silent_s", "interrupted"),
    [
        (ProcessSeen.ENDED, 0, True),
        (ProcessSeen.ENDED, SILENT_AFTER_S + 1, True),
        (ProcessSeen.UNKNOWN, SILENT_AFTER_S + 1, True),
        (ProcessSeen.UNKNOWN, SILENT_AFTER_S, False),
        (ProcessSeen.UNKNOWN, HEARTBEAT_S, False),
        (ProcessSeen.THIS_PROCESS, 10 * SILENT_AFTER_S, False),
    ],
)
def test_a_run_is_interrupted_when_its_process_ended_or_it_was_silent_too_long(seen, silent_s, interrupted):
    run = running(heartbeat_at=NOW - silent_s)

    assert (interruption(run, seen, NOW) is not None) is interrupted


def test_a_run_without_a_heartbeat_counts_its_start_as_its_last_sign_of_life():
    assert interruption(running(started=NOW - 60), ProcessSeen.UNKNOWN, NOW) is None
    assert interruption(running(started=NOW - SILENT_AFTER_S - 1), ProcessSeen.UNKNOWN, NOW) is not None


def test_the_reason_names_the_ended_process_or_the_last_sign_of_life():
    ended = interruption(running(), ProcessSeen.ENDED, NOW)
    silent = interruption(running(heartbeat_at=NOW - 3600), ProcessSeen.UNKNOWN, NOW)

    assert ended == "interrupted: its process (pid 4242 on web-1) ended without finishing it"
    assert silent == (
        "interrupted: no sign of life since 2026-09-21T13:13:20Z (a running job renews it every 30 s)"
    )
