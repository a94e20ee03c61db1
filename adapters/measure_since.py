"""What changed since the last measurement: the marks a rerun stores next, and the conversations it reads.

A conversation is counted again when its row, a new message, or a run or event of a run it names changed
since the marks (adapters.measure_marks). A row stamped up to a margin before the last measurement read the
tables is read again, for a transaction that committed after that read: nr-llm and the chat stamp a run or
conversation with the time of the write (`time()`, taken just before the statement or the short transaction
that writes it), so a row committed after the read carries a stamp of at most the margin before it. The last
measurement read the tables at the time it stored (the earlier of its `now` and the system clock at its start)
or later, where that time is earlier than this measurement's `now` (jobs.measure). Without it (a measurement
by an older runrecord, the same `now` again), rows stamped up to the margin before the mark are read again.
The hosts' clocks must agree to well within the margin (NTP does): runrecord's `now` is compared with the
stamps of TYPO3's hosts.

Each of the two tables stamped by tstamp is read once for all of it: the conversations stamped since their
mark give the changed ones and their new mark, and the runs stamped since theirs are kept in a temporary table
of the job (adapters.measure_batch.scratch.since_run) that gives the runs' new mark, the conversations of
those runs and, after the batches, the runs no conversation names (adapters.measure_batch.facts.
fill_unnamed_runs). Neither table has an index on tstamp (nr-llm keeps none on the runs', the chat none that
starts with the conversations'), so each read is a pass over the table: asked apart, the runs took three and
the conversations two.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from sqlalchemy import Connection, Select, and_, delete, func, insert, or_, select

from adapters import schema
from adapters.dialect import plans
from adapters.measure_batch import scratch
from adapters.measure_marks import Marks, newest_uids, source_marks, stamp_of

conversation = schema.conversation
message = schema.message
agentrun = schema.agentrun
event = schema.agentrun_event
fact = schema.measure_fact


@dataclass(frozen=True)
class Changes:
    """The marks as the source tables stand now, the conversations changed since the last ones (None: more
    than the limit, every conversation is read), and whether a run is read again (scratch.since_run)."""

    marks: Marks
    touched: set[int] | None
    runs: bool = True


def read_again_from(mark: int, last_read: int | None, margin_s: int) -> int:
    """The stamp from which a table's rows are read again: those stamped after its mark are new, and one
    committed after the last read (at `last_read` or later) is stamped at most `margin_s` before it. Without
    `last_read`, from the margin before the mark."""
    if last_read is None:
        return mark - margin_s
    return max(mark - margin_s, min(mark + 1, last_read - margin_s))


def changes_since(
    connection: Connection, since: Marks, margin_s: int, limit: int, *, last_read: int | None
) -> Changes:
    """The marks now and the conversations changed since `since` (`read_again_from`); fills scratch.since_run
    with the runs stamped since the runs' mark (`read_again_from`) or above its uid.

    The rows stamped up to `margin_s` before a mark are read in the same pass all the same: the newest stamp
    among them is the next mark, and when there is none the stamps went back (a restored backup)."""
    # The uids first: a row committed after this read has a higher one, and is read by the next run.
    uids = newest_uids(connection)
    c, r, s = conversation.c, agentrun.c, scratch.since_run.c
    conversation_floor = since.conversation_tstamp - margin_s
    run_floor = since.run_tstamp - margin_s
    stamped = select(c.uid, c.tstamp).where(
        or_(c.tstamp >= conversation_floor, c.uid > since.conversation_uid)
    )
    rows = connection.execute(stamped.limit(limit + 1)).all()
    since_run = select(r.uid, r.tstamp).where(or_(r.uid > since.run_uid, r.tstamp >= run_floor))
    connection.execute(insert(scratch.since_run).from_select(["uid", "tstamp"], since_run))
    conversation_stamp: int | None = None
    found: set[int] | None = None
    if len(rows) <= limit:
        stamps = [stamp for _, stamp in rows]
        conversation_stamp = _newest_of(connection, stamps, conversation_floor, c.tstamp)
        again = read_again_from(since.conversation_tstamp, last_read, margin_s)
        found = {
            int(uid)
            for uid, stamp in rows
            if uid > since.conversation_uid or (stamp is not None and int(stamp) >= again)
        }
    run_stamp = stamp_of(
        connection,
        connection.execute(select(func.max(s.tstamp)).where(s.tstamp >= run_floor)).scalar(),
        r.tstamp,
    )
    run_again = read_again_from(since.run_tstamp, last_read, margin_s)
    if run_again > run_floor:
        connection.execute(delete(scratch.since_run).where(s.uid <= since.run_uid, s.tstamp < run_again))
    runs = connection.execute(select(s.uid).limit(1)).first() is not None
    if runs:
        # Without statistics PostgreSQL and SQLite took the table for a large one, and read the run table
        # whole to join it for the runs no conversation names.
        scratch.analyze(connection, scratch.since_run)
    touched = None if found is None else _touched(connection, found, since, run_again, limit)
    if conversation_stamp is None or run_stamp == 0:
        # Nothing stamped since a mark (rows deleted, or the marks of another installation): the whole table.
        marks = source_marks(connection)
        conversation_stamp = conversation_stamp or marks.conversation_tstamp
        run_stamp = run_stamp or marks.run_tstamp
    return Changes(replace(uids, conversation_tstamp=conversation_stamp, run_tstamp=run_stamp), touched, runs)


def _newest_of(connection: Connection, stamps: list[Any], floor: int, column: Any) -> int | None:
    """The newest of the stamps read at or after `floor` (those before it are the rows read by uid); None when
    there is none."""
    for value in stamps:
        if isinstance(value, str | bytes):
            stamp_of(connection, value, column)  # refused
    since = [int(value) for value in stamps if value is not None and int(value) >= floor]
    return max(since) if since else None


def _touched(
    connection: Connection, found: set[int], since: Marks, run_again: int, limit: int
) -> set[int] | None:
    """`found` and the conversations of the new messages, of the runs stamped from `run_again` on and of the
    new events; None when more than `limit`."""
    if len(found) > limit:
        return None
    d = connection.dialect.name
    m, e, s = message.c, event.c, scratch.since_run.c
    # The new messages and events as a range of their primary key, on MariaDB whatever its statistics say:
    # counting a table as nearly empty (right after a bulk load), it read the whole (conversation, sorting)
    # index of the messages instead.
    new_messages = plans.by_index(
        d, select(m.conversation).where(m.uid > since.message_uid), message, "PRIMARY"
    )
    new_events = plans.by_index(d, select(e.run).where(e.uid > since.event_uid), event, "PRIMARY")
    queries = [
        _conversations_with(new_messages),
        _conversations_of(d, select(s.uid).where(s.tstamp >= run_again)),
        _conversations_of(d, new_events),
    ]
    for query in queries:
        for (uid,) in connection.execute(query.limit(limit + 1)):
            found.add(int(uid))
            if len(found) > limit:
                return None
    return found


def _conversations_with(messages: Select[Any]) -> Select[Any]:
    """The conversations of the new `messages`, read as a range of their primary key: asked as one DISTINCT,
    SQLite read the whole (conversation, sorting) index for it, every message of the installation (23 ms for
    133,000 messages with none new, measured)."""
    new = plans.evaluated_once(messages).subquery("new_message")
    return select(new.c.conversation).distinct()


def _conversations_of(dialect: str, runs: Select[Any]) -> Select[Any]:
    """The conversations whose facts name the `runs` (those stamped since the mark, or those of the new
    events, a range of their primary key), each run's fact found by its key. A join from the facts read every
    fact and looked up its run: 30 ms against 4 ms for 33,000 facts on PostgreSQL, whose statistics of a fact
    table filled since they were taken promised five (measured). The new events' runs are not made distinct
    first: SQLite would read the whole (run, sequence) index for it instead of the key's range (25 ms against
    1 ms, measured); the conversations are."""
    f = fact.c
    changed = plans.evaluated_once(runs).subquery("changed")
    run_uid = changed.c[0]
    on = and_(f.run_uid == run_uid, f.message_uid == 0, f.conversation_uid > 0)
    joined, found = plans.inner_probe(dialect, changed, fact, on, (f.conversation_uid,), "changed_fact")
    return plans.in_order(dialect, select(found.c.conversation_uid).select_from(joined).distinct())
