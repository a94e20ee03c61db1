"""The temporary tables measure-rates counts a batch of conversations in (adapters.measure_batch).

Each job run creates its own on its connection, so that two processes never share one and the installation's
schema is left as it is; every column is typed (a table made by CREATE TABLE … AS from expressions has none,
and SQLite would then use none of its indexes). A batch empties them and fills them again.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import (
    Column,
    ColumnElement,
    Connection,
    Index,
    MetaData,
    SmallInteger,
    String,
    Table,
    case,
)

from adapters.dialect import session as sqlsession
from adapters.dialect.session import integer_column, temporary_table
from core import message_time

_scratch = MetaData()

NAME_LENGTH = 255  # the longest run uuid a message or record entry may name and still be matched


# The tables MariaDB keeps in memory (adapters.dialect.session): those whose rows are a few numbers. A MEMORY
# table stores every text at its declared width, and a batch's messages, entries or facts (hundreds of bytes a
# row) outgrew 64 MB on the demo generator's installation at scale 0.02, which sent the batch to disk again.
_IN_MEMORY = frozenset({"changed", "count", "counted", "go_on", "judged", "named", "user", "verdict", "wait"})


def _table(name: str, *columns: Column[Any], updated_in_place: bool = False) -> Table:
    return temporary_table(
        _scratch,
        f"tx_runrecord_m_{name}",
        *columns,
        in_memory=name in _IN_MEMORY,
        updated_in_place=updated_in_place,
    )


def _flag(name: str) -> Column[object]:
    return Column(name, SmallInteger, nullable=False)


def flag(condition: ColumnElement[bool]) -> ColumnElement[Any]:
    """A condition as the 0 or 1 a flag column holds."""
    return case((condition, 1), else_=0)


# The batch's conversations; record_stored: the run_record column holds something; record_problem: it holds
# something core.run_record_json cannot read whole (not JSON, no list, an entry it cannot read).
conversation = _table(
    "conversation",
    integer_column("uid", key=True),
    Column("skill", String(100), nullable=False),
    Column("approval_run_uuid", String(NAME_LENGTH), nullable=False),
    _flag("record_stored"),
    _flag("record_problem"),
)
# Their messages, read in SQL (core.transcript): readable, the payload's role, notice, runUuid and segment.
CREATED_AT_LENGTH = message_time.LONGEST  # longer is no time core.message_time reads
message = _table(
    "message",
    integer_column("uid", key=True),
    integer_column("conversation"),
    integer_column("sorting"),
    Column("role_column", String(20), nullable=False),
    # The message's time (core.message_time): its payload's createdAt, else the row's crdate.
    integer_column("crdate"),
    _flag("readable"),
    Column("role", String(16), nullable=True),
    Column("notice", String(32), nullable=True),
    Column("run_uuid", String(NAME_LENGTH), nullable=False),
    integer_column("segment", nullable=True),
    Column("created_at", String(CREATED_AT_LENGTH), nullable=True),  # the payload's createdAt, as written
)
# The run record's entries (core.run_record_json), with what earlier_write reads of them; those not readable
# (readable 0, their segment then perhaps NULL) only until their record is marked as a problem.
entry = _table(
    "entry",
    integer_column("conversation"),
    Column("run_uuid", String(NAME_LENGTH), nullable=True),
    integer_column("position"),
    integer_column("segment", nullable=True),
    _flag("writes"),
    _flag("readable"),
)
# The runs each conversation names (core.answers.named_runs), by uuid.
name = _table("name", integer_column("conversation"), Column("uuid", String(NAME_LENGTH), nullable=False))
# The runs named, the first uid of each uuid, with their end and start (core.measured_runs).
run = _table(
    "run",
    integer_column("uid", key=True),
    Column("uuid", String(NAME_LENGTH), nullable=False),
    Column("status", String(32), nullable=False),
    Column("configuration", String(150), nullable=False),
    integer_column("ended_at"),
    integer_column("started_at"),
    _flag("finished"),
    _flag("waited"),
    updated_in_place=True,  # waited, from the approval events its run's counts found (runs.fill_runs)
)
# What the database counted of their events (core.measured_runs.EventCounts); no row: no events. Whether a
# run has a tool_write or an approval event is whether it has a first one (first_write_at, first_approval:
# NULL for none); the uids of the first and last approval event; doubtful: how many of its events core
# cannot read (core.answers.verdict_from_counts).
count = _table(
    "count",
    integer_column("run", key=True),
    integer_column("events"),
    integer_column("openers"),
    integer_column("first_write_at", nullable=True),
    integer_column("first_write_sequence", nullable=True),
    integer_column("last_opener_sequence", nullable=True),
    integer_column("first_approval", nullable=True),
    integer_column("last_approval", nullable=True),
    integer_column("first_event_at"),
    integer_column("last_event_at"),
    integer_column("doubtful"),
)
# Which conversation names which run.
named = _table("named", integer_column("conversation"), integer_column("run_uid"))
# The approval waits (core.waits.approval_waits) of the runs that waited, where a "go on" or an unreadable
# user message of their conversation needs them (fill_waits); ended NULL: still waiting.
wait = _table(
    "wait", integer_column("run_uid"), integer_column("started"), integer_column("ended", nullable=True)
)
# The completed answers (core.answers.completed_answers); earlier NULL: cannot tell (denial).
answer = _table(
    "answer",
    integer_column("message_uid", key=True),
    integer_column("conversation"),
    Column("run_uuid", String(NAME_LENGTH), nullable=False),
    integer_column("run_uid", nullable=True),
    integer_column("position"),
    integer_column("crdate"),
    integer_column("segment", nullable=True),
    _flag("notice"),
    Column("earlier", SmallInteger, nullable=True),
)
# What the text rules said of an answer's content (core.claims), where they said yes.
judged = _table("judged", integer_column("message_uid", key=True), _flag("claims"), _flag("denies"))
# core.saved's verdict on the runs whose answer claims a change.
verdict = _table(
    "verdict", integer_column("run_uid", key=True), Column("verdict", String(16), nullable=False)
)
# The user messages a wait of their conversation's runs may hold, or that a runFinishedOutside line answers
# (core.waits, core.go_on): line: it or the next message carries runFinishedOutside. Placed only where a
# "go on" or an unreadable message needs it: inside_run: the first run (by start) whose wait holds it;
# run_before: the last run that waited and started at or before it; next_user_at: the next user message's
# crdate.
user = _table(
    "user",
    integer_column("message_uid", key=True),
    integer_column("conversation"),
    integer_column("sorting"),
    integer_column("crdate"),
    _flag("unreadable"),
    _flag("line"),
    integer_column("inside_run", nullable=True),
    integer_column("run_before", nullable=True),
    integer_column("next_user_at", nullable=True),
)
# The user messages whose whole text is a "go on" phrase (core.claims.is_go_on).
go_on = _table("go_on", integer_column("message_uid", key=True))
# Per conversation with a run that waited: the run its "go on" is counted at and the conversation's state.
counted = _table(
    "counted",
    integer_column("conversation", key=True),
    integer_column("run_uid"),
    Column("go_on", String(16), nullable=False),
)
# The facts of the batch, as tx_runrecord_measure_fact holds them (without uid and measured_at).
fact = _table(
    "fact",
    integer_column("run_uid"),
    integer_column("message_uid"),
    integer_column("conversation_uid"),
    Column("configuration_identifier", String(150), nullable=True),
    Column("skill_identifier", String(100), nullable=True),
    integer_column("ended_at"),
    integer_column("runs"),
    Column("answer", String(16), nullable=False),
    _flag("notice"),
    Column("claim", String(16), nullable=False),
    Column("denial", String(16), nullable=False),
    Column("go_on", String(16), nullable=False),
    Column("problems", String(255), nullable=False),
    integer_column("go_on_finished_outside"),
    integer_column("go_on_second_run"),
    integer_column("go_on_unknown"),
    integer_column("go_on_unreadable"),
)
# The facts that differ from the stored ones (fresh: the batch gives a new row), or are stored and no longer
# given (fresh 0), by key, with the stored row's uid.
changed = _table(
    "changed",
    integer_column("run_uid"),
    integer_column("message_uid"),
    integer_column("stored_uid", nullable=True),
    _flag("fresh"),
)

# The runs stamped since the last measurement's mark of the runs, or above its uid: a rerun reads the run
# table once for them (adapters.measure_since) and keeps them for the whole job; a batch's clear leaves them.
# On disk on MariaDB: after a long pause it may hold every run of the installation.
since_run = _table("since_run", integer_column("uid", key=True), integer_column("tstamp", nullable=True))

# Each index belongs to its table; adapters.dialect.session.create_temporary_tables creates them with it.
_INDEXES = (
    Index("tx_runrecord_m_message_order", message.c.conversation, message.c.sorting),
    Index("tx_runrecord_m_entry_conversation", entry.c.conversation),
    Index("tx_runrecord_m_name_uuid", name.c.uuid),
    Index("tx_runrecord_m_run_uuid", run.c.uuid),
    Index("tx_runrecord_m_named_conversation", named.c.conversation, named.c.run_uid),
    Index("tx_runrecord_m_named_run", named.c.run_uid, named.c.conversation),
    Index("tx_runrecord_m_wait_run", wait.c.run_uid),
    Index("tx_runrecord_m_answer_run", answer.c.conversation, answer.c.run_uid),
    Index("tx_runrecord_m_user_conversation", user.c.conversation),
    Index("tx_runrecord_m_fact_key", fact.c.run_uid, fact.c.message_uid),
    Index("tx_runrecord_m_changed_key", changed.c.run_uid, changed.c.message_uid),
)

TABLES = tuple(_scratch.sorted_tables)
_BATCH_TABLES = tuple(table for table in TABLES if table is not since_run)
# Connection.info: the statistics this job took of its scratch tables (sqlsession.BatchStatistics).
_STATISTICS = "runrecord_measure_statistics"


def create(connection: Connection) -> None:
    """Create this connection's scratch tables afresh, with their indexes; the job's first batch gives the
    planner their statistics (`analyze`)."""
    sqlsession.create_temporary_tables(connection, TABLES)
    connection.info[_STATISTICS] = sqlsession.BatchStatistics()


def clear(connection: Connection) -> None:
    """Empty every scratch table of a batch for the next one."""
    sqlsession.empty_temporary_tables(connection, _BATCH_TABLES)


def analyze(connection: Connection, *tables: Table) -> None:
    """Give the planner the statistics of tables just filled (sqlsession.BatchStatistics): in the job's
    first batch, and in a later one only where a table holds many times the rows they were taken with. Later
    batches hold rows of the same kind and plan with those, as derive-outcomes' do: PostgreSQL scales them by
    each table's pages, which TRUNCATE leaves as the ANALYZE found them. Taken in every batch, they cost
    PostgreSQL 0.9 s of a 10 s measurement of four batches (the wide shape's 0.1)."""
    connection.info[_STATISTICS].take(connection, *tables)


def statistics_taken(connection: Connection) -> None:
    """The batch has committed: the statistics it took hold for the batches after it."""
    connection.info[_STATISTICS].committed()


def drop(connection: Connection) -> None:
    """Drop this connection's scratch tables (a pooled connection outlives the job)."""
    sqlsession.drop_temporary_tables(connection, TABLES)
