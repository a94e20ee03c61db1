"""How the chat's processes stamp history (DOMAIN.md, "When a row is stamped"): a process forked per request
(exec) or one long-running worker with its restarts, chosen per conversation by `runrecord generate
--processing`, and the streams that draw them."""

from __future__ import annotations

import bisect
import random
from enum import StrEnum

from data.chat import Processes, Processing
from data.fates import DAY

# exec: ai-chat:process is forked per request (a message, an approval) and stamps its rows with its start; it
# records its first event this many seconds later.
EXEC_BOOT_S = (1, 5)
# worker: one ai-chat:worker stamps every row with its start; it is restarted (a deploy, a crash, a host
# reboot) after this many seconds, so that a worker row is hours to days older than its write, and a restart
# falls inside many writes' windows.
WORKER_RESTART_S = (12 * 3600, 9 * DAY)
WORKER_SHARE = 0.5  # --processing mixed: the share of conversations the worker runs


class ProcessingChoice(StrEnum):
    """`runrecord generate --processing`: how the chat runs every conversation's turns."""

    EXEC = "exec"
    WORKER = "worker"
    MIXED = "mixed"  # per conversation, WORKER_SHARE of them by the worker


class Forked:
    """exec: a process per request, started EXEC_BOOT_S before the request's first event."""

    processing = Processing.EXEC

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def started(self, request_at: int) -> int:
        return request_at - self.rng.randint(*EXEC_BOOT_S)


class Worker:
    """worker: the installation's one ai-chat:worker, with its restarts from `since` to `until`."""

    processing = Processing.WORKER

    def __init__(self, rng: random.Random, *, since: int, until: int) -> None:
        starts = [since]
        while starts[-1] < until:
            starts.append(starts[-1] + rng.randint(*WORKER_RESTART_S))
        self.starts = starts

    def started(self, request_at: int) -> int:
        return self.starts[max(bisect.bisect_right(self.starts, request_at) - 1, 0)]

    def restarted_between(self, start: int, end: int) -> bool:
        """Whether the worker restarted after `start` and up to `end`."""
        return bisect.bisect_right(self.starts, end) > bisect.bisect_right(self.starts, start)


class HistoryPlan:
    """How a stream of conversations writes sys_history beyond the story: the processes of each conversation
    and the rows planted beside its fates. Every draw comes from streams of its own, so that the story draws
    what it drew before."""

    def __init__(
        self,
        worker: Worker,
        *,
        seed: str,
        choice: ProcessingChoice,
        cli_user: int,
        editors: tuple[int, ...],
        cases: bool = True,
    ) -> None:
        self.worker = worker
        self.cases = cases  # False: the processes only, no planted case (the stories told at fixed dates)
        self.choice = choice
        self.rng = random.Random(f"processing:{seed}")
        self.plants = random.Random(f"plants:{seed}")
        self.forked = Forked(self.rng)
        self.cli_user = cli_user
        self.editors = editors

    def processes(self) -> Processes:
        """The processes the next conversation runs in."""
        worker = self.choice == ProcessingChoice.WORKER or (
            self.choice == ProcessingChoice.MIXED and self.rng.random() < WORKER_SHARE
        )
        return self.worker if worker else self.forked

    def chance(self, share: float) -> bool:
        """True for `share` of the calls, when cases are planted."""
        return self.cases and self.plants.random() < share
