"""Reads of the chat's conversations and messages (tx_nrmcpagent_conversation, tx_nrmcpagent_message).

`load_conversation` reads one conversation as administrators inspect it: its columns, its messages, the runs
it names and their events, read into core.conversation's values. Everything is read with plain SELECTs;
`be_user` is never selected, nor tool arguments or results (only the payload keys a rule may read). A row
that cannot be read is reported as one line naming the row and why, and the rest is still read.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

from sqlalchemy import ColumnElement, Connection, Engine, Text, func, inspect, null, or_, select, type_coerce
from sqlalchemy.exc import NoSuchTableError

from adapters import schema
from adapters.database import RunrecordError, reported
from adapters.dialect import json as sqljson
from adapters.dialect import payload as sqlpayload
from adapters.events import read_events
from adapters.runs import runs_by_uuid
from core.conversation import (
    Conversation,
    Run,
    StoredMessage,
    event_problem,
    read_card_outcomes,
    read_messages,
    read_run,
    read_stored_record,
    read_view_context,
    runs_named,
)
from core.events import Event, PayloadShape
from core.run_record_json import parse_run_record
from core.table_names import MAX_RECORD_UID

conversation = schema.conversation
message = schema.message


class ConversationNotFoundError(RunrecordError):
    """No conversation with that uid."""


def load_conversation(engine: Engine, uid: int) -> Conversation:
    """Read one conversation, its messages, the runs it names (in start order) and their events."""
    c = conversation.c
    columns = (
        c.uid,
        c.status,
        c.skill_identifier,
        c.view_context,
        c.error_code,
        c.error_message,
        c.approval_run_uuid,
        c.run_record,
        c.tstamp,
    )
    with reported(engine, "reading the conversation"), engine.connect() as connection:
        outcomes_column = _card_outcomes(connection)
        query = select(*columns, outcomes_column.label("card_outcomes")).where(c.uid == uid)
        row = connection.execute(query).one_or_none()
        if row is None:
            raise ConversationNotFoundError(f"conversation {uid} does not exist")
        message_rows = stored_messages(connection, uid)
        messages, times, message_problems = read_messages(message_rows)
        stored, readable, record_problems = read_stored_record(row.run_record)
        outcomes, outcome_problems = read_card_outcomes(row.card_outcomes)
        named = runs_named(stored, messages, outcomes, row.approval_run_uuid)
        runs, run_problems = _runs(connection, named)
        read = read_events(connection, [run.uid for run in runs])
    uuids = {run.uid: run.uuid for run in runs}
    unreadable_events: dict[str, int] = {}
    for run_uid, _ in read.problems:
        unreadable_events[uuids[run_uid]] = unreadable_events.get(uuids[run_uid], 0) + 1
    view_context, view_problems = read_view_context(row.view_context)
    problems = (
        message_problems
        + record_problems
        + outcome_problems
        + run_problems
        + tuple(event_problem(uuids[run_uid], problem) for run_uid, problem in read.problems)
        + view_problems
    )
    return Conversation(
        uid=row.uid,
        status=row.status,
        skill=row.skill_identifier,
        view_context=view_context,
        error_code=row.error_code,
        error_message=row.error_message or "",
        approval_run_uuid=row.approval_run_uuid,
        tstamp=row.tstamp,
        messages=messages,
        unread_messages=len(message_rows) - len(messages),
        message_times=times,
        stored_entries=stored,
        stored_record_readable=readable,
        card_outcomes=outcomes,
        runs=runs,
        events=_events_by_uuid(runs, read.by_run),
        problems=problems,
        record_stored=bool(row.run_record and row.run_record.strip()),
        record_unreadable=parse_run_record(row.run_record)[1],
        unreadable_events=unreadable_events,
    )


def stored_messages(connection: Connection, conversation_uid: int) -> list[StoredMessage]:
    """The conversation's messages in sorting order, each payload as the database reads it: what it is and
    only the keys core.transcript.read_message reads (adapters.dialect.payload.kept_message), never a tool's
    result or an assistant message's tool calls."""
    m = message.c
    dialect = connection.dialect.name

    def read(guarded: bool) -> list[StoredMessage]:
        query = (
            select(
                m.sorting,
                sqlpayload.payload_shape(dialect, m.payload, guarded=guarded).label("shape"),
                sqlpayload.kept_message(dialect, m.payload, guarded=guarded).label("kept"),
                m.crdate,
                m.uid,
            )
            .where(m.conversation == conversation_uid)
            .order_by(m.sorting)
        )
        return [
            StoredMessage(row.sorting, row.kept, row.crdate, row.uid, shape=PayloadShape(row.shape))
            for row in connection.execute(query)
        ]

    return sqljson.cast_first(connection, read)


