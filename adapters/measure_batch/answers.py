"""The completed answers of the batch (core.answers.completed_answers), each with whether its conversation
shows an earlier write; their texts for core.claims, and what the claim and denial rules said of them.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import (
    Connection,
    and_,
    case,
    exists,
    func,
    insert,
    literal,
    null,
    or_,
    select,
)

from adapters.dialect import bulk
from adapters.dialect import documents as doc
from adapters.measure_batch import scratch
from adapters.measure_batch.entries import own_entry
from adapters.measure_batch.messages import message_texts
from adapters.measure_batch.scratch import flag
from core.error_codes import Notice
from core.run_status import RunStatus
from core.transcript import Role


def fill_answers(connection: Connection) -> None:
    """core.answers.completed_answers: per conversation and run uuid, the last assistant message naming the
    run; for a run that still exists only if it completed, and in its last segment (or without segment);
    with whether the conversation shows a write before it (core.answers.earlier_write)."""
    d = connection.dialect.name
    m, run, k = scratch.message.c, scratch.run.c, scratch.count.c
    eligible = or_(
        run.uid.is_(None),
        and_(
            doc.exact(d, run.status) == RunStatus.COMPLETED.value,
            or_(func.coalesce(k.events, 0) == 0, m.segment.is_(None), m.segment == k.openers),
        ),
    )
    ranked = (
        select(
            m.uid,
            m.conversation,
            m.run_uuid,
            run.uid.label("run_uid"),
            m.sorting,
            m.crdate,
            m.segment,
            flag(func.coalesce(doc.exact(d, m.notice) == Notice.NOTHING_SAVED.value, False)).label("notice"),
            func.row_number()
            .over(partition_by=(m.conversation, m.run_uuid), order_by=m.sorting.desc())
            .label("rank"),
        )
        .select_from(
            scratch.message.outerjoin(scratch.run, run.uuid == m.run_uuid).outerjoin(
                scratch.count, k.run == run.uid
            )
        )
        .where(m.readable == 1, m.role == Role.ASSISTANT.value, m.run_uuid != "", eligible)
        .subquery("ranked")
    )
    a, s, e = ranked.c, scratch.conversation.c, scratch.entry.c
    own = own_entry(e, a.segment, a.sorting)
    from_record = exists(
        select(literal(1)).where(
            e.conversation == a.conversation,
            e.writes == 1,
            e.position <= a.sorting,
            ~func.coalesce(and_(e.run_uuid == a.run_uuid, own), False),
        )
    )
    n = scratch.named.c
    same_run = and_(a.run_uid.is_not(None), n.run_uid == a.run_uid)
    from_runs = exists(
        select(literal(1))
        .select_from(scratch.named.join(scratch.count, k.run == n.run_uid))
        .where(
            n.conversation == a.conversation,
            k.first_write_at.is_not(None),
            or_(
                and_(same_run, k.first_write_sequence < k.last_opener_sequence),
                and_(~func.coalesce(same_run, False), k.first_write_at <= a.crdate),
            ),
        )
    )
    earlier = case(
        (s.record_stored == 1, case((from_record, 1), (s.record_problem == 1, null()), else_=0)),
        else_=flag(from_runs),
    )
    query = (
        select(
            a.uid, a.conversation, a.run_uuid, a.run_uid, a.sorting, a.crdate, a.segment, a.notice, earlier
        )
        .select_from(ranked.join(scratch.conversation, s.uid == a.conversation))
        .where(a.rank == 1)
    )
    columns = [
        "message_uid",
        "conversation",
        "run_uuid",
        "run_uid",
        "position",
        "crdate",
        "segment",
        "notice",
        "earlier",
    ]
    connection.execute(insert(scratch.answer).from_select(columns, query))
    scratch.analyze(connection, scratch.answer)


def answer_texts(connection: Connection) -> list[tuple[int, int | None, str]]:
    """Every completed answer of the batch: its message uid, whether an earlier write stands before it, and
    its text (only that leaves the database)."""
    a = scratch.answer.c
    return message_texts(connection, select(a.message_uid, a.earlier))


def save_judged(connection: Connection, rows: Sequence[tuple[int, bool, bool]]) -> None:
    """The answers the text rules said yes to: (message uid, claims a change, denies a change)."""
    values = [(uid, int(claims), int(denies)) for uid, claims, denies in rows if claims or denies]
    bulk.insert_rows(connection, scratch.judged, ["message_uid", "claims", "denies"], values)
    scratch.analyze(connection, scratch.judged)
