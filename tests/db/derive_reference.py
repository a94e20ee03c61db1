"""The Python reference of derive-outcomes: every due write classified by core.classification.classify_writes,
from inputs read without the job's SQL path (the targets parsed from each payload by core.events, every AI
write of a record gathered in Python), and what the job stored, side by side.

Who wrote a row is compared inside SQL here too (`_row_facts`): the reference learns which runs' backend user
wrote each row and whether `_cli_` did, never a user id; values are compared inside SQL, never read."""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, replace

from sqlalchemy import Connection, Engine, String, and_, func, literal, select

from adapters import history as history_queries
from adapters import schema
from adapters.dialect import json as sqljson
from adapters.outcomes import decided_by_of
from core.classification import classify_writes
from core.events import EventProblem, WriteTarget, parse_event, write_target
from core.outcomes import (
    AUTOMATION_USER,
    BACKEND_USERTYPE,
    Action,
    HistoryRow,
    Presence,
    Write,
    WriteOutcome,
    run_outcome,
    unreadable_target,
)
from core.run_status import is_finished
from core.window import window_cutoff

# The field names that may enter a JSON path (adapters.dialect.json.PLAIN_KEY_CHARACTERS).
PLAIN_KEY = re.compile(f"[{sqljson.PLAIN_KEY_CHARACTERS}]+")


@dataclass(frozen=True)
class Judged:
    """One write's outcome as stored or as the reference gives it."""

    outcome: str
    reason: str
    edit_scope: str
    first_change_after_s: int | None
    decided_by: tuple[int, ...]


def _judged(outcome: WriteOutcome) -> Judged:
    return Judged(
        outcome.outcome.value,
        outcome.reason.value if outcome.reason else "",
        outcome.edit_scope.value if outcome.edit_scope else "",
        outcome.first_change_after_s,
        tuple(sorted(set(outcome.decided_by))),
    )


def stored(engine: Engine) -> tuple[dict[int, Judged], dict[int, str]]:
    """What derive-outcomes stored: each write's outcome by event uid, each run's by run uid."""
    w, r = schema.write_outcome.c, schema.run_outcome.c
    with engine.connect() as connection:
        writes = {
            int(row.event_uid): Judged(
                row.outcome,
                row.reason,
                row.edit_scope,
                row.first_change_after_s,
                decided_by_of(row.decided_by) or (),
            )
            for row in connection.execute(
                select(w.event_uid, w.outcome, w.reason, w.edit_scope, w.first_change_after_s, w.decided_by)
            )
        }
        runs = {int(uid): str(outcome) for uid, outcome in connection.execute(select(r.run_uid, r.outcome))}
    return writes, runs