def _runs(connection: Connection, uuids: Sequence[str]) -> tuple[tuple[Run, ...], tuple[str, ...]]:
    """The runs in start order, and a line per time of theirs that is not a number (their start then 0)."""
    read = [
        read_run(row.uid, row.uuid, row.status, row.configuration_identifier, row.started_at, row.finished_at)
        for row in runs_by_uuid(connection, uuids)
    ]
    runs = sorted((run for run, _ in read), key=lambda run: (run.started_at, run.uid))
    return tuple(runs), tuple(problem for _, problems in read for problem in problems)


def _events_by_uuid(
    runs: Sequence[Run], by_run: Mapping[int, tuple[Event, ...]]
) -> dict[str, tuple[Event, ...]]:
    """Every run's events under its uuid (a uuid two runs hold: both runs' events, the lower uid's first)."""
    events: dict[str, tuple[Event, ...]] = {}
    for run in sorted(runs, key=lambda run: run.uid):
        events[run.uuid] = events.get(run.uuid, ()) + by_run.get(run.uid, ())
    return events


def last_page_visible(engine: Engine, loaded: Conversation) -> bool:
    """Whether the conversation's last page (view_context lastPageId) may be named: it still exists.

    Whether this editor may see the page is the backend's to say, and runrecord reads no editor; a page that
    is gone or deleted no reader can see, so only then is it not named.
    """
    if not 0 < loaded.last_page_id <= MAX_RECORD_UID:  # a larger id names no page the column can hold
        return False
    p = schema.pages.c
    with reported(engine, "reading the last page"), engine.connect() as connection:
        query = select(p.deleted).where(p.uid == loaded.last_page_id)
        deleted = connection.execute(query).scalar_one_or_none()
    return deleted == 0


def recent_conversations(connection: Connection, *, before_uid: int | None, limit: int) -> Sequence[Any]:
    """Conversations not deleted with uid below before_uid (None: from the newest), newest first: uid,
    status, skill_identifier, message_count, tstamp."""
    c = conversation.c
    query = select(c.uid, c.status, c.skill_identifier, c.message_count, c.tstamp).where(c.deleted == 0)
    if before_uid is not None:
        query = query.where(c.uid < before_uid)
    return connection.execute(query.order_by(c.uid.desc()).limit(limit)).all()


def conversation_naming_run(connection: Connection, uuid: str) -> int | None:
    """The first conversation that names the run: as its waiting run, in a card outcome or a run-record
    entry. `uuid` must be a canonical run uuid (it is matched inside the JSON columns' text)."""
    c = conversation.c
    pattern = f'%"{uuid}"%'
    found = connection.execute(
        select(c.uid)
        .where(
            or_(
                c.approval_run_uuid == uuid,
                _card_outcomes(connection).like(pattern),
                c.run_record.like(pattern),
            )
        )
        .order_by(c.uid)
        .limit(1)
    ).scalar()
    return None if found is None else int(found)


def _card_outcomes(connection: Connection) -> ColumnElement[str | None]:
    """The card_outcomes column, or NULL on a chat released before it (DOMAIN.md: a later release adds it)."""
    try:
        present = {column["name"] for column in inspect(connection).get_columns(conversation.name)}
    except NoSuchTableError:  # the read itself then says which table is missing, and what to do
        return conversation.c.card_outcomes
    if "card_outcomes" in present:
        return conversation.c.card_outcomes
    return type_coerce(null(), Text())


def _conversation_columns() -> tuple[Any, ...]:
    c = conversation.c
    return (c.uid, c.skill_identifier, c.approval_run_uuid, c.run_record)


def conversation_page(connection: Connection, *, after: int, limit: int) -> Sequence[Any]:
    """The next conversations by uid after `after`."""
    c = conversation.c
    query = select(*_conversation_columns()).where(c.uid > after).order_by(c.uid).limit(limit)
    return connection.execute(query).all()


def conversations_by_uid(connection: Connection, uids: Collection[int]) -> Sequence[Any]:
    """The named conversations (those that still exist), by uid."""
    c = conversation.c
    query = select(*_conversation_columns()).where(c.uid.in_(list(uids))).order_by(c.uid)
    return connection.execute(query).all()


def count_conversations(connection: Connection, *, deleted_too: bool = True) -> int:
    """How many conversations the installation holds (without `deleted_too`: those not deleted, as listed)."""
    query = select(func.count()).select_from(conversation)
    if not deleted_too:
        query = query.where(conversation.c.deleted == 0)
    return int(connection.execute(query).scalar_one())
