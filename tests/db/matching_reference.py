"""sys_history of written records read the way derive-outcomes reads it, row by row in Python: the reference
test_derive_matching compares the job's matching with. be_user and userid are compared in SQL and never read;
no value of history_data leaves the database."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, Integer, String, case, func, literal, select

from adapters import schema
from adapters.dialect import json as sqljson
from adapters.dialect.correlation import run_scope
from adapters.dialect.exact import exact, exact_values
from adapters.history import RecordKey, TableCatalog, automation_row, backend_userid, reads_automation
from core.outcomes import Action, HistoryRow


@dataclass(frozen=True)
class ReferenceHistory:
    """The history of written records with everything core.classification.classify_writes asks of a row, and
    the channel of each AI write (core.outcomes.Write.channel; None when its run is gone)."""

    rows: dict[RecordKey, list[HistoryRow]]
    channels: dict[int, int | None]


def reference_history(
    connection: Connection, writes: Mapping[RecordKey, Collection[tuple[int, int]]]
) -> ReferenceHistory:
    """Every retained row of the records that `writes` names, read the way derive-outcomes reads them.

    `writes`: per record (tablename, uid), the (event uid, run uid) of every AI write to it (any run). Each
    row comes with its keys (every add and modify row), whether it is live (workspace 0), written by
    automation (the `_cli_` backend user; never, without a readable be_users table), its channel (the
    smallest event uid among the record's writes whose run's backend user wrote it), the uuid of the run its
    correlation_id names, and `restores`: the (earlier modify row, field) pairs whose oldRecord value its
    newRecord value equals — compared in SQL with derive-outcomes' own expression, field names matching
    adapters.dialect.json.PLAIN_KEY_CHARACTERS only. be_user and userid are compared in SQL and never read;
    no value of history_data leaves the database. One query per record.
    """
    run = schema.agentrun
    runs = sorted({run_uid for pairs in writes.values() for _, run_uid in pairs})
    other = run.alias("other")
    # Each run's writer: the smallest of the given runs acting as the same backend user.
    writer_of_run: dict[int, int] = {}
    if runs:
        same_user = (
            select(run.c.uid, func.min(other.c.uid))
            .select_from(run.join(other, other.c.be_user == run.c.be_user))
            .where(run.c.uid.in_(runs), other.c.uid.in_(runs))
            .group_by(run.c.uid)
        )
        writer_of_run = {int(uid): int(writer) for uid, writer in connection.execute(same_user)}
    catalog = TableCatalog(connection)
    automation = reads_automation(catalog)
    rows: dict[RecordKey, list[HistoryRow]] = {}
    channels: dict[int, int | None] = {}
    for (table, uid), pairs in sorted(writes.items()):
        channel_of: dict[int, int] = {}
        for event_uid, run_uid in sorted(pairs):
            writer = writer_of_run.get(run_uid)
            if writer is not None:
                channel_of.setdefault(writer, event_uid)
            channels[event_uid] = None if writer is None else channel_of[writer]
        rows[(table, uid)] = _reference_rows(connection, table, uid, runs, channel_of, automation)
    return ReferenceHistory(rows, channels)


def _reference_rows(
    connection: Connection,
    table: str,
    uid: int,
    runs: Sequence[int],
    channel_of: Mapping[int, int],
    automation: bool,
) -> list[HistoryRow]:
    dialect = connection.dialect.name
    h, run = schema.sys_history, schema.agentrun
    by_automation = automation_row(h) if automation else literal(0)
    userid = backend_userid(h)
    writer = (
        select(func.min(run.c.uid)).where(run.c.be_user == userid, run.c.uid.in_(runs)).scalar_subquery()
        if runs
        else literal(None, Integer)
    )
    scope = run_scope(dialect, h.c.correlation_id)
    named = select(run.c.uuid).where(run.c.uuid == scope).order_by(run.c.uid).limit(1).scalar_subquery()

    def read(guarded: bool) -> list[Any]:
        document = sqljson.json_document(dialect, h.c.history_data, guarded=guarded)
        query = select(
            h.c.uid,
            h.c.tstamp,
            h.c.actiontype,
            sqljson.record_keys(dialect, document, h.c.actiontype),
            case((func.coalesce(h.c.workspace, 0) == 0, 1), else_=0),
            by_automation,
            writer,
            case((scope.is_not(None), named)),
        ).where(
            h.c.tablename == table,
            h.c.recuid == uid,
            exact(dialect, h.c.tablename) == exact_values(dialect, [table])[0],
        )
        return list(connection.execute(query).all())

    found = sqljson.cast_first(connection, read)
    restores = _restores(connection, table, uid, found)
    return [
        HistoryRow(
            int(row_uid),
            int(tstamp),
            int(actiontype),
            sqljson.fields_of(keys),
            live=bool(live),
            by_automation=bool(automated),
            channel=None if writer_uid is None else channel_of.get(int(writer_uid)),
            named_run=named_uuid,
            restores=restores.get(int(row_uid), frozenset()),
        )
        for row_uid, tstamp, actiontype, keys, live, automated, writer_uid, named_uuid in found
    ]


def _restores(
    connection: Connection, table: str, uid: int, found: Sequence[Any]
) -> dict[int, frozenset[tuple[int, str]]]:
    """Per modify row, the (earlier modify row, field) pairs whose oldRecord[field] its newRecord[field]
    equals, in SQL (adapters.dialect.json.same_value), for the fields both name."""
    dialect = connection.dialect.name
    modifies = {
        int(row[0]): fields
        for row in found
        if row[2] == Action.MODIFY.value and (fields := sqljson.fields_of(row[3]))
    }
    names = sorted({name for fields in modifies.values() for name in fields})
    if len(modifies) < 2 or not names:
        return {}
    h = schema.sys_history
    later, earlier = h.alias("later"), h.alias("earlier")

    def read(guarded: bool) -> list[Any]:
        new = sqljson.json_document(dialect, later.c.history_data, guarded=guarded)
        old = sqljson.json_document(dialect, earlier.c.history_data, guarded=guarded)
        tests = []
        for name in names:
            key = literal(name, String())
            same = case(
                (
                    sqljson.is_plain_key(dialect, key),
                    case((sqljson.same_value(dialect, new, old, key), 1), else_=0),
                ),
                else_=0,
            )
            tests.append(same)
        query = (
            select(later.c.uid, earlier.c.uid, *tests)
            .select_from(later.join(earlier, earlier.c.uid < later.c.uid))
            .where(
                later.c.uid.in_(sorted(modifies)),
                earlier.c.uid.in_(sorted(modifies)),
            )
        )
        return list(connection.execute(query).all())

    pairs: dict[int, set[tuple[int, str]]] = defaultdict(set)
    for row in sqljson.cast_first(connection, read):
        later_uid, earlier_uid, *same = row
        for name, equal in zip(names, same, strict=True):
            if equal and name in modifies[int(later_uid)] and name in modifies[int(earlier_uid)]:
                pairs[int(later_uid)].add((int(earlier_uid), name))
    return {row_uid: frozenset(found_pairs) for row_uid, found_pairs in pairs.items()}
