"""The statuses of an nr-llm run (tx_nrllm_agentrun.status, DOMAIN.md): which have ended, which wait."""

from __future__ import annotations

from enum import StrEnum


class RunStatus(StrEnum):
    """tx_nrllm_agentrun.status; listed ended first, as the Runs filter offers them."""

    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"
    WAITING_FOR_APPROVAL = "waiting_for_approval"
    WAITING_FOR_INPUT = "waiting_for_input"
    RUNNING = "running"
    QUEUED = "queued"


# Both sets hold plain strings, as the column does, so that a query can bind them.
#
# A run that has ended writes nothing more. DESIGN.md rule 1 waits for the window of the run's LAST write: a
# run still queued, running or waiting for an approval or an answer may write again, so its writes so far are
# not its last, however old they are.
FINISHED_STATUSES: frozenset[str] = frozenset(
    {RunStatus.COMPLETED.value, RunStatus.FAILED.value, RunStatus.CANCELLED.value}
)

# Every status nr-llm writes (DOMAIN.md); a run in any other never ends, so it is reported, not waited for.
KNOWN_STATUSES: tuple[str, ...] = tuple(sorted(status.value for status in RunStatus))

# A run waiting for a decision: a card's approval or an answer to a question. An ordinary run the editor left
# stays waiting (and may still be decided in AI Tasks); a tour's × cancels it (000_…, "Decision").
WAITING_STATUSES: frozenset[str] = frozenset(
    {RunStatus.WAITING_FOR_APPROVAL.value, RunStatus.WAITING_FOR_INPUT.value}
)


def is_finished(status: str | None) -> bool:
    """The run has ended (completed, failed or cancelled): it writes nothing more."""
    return status in FINISHED_STATUSES


def is_waiting(status: str | None) -> bool:
    """The run waits for a card's approval or an answer to a question."""
    return status in WAITING_STATUSES
