"""The statuses of a run: which have ended (no more writes) and which wait for a decision."""

from __future__ import annotations

import pytest

from core.run_status import FINISHED_STATUSES, WAITING_STATUSES, RunStatus, is_finished, is_waiting


@pytest.mark.parametrize(
    ("status", "finished"),
    [
        ("completed", True),
        ("failed", True),
        ("cancelled", True),
        ("queued", False),
        ("running", False),
        ("waiting_for_approval", False),
        ("waiting_for_input", False),
        ("", False),
        (None, False),
    ],
)
def test_only_a_completed_failed_or_cancelled_run_has_made_its_last_write(
    status: str | None, finished: bool
) -> None:
    assert is_finished(status) is finished


@pytest.mark.parametrize(
    ("status", "waiting"),
    [
        ("waiting_for_approval", True),
        ("waiting_for_input", True),
        ("completed", False),
        ("cancelled", False),
        ("running", False),
        (None, False),
    ],
)
def test_a_run_waits_only_for_an_approval_or_an_answer(status: str | None, waiting: bool) -> None:
    assert is_waiting(status) is waiting


def test_every_status_is_upstream_s_string_and_no_status_both_ended_and_waits() -> None:
    values = {status.value for status in RunStatus}

    assert values == {
        "completed",
        "failed",
        "cancelled",
        "waiting_for_approval",
        "waiting_for_input",
        "running",
        "queued",
    }
    assert values >= FINISHED_STATUSES | WAITING_STATUSES
    assert set() == FINISHED_STATUSES & WAITING_STATUSES
    assert all(type(status) is str for status in FINISHED_STATUSES | WAITING_STATUSES)
