"""The batch's messages as core.transcript reads them, in SQL and without their content; and the text of the
few messages a text rule judges (`message_texts`), the only content that leaves the database.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import (
    ColumnElement,
    Connection,
    LargeBinary,
    Select,
    case,
    cast,
    func,
    insert,
    literal,
    select,
    update,
)

from adapters import schema
from adapters.dialect import document_members as doc_members
from adapters.dialect import documents as doc
from adapters.dialect import instants, plans
from adapters.dialect import json as sqljson
from adapters.dialect.names import POSTGRESQL, SQLITE
from adapters.measure_batch import scratch
from adapters.measure_batch.scratch import flag
from core.error_codes import Notice
from core.json_text import well_formed
from core.transcript import Role

message = schema.message

_ROLES = tuple(role.value for role in Role)
_NOTICES = tuple(notice.value for notice in Notice)


# The members of a message payload fill_messages reads (doc_members.Members).
MESSAGE_MEMBERS: tuple[doc.Path, ...] = (("role",), ("notice",), ("runUuid",), ("segment",), ("createdAt",))


def fill_messages(connection: Connection) -> None:
    """The batch's messages as core.transcript.read_message reads them, without their content."""
    d = connection.dialect.name
    m = message.c

    def run(guarded: bool) -> None:
        read = (m.uid, m.conversation, m.sorting, m.role, m.crdate)
        document = doc.document(d, m.payload, guarded=guarded).label("document")
        batch = scratch.conversation
        if d == POSTGRESQL:
            # Each conversation's messages probed through the chat's (conversation, sorting) key, in a fenced
            # LATERAL subquery: as a join PostgreSQL read every message of the installation for most
            # batches once it grew (10 of 17 batches at the wide shape's 0.5, measured).
            joined, found = plans.inner_probe(
                d, batch, message, m.conversation == batch.c.uid, (*read, document), "message"
            )
            parsed = select(*found.c).select_from(joined).subquery("parsed")
        else:
            parsed = (
                select(*read, document)
                .select_from(message.join(batch, batch.c.uid == m.conversation))
                .subquery("parsed")
            )
        members, payload = doc_members.member_table(d, parsed.c.document, MESSAGE_MEMBERS, "member")

        def at(*path: str) -> doc.Member:
            return payload.at(path)

        readable = doc.is_kind(d, *at(), "object") & doc.string_in(d, *at("role"), _ROLES)
        # Each member read once, whatever `readable` says (a condition on it in every column would ask the
        # engine for it again there); an unreadable message's members are cleared below.
        notice = doc.string_in(d, *at("notice"), _NOTICES)
        role = doc.raw_text(d, *at("role"))
        query = select(
            parsed.c.uid,
            parsed.c.conversation,
            parsed.c.sorting,
            parsed.c.role,
            parsed.c.crdate,
            flag(readable),
            case((doc.exact(d, role).in_(_ROLES), role)),
            case((notice, doc.raw_text(d, *at("notice")))),
            func.coalesce(doc.string(d, *at("runUuid"), scratch.NAME_LENGTH), ""),
            doc.integer(d, *at("segment")),
            doc.string(d, *at("createdAt"), scratch.CREATED_AT_LENGTH),
        )
        if members is not None:
            query = query.select_from(parsed.outerjoin(members, literal(True)))
        columns = [
            "uid",
            "conversation",
            "sorting",
            "role_column",
            "crdate",
            "readable",
            "role",
            "notice",
            "run_uuid",
            "segment",
            "created_at",
        ]
        connection.execute(insert(scratch.message).from_select(columns, query))

    sqljson.cast_first(connection, run)
    unread = {"role": None, "notice": None, "run_uuid": "", "segment": None, "created_at": None}
    sm = scratch.message.c
    connection.execute(update(scratch.message).where(sm.readable == 0).values(**unread))
    # The message's time: its createdAt where it names one (core.message_time), not the crdate every save of
    # the conversation gives all its rows.
    written = func.coalesce(instants.created_seconds(d, sm.created_at), sm.crdate)
    connection.execute(update(scratch.message).where(sm.created_at.is_not(None)).values(crdate=written))
    scratch.analyze(connection, scratch.message)


def _content(dialect: str, payload: ColumnElement[Any]) -> ColumnElement[Any]:
    """core.transcript's text of a message: its content when a string, the text parts of a list, else ''."""
    return case(
        (doc.is_kind(dialect, payload, ("content",), "string"), doc.raw_text(dialect, payload, ("content",))),
        (
            doc.is_kind(dialect, payload, ("content",), "array"),
            doc.text_parts(dialect, payload, ("content",)),
        ),
        else_="",
    )


def message_texts(connection: Connection, uids: Select[Any]) -> list[Any]:
    """The chosen messages' columns (the first their uid) and their text (`_content`)."""
    d = connection.dialect.name
    m = message.c
    chosen = uids.subquery("chosen")

    def run(guarded: bool) -> list[Any]:
        document = doc.document(d, m.payload, guarded=guarded).label("document")
        # PostgreSQL: each message probed by its key (as a join its planner read every message of the
        # installation for a third of the batches at the wide shape's 0.5, measured).
        joined, found = plans.inner_probe(d, chosen, message, m.uid == chosen.c[0], (document,), "text")
        read = document if found is message else found.c.document
        parsed = plans.fenced(d, select(*chosen.c, read).select_from(joined)).subquery("parsed")
        text = _content(d, parsed.c.document)
        if d == SQLITE:
            # SQLite's json_extract writes a lone surrogate escape ("\\ud800", core.transcript) as bytes that
            # are no UTF-8, which the driver refuses to read as text: read as bytes, the text is core's.
            text = cast(text, LargeBinary)
        query = select(*(parsed.c[column.name] for column in chosen.c), text)
        return [(*row[:-1], _decoded(row[-1])) for row in connection.execute(query).all()]

    return sqljson.cast_first(connection, run)


def _decoded(text: str | bytes | None) -> str | None:
    """A message's text as core.transcript reads it: each lone surrogate as U+FFFD (other bytes that are no
    UTF-8, which no JSON text holds, as U+FFFD too)."""
    if not isinstance(text, bytes):
        return text
    try:
        return well_formed(text.decode("utf-8", "surrogatepass"))
    except UnicodeDecodeError:
        return text.decode("utf-8", "replace")