def reference(engine: Engine, *, now: int, window_s: int) -> tuple[dict[int, Judged], dict[int, str]]:
    """Every due write and run as core classifies them (DESIGN.md rules 1-8)."""
    e, run = schema.agentrun_event, schema.agentrun
    cutoff = window_cutoff(now, window_s)
    with engine.connect() as connection:
        events = connection.execute(
            select(e.c.uid, e.c.run, e.c.sequence, e.c.kind, e.c.round, e.c.payload, e.c.crdate)
            .where(e.c.kind == "tool_write")
            .order_by(e.c.uid)
        ).all()
        runs = {
            int(uid): (uuid, status)
            for uid, uuid, status in connection.execute(select(run.c.uid, run.c.uuid, run.c.status))
        }
        targets: dict[int, WriteTarget | None] = {}
        by_run: dict[int, list[int]] = defaultdict(list)
        written_at: dict[int, int] = {}
        ai_writes: dict[tuple[str, int], list[tuple[int, int]]] = defaultdict(list)  # (event uid, run uid)
        for uid, run_uid, sequence, kind, round_, payload, crdate in events:
            parsed = parse_event(uid, sequence, kind, round_, 0.0, payload, crdate)
            found = None if isinstance(parsed, EventProblem) else write_target(parsed)
            targets[uid] = found if isinstance(found, WriteTarget) else None
            by_run[run_uid].append(uid)
            written_at[uid] = int(crdate)
            if isinstance(found, WriteTarget):
                ai_writes[(found.table, found.uid)].append((uid, run_uid))
        due = [
            run_uid
            for run_uid, uids in by_run.items()
            if max(written_at[uid] for uid in uids) < cutoff
            and run_uid in runs
            and runs[run_uid][0]
            and is_finished(runs[run_uid][1])
        ]
        wanted = [uid for run_uid in due for uid in by_run[run_uid]]
        records: dict[str, set[int]] = defaultdict(set)
        for uid in wanted:
            if (target := targets[uid]) is not None:
                records[target.table].add(target.uid)
        written = {key: writes for key, writes in ai_writes.items() if key[1] in records.get(key[0], ())}
        history = history_queries.history_rows(connection, records, keys_from=0, keys_to=2**31 - 1)
        lanes, history = _row_facts(
            connection, written, history, {uid: uuid for uid, (uuid, _) in runs.items()}
        )
        catalog = history_queries.TableCatalog(connection)
        presence: dict[tuple[str, int], Presence] = {}
        no_records: set[str] = set()
        for name, uids in records.items():
            table = catalog.get(name)
            if table is None:
                presence.update({(name, uid): Presence.TABLE_MISSING for uid in uids})
            elif not table.has_uid:
                no_records.add(name)
            else:
                present = history_queries.presence(connection, table, uids)
                presence.update({(name, uid): state for uid, state in present.items()})
        oldest = history_queries.oldest_retained_tstamp(connection)

    judged: dict[tuple[str, int], dict[int, WriteOutcome]] = {}

    def classify(uid: int) -> WriteOutcome:
        target = targets[uid]
        if target is None or target.table in no_records:
            return unreadable_target(uid)
        key = (target.table, target.uid)
        if key not in judged:
            writes = [
                Write(event, key[0], key[1], written_at[event], runs.get(run, ("", ""))[0], lanes.get(event))
                for event, run in written.get(key, [])
                if run in runs
            ]
            judged[key] = classify_writes(writes, history.get(key, ()), presence[key], oldest, window_s)
        return judged[key][uid]

    write_outcomes: dict[int, Judged] = {}
    run_outcomes: dict[int, str] = {}
    for run_uid in due:
        classified = [classify(uid) for uid in by_run[run_uid]]
        write_outcomes.update({outcome.event_uid: _judged(outcome) for outcome in classified})
        run_outcomes[run_uid] = run_outcome(outcome.outcome for outcome in classified).value
    return write_outcomes, run_outcomes


def _chunks(values: list[int], size: int = 2_000) -> list[list[int]]:
    return [values[i : i + size] for i in range(0, len(values), size)]


