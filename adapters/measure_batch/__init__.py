"""One batch of measure-rates in the database: the facts of a batch of conversations, counted in SQL, and
written over the stored ones that changed (DESIGN.md, "The data path").

The rules are core's (core.transcript, core.run_record_json, core.answers, core.waits, core.go_on,
core.saved, core.facts); each module here states one of them as INSERT … SELECT statements into the scratch
tables (adapters.measure_batch.scratch), and `measure_batch` runs them in order:

    entries    the conversations, with what their run record says whole, and its readable entries
    messages   their messages: readable, the payload's role, notice, runUuid and segment
    runs       the runs they name, the first of each uuid, and the counts of their events (the one pass over
               the batch's events)
    answers    the completed answers, each with whether its conversation shows an earlier write
    verdicts   whether the claiming runs saved anything: from the counts where they settle it, else from
               their events
    waits      the user messages a wait of their runs may hold, the approval waits where a "go on" or an
               unreadable user message needs them, and where those messages stand in them
    facts      the facts, and the stored facts that changed replaced

Only the texts a text rule judges leave the database: a completed answer's content (core.claims' claim and
denial rules) and the text of a user message a wait may hold (core.claims.is_go_on); what the rules say
comes back as the uids they said yes to. Tool arguments and results, be_user and editor ids are never
selected.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass
from datetime import date

from sqlalchemy import Connection, func, select

from adapters import schema
from adapters.measure_batch import answers, entries, facts, messages, runs, scratch, verdicts, waits
from core.claims import claims_change, denies_change, is_go_on
from core.periods import Grain

Timer = Callable[[str], None]  # called with a phase's name when it ends


@dataclass(frozen=True)
class UidRange:
    """The conversations with a uid in (after, upto]."""

    after: int
    upto: int


# A batch of conversations: a uid range, or the listed uids.
Scope = UidRange | Collection[int]


@dataclass(frozen=True)
class BatchResult:
    """What one batch read, and the periods of both grains a changed fact left or entered."""

    conversations: int
    runs: int
    answers: int
    answers_without_run: int
    unreadable_messages: int
    periods: frozenset[tuple[Grain, date]]


def _ignore(_phase: str) -> None:
    return None


def measure_batch(connection: Connection, scope: Scope, *, now: int, timer: Timer = _ignore) -> BatchResult:
    """Count the facts of the batch's conversations, the text rules of core.claims on the texts it hands
    over, and replace the stored facts that changed, inside the caller's transaction."""
    scratch.clear(connection)
    if isinstance(scope, UidRange):
        conversations = entries.fill_conversations(connection, after=scope.after, upto=scope.upto)
    else:
        conversations = entries.fill_conversations(connection, uids=scope)
    timer("fill_conversations")
    entries.fill_entries(connection)
    timer("fill_entries")
    messages.fill_messages(connection)
    timer("fill_messages")
    runs.fill_runs(connection)
    timer("fill_runs")
    answers.fill_answers(connection)
    timer("fill_answers")
    texts = answers.answer_texts(connection)
    timer("answer_texts")
    judged = [
        (uid, claims_change(text), earlier == 1 and denies_change(text)) for uid, earlier, text in texts
    ]
    timer("claim_rules")
    answers.save_judged(connection, judged)
    timer("save_judged")
    verdicts.fill_verdicts(connection)
    timer("fill_verdicts")
    verdicts.save_verdicts(
        connection, verdicts.stream_verdicts(connection, verdicts.claiming_runs(connection))
    )
    timer("save_verdicts")
    waits.fill_user_messages(connection)
    timer("fill_user_messages")
    said = [uid for uid, text in waits.go_on_texts(connection) if is_go_on(text)]
    timer("go_on_texts")
    waits.save_go_on(connection, said)
    timer("save_go_on")
    waits.fill_waits(connection)
    timer("fill_waits")
    waits.place_user_messages(connection)
    timer("place_user_messages")
    facts.fill_facts(connection)
    timer("fill_facts")
    counted = facts.batch_counts(connection)
    facts.fill_retired_runs(connection)
    timer("fill_retired_runs")
    facts.fill_purged_runs(connection)
    timer("fill_purged_runs")
    periods = _write(connection, now, timer)
    return BatchResult(
        conversations=conversations,
        runs=counted["runs"],
        answers=counted["answers"],
        answers_without_run=counted["answers_without_run"],
        unreadable_messages=counted["unreadable_messages"],
        periods=periods,
    )


def measure_unnamed_runs(
    connection: Connection, *, since: bool, now: int, timer: Timer = _ignore
) -> tuple[int, frozenset[tuple[Grain, date]]]:
    """The facts of the runs no conversation's fact names (with `since`, only those stamped since the last
    measurement, scratch.since_run), written over the stored ones that changed: how many, and the periods
    changed."""
    scratch.clear(connection)
    unnamed = facts.fill_unnamed_runs(connection, since=since)
    timer("fill_unnamed_runs")
    return unnamed, _write(connection, now, timer)


def _write(connection: Connection, now: int, timer: Timer) -> frozenset[tuple[Grain, date]]:
    facts.mark_changed(connection)
    timer("mark_changed")
    periods = facts.write_changed(connection, now)
    timer("write_changed")
    return frozenset(periods)


def batch_end(connection: Connection, *, after: int, size: int) -> int | None:
    """The uid of the `size`-th conversation after `after` (or of the last one): the batch is the uid range
    (after, it]; None when no conversation follows `after`."""
    c = schema.conversation.c
    page = select(c.uid).where(c.uid > after).order_by(c.uid).limit(size).subquery("page")
    value = connection.execute(select(func.max(page.c.uid))).scalar()
    return None if value is None else int(value)
