"""The verdicts of the runs whose completed answer claims a change (core.saved): from the event counts where
they settle it, else core.saved.nothing_saved over the run's events.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Column, ColumnElement, Connection, and_, exists, func, insert, literal, select
from sqlalchemy.sql.base import ReadOnlyColumnCollection

from adapters.decision_table import first_holding
from adapters.dialect import bulk
from adapters.events import event_of, events_of
from adapters.measure_batch import scratch
from core.answers import VERDICT_BY_COUNTS, CountTest
from core.saved import Verdict, nothing_saved


def count_test(
    test: CountTest, counts: ReadOnlyColumnCollection[str, Column[Any]]
) -> ColumnElement[bool] | None:
    """core.answers.count_test_holds, in SQL, over a run's scratch.count columns (None: always holds)."""
    if test is CountTest.NO_EVENTS:
        return func.coalesce(counts.events, 0) == 0
    if test is CountTest.DOUBTFUL_EVENTS:
        return counts.doubtful > 0
    if test is CountTest.TOOL_WRITE:
        return counts.first_write_at.is_not(None)
    if test is CountTest.NO_APPROVAL:
        return counts.first_approval.is_(None)
    if test is CountTest.OTHERWISE:
        return None
    raise NotImplementedError(f"no SQL for the count test {test}")


def fill_verdicts(connection: Connection) -> None:
    """core.answers.verdict_from_counts (VERDICT_BY_COUNTS) for the runs whose answer claims a change, where
    the counts settle it."""
    a, j, k = scratch.answer.c, scratch.judged.c, scratch.count.c
    verdict = first_holding(VERDICT_BY_COUNTS, lambda test: count_test(test, k), lambda found: found.value)
    query = (
        select(a.run_uid, verdict)
        .select_from(
            scratch.answer.join(
                scratch.judged, and_(j.message_uid == a.message_uid, j.claims == 1)
            ).outerjoin(scratch.count, k.run == a.run_uid)
        )
        .where(a.run_uid.is_not(None), verdict.is_not(None))
        .distinct()
    )
    connection.execute(insert(scratch.verdict).from_select(["run_uid", "verdict"], query))


def claiming_runs(connection: Connection) -> list[int]:
    """The claiming runs whose verdict the counts do not settle: core.saved reads their events."""
    a, j, v = scratch.answer.c, scratch.judged.c, scratch.verdict.c
    query = (
        select(a.run_uid)
        .select_from(scratch.answer.join(scratch.judged, and_(j.message_uid == a.message_uid, j.claims == 1)))
        .where(a.run_uid.is_not(None), ~exists(select(literal(1)).where(v.run_uid == a.run_uid)))
    )
    return sorted({int(uid) for uid in connection.execute(query).scalars()})


def save_verdicts(connection: Connection, verdicts: dict[int, Verdict]) -> None:
    """The verdicts core.saved read from the events."""
    rows = [(uid, verdict.value) for uid, verdict in verdicts.items()]
    bulk.insert_rows(connection, scratch.verdict, ["run_uid", "verdict"], rows)
    scratch.analyze(connection, scratch.verdict)


def stream_verdicts(connection: Connection, run_uids: Sequence[int]) -> dict[int, Verdict]:
    """core.saved's verdict of runs whose counts do not settle it, from their events' kept keys."""
    streams: dict[int, list[Any]] = defaultdict(list)
    for e in events_of(connection, run_uids):
        streams[int(e.run)].append(event_of(e))
    return {uid: nothing_saved(streams.get(uid)) for uid in run_uids}
