"""The batch's conversations and the entries of their stored run records (core.run_record_json), read in SQL.

A record that is no list, or whose entries are not all readable, is a problem of its conversation
(core.run_record_json reads it, but not whole); only its readable entries are kept for the answers' earlier
write and the claims of runs without events (adapters.measure_batch.answers, .facts).
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Connection,
    Select,
    and_,
    case,
    delete,
    func,
    insert,
    literal,
    select,
    update,
)

from adapters import schema
from adapters.dialect import document_members as doc_members
from adapters.dialect import documents as doc
from adapters.dialect import json as sqljson
from adapters.dialect import plans
from adapters.measure_batch import scratch
from adapters.measure_batch.scratch import flag
from core.run_record import UNREADABLE_RECORD, Completeness, Ended, UndecidedBy, UndecidedKind
from core.table_names import MAX_TABLE_NAME

conversation = schema.conversation


def _count(dialect: str, member: doc.Member, *, required: bool = False) -> ColumnElement[bool]:
    """core.run_record_json._int: an integer of at least 0; missing or null only where a default exists."""
    return doc.is_count(dialect, *member, optional=not required)


def _list_of(dialect: str, member: doc.Member, check: doc.Item) -> ColumnElement[bool]:
    """core.run_record_json._objects: missing or null, or a list of items that pass `check`."""
    return doc.is_list_of(dialect, *member, check)


def _values(kind: type[Any]) -> tuple[str, ...]:
    return tuple(member.value for member in kind)


# The members of a run record entry that readable_entry and fill_entries read: MariaDB hands each over as a
# fragment of its own (doc_members.Members), read by one pass over the record.
ENTRY_MEMBERS: tuple[doc.Path, ...] = (
    ("runUuid",),
    ("segment",),
    ("position",),
    ("cardOutcomesBefore",),
    ("at",),
    ("ended",),
    ("tools",),
    ("writes",),
    ("waiting",),
    ("decision",),
    ("decision", "tool"),
    ("decision", "answer"),
    ("undecided",),
    ("undecided", "kind"),
    ("undecided", "by"),
)


def readable_entry(dialect: str, entry: doc_members.Members) -> ColumnElement[bool]:
    """A run record entry core.run_record_json.from_json reads (every key it knows well-formed)."""
    d = dialect

    def at(*path: str) -> doc.Member:
        return entry.at(path)

    def tool(value: ColumnElement[Any]) -> ColumnElement[bool]:
        return (
            doc.is_kind(d, value, (), "object")
            & doc.is_kind(d, value, ("name",), "string")
            & _count(d, (value, ("calls",)))
            & _count(d, (value, ("failed",)))
        )

    def write(value: ColumnElement[Any]) -> ColumnElement[bool]:
        record = doc.exact(d, doc.raw_text(d, value, ("record",)))
        named = (record == UNREADABLE_RECORD) | doc.matches_record(d, record, MAX_TABLE_NAME)
        completeness = doc.absent_or_null(d, value, ("completeness",)) | doc.string_in(
            d, value, ("completeness",), _values(Completeness)
        )
        return (
            doc.is_kind(d, value, (), "object")
            & doc.is_kind(d, value, ("record",), "string")
            & func.coalesce(named, False)
            & completeness
        )

    def waiting(value: ColumnElement[Any]) -> ColumnElement[bool]:
        return doc.is_kind(d, value, (), "object") & doc.is_kind(d, value, ("tool",), "string")

    decided = doc.is_kind(d, *at("decision", "tool"), "string") & doc.is_kind(
        d, *at("decision", "answer"), "string"
    )
    decision = doc.by_kind(d, *at("decision"), {"object": decided, "null": True}, missing=True)
    waits = doc.string_in(d, *at("undecided", "kind"), _values(UndecidedKind)) & doc.string_in(
        d, *at("undecided", "by"), _values(UndecidedBy)
    )
    undecided = doc.by_kind(d, *at("undecided"), {"object": waits, "null": True}, missing=True)
    return and_(
        doc.is_kind(d, *at(), "object"),
        doc.is_kind(d, *at("runUuid"), "string") & doc.nonempty(d, *at("runUuid")),
        _count(d, at("segment"), required=True),
        _count(d, at("position")),
        _count(d, at("cardOutcomesBefore")),
        _count(d, at("at")),
        doc.string_in(d, *at("ended"), _values(Ended)),
        _list_of(d, at("tools"), tool),
        _list_of(d, at("writes"), write),
        _list_of(d, at("waiting"), waiting),
        decision,
        undecided,
    )


def _record_document(dialect: str, *, guarded: bool) -> Select[Any]:
    c = conversation.c
    return plans.fenced(
        dialect,
        select(
            c.uid,
            c.skill_identifier,
            c.approval_run_uuid,
            c.run_record,
            doc.document(dialect, c.run_record, guarded=guarded, of="array").label("record"),
        ),
    )


def fill_conversations(
    connection: Connection, *, after: int | None = None, upto: int | None = None, uids: Collection[int] = ()
) -> int:
    """The batch: the conversations with uid in (after, upto], or the listed ones; returns how many. A stored
    record that is no list is a problem already; one whose entries `fill_entries` cannot all read becomes
    one there."""
    d = connection.dialect.name
    c = conversation.c
    chosen = plans.in_values(d, c.uid, uids) if uids else and_(c.uid > after, c.uid <= upto)

    def run(guarded: bool) -> None:
        source = _record_document(d, guarded=guarded).where(chosen).subquery("source")
        blank = doc.blank(d, source.c.run_record)
        listed = doc.is_kind(d, source.c.record, (), "array")
        query = select(
            source.c.uid,
            func.coalesce(source.c.skill_identifier, ""),
            func.coalesce(source.c.approval_run_uuid, ""),
            flag(~blank),
            case((blank, 0), (listed, 0), else_=1),
        )
        columns = ["uid", "skill", "approval_run_uuid", "record_stored", "record_problem"]
        connection.execute(insert(scratch.conversation).from_select(columns, query))

    sqljson.cast_first(connection, run)
    scratch.analyze(connection, scratch.conversation)
    return int(connection.execute(select(func.count()).select_from(scratch.conversation)).scalar_one())


def fill_entries(connection: Connection) -> None:
    """The readable entries of the batch's stored run records (core.run_record_json.from_json), each entry
    read once: its columns and whether every key it has is well-formed; a record with an entry that is not
    is a problem (core.run_record_json reads it, but not whole), and only its readable entries are kept."""
    d = connection.dialect.name
    s, e = scratch.conversation.c, scratch.entry.c

    def run(guarded: bool) -> None:
        lists = select(s.uid).where(s.record_stored == 1, s.record_problem == 0)
        source = _record_document(d, guarded=guarded).where(conversation.c.uid.in_(lists)).subquery("source")
        items, _, item = doc_members.array_items(d, source.c.record, ENTRY_MEMBERS)
        query = select(
            source.c.uid,
            doc.string(d, *item.at(("runUuid",)), scratch.NAME_LENGTH),
            func.coalesce(doc.integer(d, *item.at(("position",))), 0),
            doc.integer(d, *item.at(("segment",))),
            flag(func.coalesce(doc.array_length(d, *item.at(("writes",))) > 0, False)),
            flag(readable_entry(d, item)),
        ).select_from(source.join(items, literal(True)))
        columns = ["conversation", "run_uuid", "position", "segment", "writes", "readable"]
        connection.execute(insert(scratch.entry).from_select(columns, query))

    sqljson.cast_first(connection, run)
    unreadable = select(e.conversation).where(e.readable == 0)
    connection.execute(update(scratch.conversation).where(s.uid.in_(unreadable)).values(record_problem=1))
    connection.execute(delete(scratch.entry).where(e.readable == 0))
    scratch.analyze(connection, scratch.entry)
