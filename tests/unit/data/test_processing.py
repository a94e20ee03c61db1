"""How the generator's chat processes stamp AI rows (DOMAIN.md, "When a row is stamped"): a forked process per
request stamps its start, seconds to minutes before the write; the worker stamps its own start until it
restarts."""

from __future__ import annotations

import random

from data.agent_run import Write
from data.builder import HistoryOrder, Installation
from data.chat import Processing
from data.processes import EXEC_BOOT_S, HistoryPlan, ProcessingChoice, Worker
from data.scenarios import content_edit, seo_tour
from data.story import EDITORS, LATER_ROUND_MS, Story, Writer

NOW = 1_795_000_000
STORY = Story.around(NOW, window_s=7 * 86_400)


def writes(choice: ProcessingChoice, scenario: object, conversations: int = 40) -> tuple[list[Write], Worker]:
    site = Installation(None, history_order=HistoryOrder.MOMENTS)
    worker = Worker(random.Random("worker"), since=STORY.start - 30 * 86_400, until=NOW)
    plan = HistoryPlan(worker, seed="test", choice=choice, cli_user=1, editors=EDITORS)
    rng = random.Random(3)
    planted = [
        scenario(Writer(site, STORY, rng, STORY.start + n * 86_400, plan=plan))  # type: ignore[operator]
        for n in range(conversations)
    ]
    return [w for p in planted for run in p.runs for w in run.writes], worker


def test_an_exec_card_write_is_stamped_when_its_approvals_process_started_seconds_before() -> None:
    written, _ = writes(ProcessingChoice.EXEC, seo_tour)

    ages = {w.written_at - w.own_row.stamp for w in written if w.own_row is not None}

    assert written and ages <= set(range(EXEC_BOOT_S[0], EXEC_BOOT_S[1] + 2))


def test_an_exec_write_in_a_later_model_round_is_stamped_a_minute_or_more_before() -> None:
    written, _ = writes(ProcessingChoice.EXEC, content_edit, conversations=80)

    ages = [w.written_at - w.own_row.stamp for w in written if w.own_row is not None]

    assert max(ages) >= 2 * LATER_ROUND_MS[0] / 1000 and min(ages) >= EXEC_BOOT_S[0]


def test_every_worker_row_is_stamped_when_the_worker_last_started_before_the_write() -> None:
    written, worker = writes(ProcessingChoice.WORKER, seo_tour)

    rows = [(w.written_at, w.own_row.stamp) for w in written if w.own_row is not None]

    assert rows and all(stamp == worker.started(at) for at, stamp in rows)
    assert max(at - stamp for at, stamp in rows) > 86_400
    assert len({stamp for _, stamp in rows}) > 1  # the worker restarted in between


def test_mixed_processing_runs_some_conversations_in_each_way() -> None:
    worker = Worker(random.Random("worker"), since=STORY.start, until=NOW)
    plan = HistoryPlan(worker, seed="test", choice=ProcessingChoice.MIXED, cli_user=1, editors=EDITORS)

    kinds = {plan.processes().processing for _ in range(40)}

    assert kinds == {Processing.EXEC, Processing.WORKER}
