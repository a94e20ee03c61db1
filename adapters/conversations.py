"""Reads of the chat's conversations and messages (tx_nrmcpagent_conversation, tx_nrmcpagent_message)."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

from sqlalchemy import Connection, func, select

from adapters import schema

conversation = schema.conversation
message = schema.message


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


def count_conversations(connection: Connection) -> int:
    """How many conversations the installation holds."""
    return int(connection.execute(select(func.count()).select_from(conversation)).scalar_one())


def messages_of(
    connection: Connection, conversation_uids: Sequence[int], *, whole_range: bool
) -> Sequence[Any]:
    """The messages of the conversations, by conversation and sorting.

    `whole_range`: the uids are every conversation from the first to the last of them (a keyset page), so
    the messages are read as that range of the (conversation, sorting) index; an IN list of thousands of
    uids tempts PostgreSQL into reading the whole table once per batch.
    """
    m = message.c
    if whole_range:
        chosen = m.conversation.between(min(conversation_uids), max(conversation_uids))
    else:
        chosen = m.conversation.in_(list(conversation_uids))
    query = (
        select(m.uid, m.conversation, m.sorting, m.role, m.crdate, m.payload)
        .where(chosen)
        .order_by(m.conversation, m.sorting)
    )
    return connection.execute(query).all()
