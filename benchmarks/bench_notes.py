"""How long a turn takes to build its notes: 200 run-record entries and 100 card outcomes (000_…).

200 entries is the most a row keeps (000_…, "Decision": "The row keeps the newest 200 entries"); the goal is
under 2 ms a turn. The baseline, measured in the same run, builds as many plain strings as there are notes, so
the ratio says how much the rules cost over the least a turn could do, whatever the machine.

    python benchmarks/bench_notes.py [--repeats 200]     (with the package installed: make test sets it up)
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

from core.cards import APPROVE_ANSWER, DECLINE_ANSWERS, CardDecision, CardOutcome
from core.events import Completeness
from core.notes import notes_for_turn
from core.run_record import Decision, Ended, RunRecordEntry, ToolUse, WrittenRecord
from core.transcript import Notice, Role, TranscriptMessage

ENTRIES = 200
CARD_OUTCOMES = 100
GOAL_MS = 2.0
SEO_FIELDS = ("seo_title", "og_image", "og_title", "og_description", "twitter_title", "twitter_description")


def conversation() -> tuple[list[TranscriptMessage], list[RunRecordEntry], list[CardOutcome]]:
    """100 turns: a proposing segment, a card, and a continuation that writes when the card is approved."""
    messages: list[TranscriptMessage] = []
    entries: list[RunRecordEntry] = []
    outcomes: list[CardOutcome] = []
    for turn in range(ENTRIES // 2):
        run_uuid = f"run-{turn:04d}"
        asked, answered = 2 * turn, 2 * turn + 1
        notice = Notice.NOTHING_SAVED if turn % 10 == 9 else None
        messages.append(TranscriptMessage(asked, Role.USER, "Bitte die SEO-Felder prüfen."))
        proposal = TranscriptMessage(answered, Role.ASSISTANT, "Ich schlage vor …", notice, (), run_uuid, 0)
        messages.append(proposal)
        approved = turn % 4 != 3
        entries.append(
            RunRecordEntry(
                run_uuid,
                0,
                answered,
                turn,
                Ended.WAITING,
                tools=(ToolUse("read_page", 1, 0),),
                waiting=("update_page_seo",),
            )
        )
        entries.append(
            RunRecordEntry(
                run_uuid,
                1,
                answered,
                turn + 1,
                Ended.COMPLETED,
                tools=(ToolUse("update_page_seo", 1, 0),) if approved else (),
                writes=(WrittenRecord(f"pages:{turn + 1}", Completeness.COMPLETE),) if approved else (),
                decision=None if turn % 2 else Decision("update_page_seo", "freigegeben"),
            )
        )
        outcomes.append(
            CardOutcome(
                answered,
                run_uuid,
                "update_page_seo",
                f"pages:{turn + 1}",
                (SEO_FIELDS[turn % len(SEO_FIELDS)],),
                CardDecision.APPROVED if approved else CardDecision.DECLINED,
                APPROVE_ANSWER if approved else DECLINE_ANSWERS[turn % len(DECLINE_ANSWERS)],
                turn,
            )
        )
    messages.append(TranscriptMessage(2 * (ENTRIES // 2), Role.USER, "was ist hier passiert?"))
    return messages, entries, outcomes


def median_ms(work: Callable[[], object], repeats: int) -> float:
    """The median wall time of one call, in milliseconds, after a few warm-up calls."""
    for _ in range(5):
        work()
    times: list[float] = []
    for _ in range(repeats):
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=200)
    repeats = parser.parse_args().repeats
    messages, entries, outcomes = conversation()
    candidates = len(entries) + len(outcomes) + sum(m.notice is Notice.NOTHING_SAVED for m in messages)

    def notes() -> object:
        return notes_for_turn(messages, entries, outcomes)

    def baseline() -> object:
        texts = [f"[note {number}: {step.run_uuid} {step.position}]" for number, step in enumerate(entries)]
        cards = [f"[note {number}: {card.run_uuid} {card.position}]" for number, card in enumerate(outcomes)]
        return texts + cards

    result = notes_for_turn(messages, entries, outcomes)
    notes_ms = median_ms(notes, repeats)
    baseline_ms = median_ms(baseline, repeats)
    print(f"conversation: {len(messages)} messages, {len(entries)} entries, {len(outcomes)} card outcomes")
    print(
        f"notes: {len(result.notes)} kept, {result.dropped_count} dropped of {candidates}, "
        f"{sum(len(note.text) for note in result.notes)} characters"
    )
    print(f"notes_for_turn median: {notes_ms:.3f} ms over {repeats} repeats (goal < {GOAL_MS} ms)")
    print(f"baseline median ({len(entries) + len(outcomes)} plain strings): {baseline_ms:.3f} ms")
    print(f"ratio: {notes_ms / baseline_ms:.1f}x the baseline")
    print("goal met" if notes_ms < GOAL_MS else "goal missed")


if __name__ == "__main__":
    main()