def _row_facts(
    connection: Connection,
    written: dict[tuple[str, int], list[tuple[int, int]]],
    history: dict[tuple[str, int], list[HistoryRow]],
    uuids: dict[int, str],
) -> tuple[dict[int, int], dict[tuple[str, int], list[HistoryRow]]]:
    """Each write's lane and each row's lane, live flag, automation flag, named run and restored fields."""
    h, run = schema.sys_history, schema.agentrun
    run_uids = sorted({r for writes in written.values() for _, r in writes if r in uuids})
    same_user: dict[int, set[int]] = defaultdict(set)
    for chunk in _chunks(run_uids):
        other = run.alias("other")
        pairs = select(run.c.uid, other.c.uid).join(other, other.c.be_user == run.c.be_user)
        for a, b in connection.execute(pairs.where(run.c.uid.in_(chunk), other.c.uid.in_(run_uids))):
            same_user[int(a)].add(int(b))
    lanes: dict[int, int] = {}
    for writes in written.values():
        for event, r in writes:
            lanes[event] = min(e for e, other_run in writes if other_run in same_user[r])
    row_uids = sorted(row.uid for rows in history.values() for row in rows)
    writers: dict[int, set[int]] = defaultdict(set)
    live: dict[int, bool] = {}
    scope: dict[int, str] = {}
    for chunk in _chunks(row_uids):
        backend = h.c.usertype == BACKEND_USERTYPE  # a frontend user's uid is no backend user's
        query = select(h.c.uid, run.c.uid).join(run, and_(run.c.be_user == h.c.userid, backend))
        for row_uid, r in connection.execute(query.where(h.c.uid.in_(chunk), run.c.uid.in_(run_uids))):
            writers[int(row_uid)].add(int(r))
        for row_uid, workspace, correlation in connection.execute(
            select(h.c.uid, h.c.workspace, h.c.correlation_id).where(h.c.uid.in_(chunk))
        ):
            live[int(row_uid)] = not workspace
            scope[int(row_uid)] = _correlation_scope(correlation or "")
    automation = _automation_rows(connection, row_uids)
    by_uuid = {uuid: r for r, uuid in uuids.items() if uuid}
    facts: dict[tuple[str, int], list[HistoryRow]] = {}
    for key, rows in history.items():
        writes = written.get(key, [])
        restores = _restores(connection, rows)
        facts[key] = [
            replace(
                row,
                live=live[row.uid],
                by_automation=row.uid in automation,
                channel=min((lanes[e] for e, r in writes if r in writers[row.uid]), default=None),
                named_run=scope[row.uid] if scope[row.uid] in by_uuid else None,
                restores=restores.get(row.uid, frozenset()),
            )
            for row in rows
        ]
    return lanes, facts


def _correlation_scope(correlation_id: str) -> str:
    """The scope of a DataHandler correlation id, `0400$<scope>:<subject>` (DOMAIN.md), or ''."""
    head, dollar, rest = correlation_id.partition("$")
    scope, colon, _ = rest.partition(":")
    return scope if dollar and colon and head else ""


def _automation_rows(connection: Connection, row_uids: list[int]) -> set[int]:
    """The rows the `_cli_` backend user wrote; none when the database has no be_users table."""
    if "be_users" not in history_queries.TableCatalog(connection):
        return set()
    h, users = schema.sys_history, schema.be_users
    cli = select(users.c.uid).where(users.c.username == AUTOMATION_USER)
    found: set[int] = set()
    for chunk in _chunks(row_uids):
        backend = h.c.usertype == BACKEND_USERTYPE
        query = select(h.c.uid).where(h.c.uid.in_(chunk), backend, h.c.userid.in_(cli))
        found.update(int(uid) for uid in connection.execute(query).scalars())
    return found


def _restores(connection: Connection, rows: list[HistoryRow]) -> dict[int, frozenset[tuple[int, str]]]:
    """Per modify row, the (earlier modify row, field) pairs whose oldRecord value its newRecord value equals,
    compared inside SQL (adapters.dialect.json.field_value)."""
    dialect = connection.dialect.name
    modifies = sorted(
        (row for row in rows if row.action is Action.MODIFY and row.fields), key=lambda r: r.uid
    )
    found: dict[int, set[tuple[int, str]]] = defaultdict(set)
    h = schema.sys_history
    newer, older = h.alias("newer"), h.alias("older")
    new_doc = sqljson.json_document(dialect, newer.c.history_data)
    old_doc = sqljson.json_document(dialect, older.c.history_data)
    for i, before in enumerate(modifies):
        for after in modifies[i + 1 :]:
            for name in sorted((before.fields or frozenset()) & (after.fields or frozenset())):
                if not PLAIN_KEY.fullmatch(name):
                    continue
                same = sqljson.same_value(dialect, new_doc, old_doc, literal(name, String()))
                equal = select(func.count()).select_from(newer).join(older, older.c.uid == before.uid)
                if connection.execute(equal.where(newer.c.uid == after.uid, same)).scalar_one():
                    found[after.uid].add((before.uid, name))
    return {uid: frozenset(pairs) for uid, pairs in found.items()}
