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
    FromClause,
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
from adapters.dialect.names import POSTGRESQL
from adapters.measure_batch import scratch
from adapters.measure_batch.scratch import flag
from core.run_record import UNREADABLE_RECORD
from core.run_record_schema import ENTRY, Field, Holds, Shape
from core.table_names import MAX_TABLE_NAME

conversation = schema.conversation


def _members(shape: Shape, path: doc.Path = ()) -> tuple[doc.Path, ...]:
    """The members of `shape` read from the entry itself: each field's, and an object field's own fields'
    (a list's items are each read as a document of their own, adapters.dialect.documents.every_item)."""
    found: list[doc.Path] = []
    for field in shape.fields:
        found.append((*path, field.key))
        if field.holds is Holds.OBJECT and field.shape is not None:
            found.extend(_members(field.shape, (*path, field.key)))
    return tuple(found)


# The members of a run record entry that readable_entry and fill_entries read (core.run_record_schema.ENTRY):
# MariaDB hands each over as a fragment of its own (doc_members.Members), read by one pass over the record.
ENTRY_MEMBERS = _members(ENTRY)


def readable_entry(dialect: str, entry: doc_members.Members) -> ColumnElement[bool]:
    """A run record entry core.run_record_json.from_json reads: an object whose every field of
    core.run_record_schema.ENTRY is well-formed, compiled from the same table."""
    return and_(doc.is_kind(dialect, *entry.at(()), "object"), *_fields(dialect, ENTRY, entry, ()))


def _fields(
    dialect: str, shape: Shape, members: doc_members.Members, path: doc.Path
) -> list[ColumnElement[bool]]:
    return [_field(dialect, field, members, (*path, field.key)) for field in shape.fields]


def _field(dialect: str, field: Field, members: doc_members.Members, path: doc.Path) -> ColumnElement[bool]:
    """The member at `path` is what `field` holds (core.run_record_json._member), missing or null only where
    the field has a default."""
    d, member, optional = dialect, members.at(path), not field.required
    if field.holds is Holds.COUNT:
        return doc.is_count(d, *member, optional=optional)
    if field.holds is Holds.LIST:
        assert field.shape is not None
        shape = field.shape

        def item(value: ColumnElement[Any]) -> ColumnElement[bool]:
            own = doc_members.Members(value)
            return and_(doc.is_kind(d, value, (), "object"), *_fields(d, shape, own, ()))

        return doc.is_list_of(d, *member, item, optional=optional)
    if field.holds is Holds.OBJECT:
        assert field.shape is not None
        inner = and_(*_fields(d, field.shape, members, path))
        return doc.by_kind(d, *member, {"object": inner, "null": optional}, missing=optional)
    check = _scalar(d, field, member)
    return doc.absent_or_null(d, *member) | check if optional else check


def _scalar(dialect: str, field: Field, member: doc.Member) -> ColumnElement[bool]:
    """The member is the string `field` holds (not missing, not null)."""
    d = dialect
    if field.holds is Holds.CHOICE:
        assert field.choices is not None
        return doc.string_in(d, *member, tuple(choice.value for choice in field.choices))
    text = doc.is_kind(d, *member, "string")
    if field.holds is Holds.RECORD:
        record = doc.exact(d, doc.raw_text(d, *member))
        named = (record == UNREADABLE_RECORD) | doc.matches_record(d, record, MAX_TABLE_NAME)
        return text & func.coalesce(named, False)
    if field.holds is Holds.TEXT and field.nonempty:
        return text & doc.nonempty(d, *member)
    return text  # TEXT, NAME


def own_entry(entry: Any, segment: ColumnElement[Any], position: ColumnElement[Any]) -> ColumnElement[bool]:
    """core.answers._own_entry: a scratch.entry row is the entry of the answer with this segment and
    position: by its segment, or by its position for a message without one."""
    return case((segment.is_(None), entry.position == position), else_=entry.segment == segment)


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
        document = _record_document(d, guarded=guarded).where(chosen)
        if not uids:  # a range of the primary key, on MariaDB whatever its statistics say
            document = plans.by_index(d, document, conversation, "PRIMARY")
        source = document.subquery("source")
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
        document = _record_document(d, guarded=guarded)
        source: FromClause
        joined: FromClause
        if d == POSTGRESQL:
            # Each conversation's record looked up by its key: as a semi-join, planned with the statistics of
            # an earlier batch (scratch.analyze), PostgreSQL merged the conversations' key from its start.
            listed = lists.subquery("listed")
            on, read = conversation.c.uid == listed.c.uid, list(document.selected_columns)
            joined, source = plans.inner_probe(d, listed, conversation, on, read, "source")
        else:
            source = document.where(conversation.c.uid.in_(lists)).subquery("source")
            joined = source
        items, _, item = doc_members.array_items(d, source.c.record, ENTRY_MEMBERS)
        rows, (uid,), item = doc_members.fragmented(
            d, joined.join(items, literal(True)), [source.c.uid], item, ENTRY_MEMBERS, "entry_members"
        )
        query = select(
            uid,
            doc.string(d, *item.at(("runUuid",)), scratch.NAME_LENGTH),
            func.coalesce(doc.integer(d, *item.at(("position",))), 0),
            doc.integer(d, *item.at(("segment",))),
            flag(func.coalesce(doc.array_length(d, *item.at(("writes",))) > 0, False)),
            flag(readable_entry(d, item)),
        ).select_from(rows)
        columns = ["conversation", "run_uuid", "position", "segment", "writes", "readable"]
        connection.execute(insert(scratch.entry).from_select(columns, query))

    sqljson.cast_first(connection, run)
    unreadable = select(e.conversation).where(e.readable == 0)
    connection.execute(update(scratch.conversation).where(s.uid.in_(unreadable)).values(record_problem=1))
    connection.execute(delete(scratch.entry).where(e.readable == 0))
    scratch.analyze(connection, scratch.entry)
