"""The temporary tables in which adapters.own_rows matches each write's own row (DESIGN.md rule 3), in the
job's connection, created with the other batch tables (adapters.derive_scratch):

    batch_ai         every AI write of the batch's records (any run, due or not: the rows each inserted
                     are AI rows for all), with its channel: the event uid of the first (by written_at,
                     event uid) of the record's writes whose runs act as the same backend user
                     (tx_nrllm_agentrun.be_user, compared in SQL only)
    batch_channel    one write of each channel of the records written more than once, through which a
                     history row of a record several backend users wrote finds its writer's channel
    batch_writer     per record, its channels, and the one channel and its run where it has only one: the
                     record's rows then meet that run's backend user once, not a channel per row
    batch_history    every retained row of the records: live (core.workspaces), written by automation (the
                     `_cli_` user), its channel, the run its correlation_id names, its lane (the channel, or
                     minus the named run, of a live add, modify, move or delete), its insertion floor (the
                     greatest tstamp up to it in uid order)
    batch_floor_carry  where a running maximum is computed in blocks (MariaDB), the blocks whose floors the
                     records' earlier blocks raise
    batch_named      the runs rows of each record name
    batch_lane       where rows name a run, each AI write's lane and rank i (by written_at, event uid)
                     within it (elsewhere a write's lane is its channel, and batch_ai holds its rank)
    batch_multi      the lanes with more than one write; a lane of one write takes the last of its rows
                     inserted by W's moment (all of them for a named run), one range of an index
    batch_candidate  the rows of the lanes with more than one write, numbered in uid order within each
    batch_pos        of their writes, p_i (the lane's rows inserted by W's moment; all of them for a named
                     run) and the greedy pos_i = i + min over j >= i of (p_j - j)
    batch_pos_carry  where a suffix minimum is computed in blocks (MariaDB), the blocks of a lane whose
                     positions its later blocks lower
    batch_match      each write's own row (the pos_i-th of its lane), whether it cannot be told, its
                     boundary (the own row, else the last row inserted by t + SAME_SAVE_S, else 0)
    batch_evidence   where a seek below a bound reads every later row (MariaDB), each due write's boundary
    batch_own        the own rows: with the rows a correlation id names, the AI rows of the records (not
                     filled where the window hashes them from batch_match: plans.hashes_a_list)

`sys_history.userid` and `be_user` are compared inside adapters.own_rows' statements only; no table here
holds either (a channel is an event uid).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Column, Index, MetaData, SmallInteger, String, Table
from sqlalchemy.dialects import mysql

from adapters.dialect.session import integer_column, temporary_table
from core.table_names import MAX_TABLE_NAME

TABLES = MetaData()
# A record's table name here is one of the batch's records' (a name core.table_names reads, [A-Za-z0-9_]),
# so MariaDB keeps it in ASCII. A table in memory holds rows of a fixed width, where a VARCHAR(64) of utf8mb4
# takes 256 bytes in the row and again in each index: a row of batch_history took 863 bytes, in ASCII 303
# (measured), and the 143,905 history rows of the `fanout` shape's batch at 0.1 now fit the table's
# MEMORY_TABLE_BYTES (the job 10.6 s against 26 s with its tables on disk). Where these names meet the
# installation's, the statement compares our own names to probe a batch table's index.
_NAME = String(MAX_TABLE_NAME).with_variant(
    mysql.VARCHAR(MAX_TABLE_NAME, charset="ascii", collation="ascii_general_ci"), "mysql", "mariadb"
)


def _temporary(name: str, *columns: Any) -> Table:
    return temporary_table(TABLES, name, *columns, in_memory=True)


def _record() -> tuple[Column[str], Column[int]]:
    return Column("tablename", _NAME, nullable=False), integer_column("recuid")


batch_ai = _temporary(
    "tx_runrecord_batch_ai",
    integer_column("event_uid", key=True),
    integer_column("run_uid"),
    integer_column("written_at"),
    *_record(),
    integer_column("channel"),
    integer_column("channel_rank"),  # its rank i within its channel: its lane's, unless rows name its run
    Column("due", SmallInteger, nullable=False),
    integer_column("record_writes"),  # 2 when its record has more than one AI write, else 1 (batch_record's)
)
batch_channel = _temporary(
    "tx_runrecord_batch_channel", *_record(), integer_column("channel"), integer_column("run_uid")
)
# Keyed by the record's smallest channel (an event uid of its own, so one per record): read in its order, a
# record's rows found through the installation's index arrive as the insertion floor's window orders them,
# and SQLite computes the window without sorting the batch's history rows.
batch_writer = _temporary(
    "tx_runrecord_batch_writer",
    *_record(),
    integer_column("channels"),
    integer_column("channel", key=True),
    integer_column("run_uid"),
)
# No key: its rows are appended in the order they come (a record's rows together), and read through the
# indexes below (SQLite reads a row found by a seek through its rowid).
batch_history = _temporary(
    "tx_runrecord_batch_history",
    integer_column("uid"),
    *_record(),
    integer_column("tstamp"),
    integer_column("actiontype"),
    Column("live", SmallInteger, nullable=False),
    Column("automation", SmallInteger, nullable=False),
    integer_column("named_run", nullable=True),
    integer_column("lane", nullable=True),
    integer_column("floor"),
    # Where the engine recomputes a running MAX for every row (plans.recomputes_window_max): the row's block
    # of adapters.own_rows.BLOCK_ROWS rows of its record in uid order, whose floor batch_floor_carry raises;
    # else NULL.
    integer_column("floor_block", nullable=True),
)
# The blocks of a record whose floors the greatest stamp of its earlier blocks (`carry`) raises.
batch_floor_carry = _temporary(
    "tx_runrecord_batch_floor_carry",
    *_record(),
    integer_column("floor_block"),
    integer_column("carry"),
)
batch_named = _temporary("tx_runrecord_batch_named", *_record(), integer_column("named_run"))
batch_multi = _temporary("tx_runrecord_batch_multi", *_record(), integer_column("lane"))
batch_candidate = _temporary(
    "tx_runrecord_batch_candidate",
    *_record(),
    integer_column("lane"),
    integer_column("n"),
    integer_column("floor"),
    integer_column("uid"),
    integer_column("actiontype"),
)
batch_lane = _temporary(
    "tx_runrecord_batch_lane",
    integer_column("event_uid", key=True),
    *_record(),
    integer_column("written_at"),
    Column("due", SmallInteger, nullable=False),
    integer_column("lane"),
    integer_column("rank"),
)
batch_pos = _temporary(
    "tx_runrecord_batch_pos",
    integer_column("event_uid", key=True),
    integer_column("p"),
    integer_column("pos"),
)
# The blocks of a lane's writes whose positions the least gap of the lane's later blocks (`carry`) lowers,
# where a suffix minimum is taken in blocks (plans.recomputes_window_max).
batch_pos_carry = _temporary(
    "tx_runrecord_batch_pos_carry",
    *_record(),
    integer_column("lane"),
    integer_column("block"),
    integer_column("carry"),
)
# Where a seek below a bound reads every later row (plans.seeks_below_outer_bound): the boundary row of each
# due write without an own row, counted in one pass, before batch_match takes it.
batch_evidence = _temporary(
    "tx_runrecord_batch_evidence", integer_column("event_uid", key=True), integer_column("boundary")
)
batch_match = _temporary(
    "tx_runrecord_batch_match",
    integer_column("event_uid", key=True),
    *_record(),
    integer_column("written_at"),
    Column("due", SmallInteger, nullable=False),
    integer_column("own_uid", nullable=True),
    integer_column("own_action", nullable=True),
    Column("unclear", SmallInteger, nullable=False),
    integer_column("boundary"),  # rows with a greater uid were inserted after W's own row (0: every row)
    integer_column("boundary_floor"),  # and have an insertion floor at least this: the range an index reads
)
batch_own = _temporary("tx_runrecord_batch_own", integer_column("uid", key=True))

_INDEXES = (
    Index(
        "tx_runrecord_batch_channel_record",
        batch_channel.c.tablename,
        batch_channel.c.recuid,
        batch_channel.c.run_uid,
        batch_channel.c.channel,
    ),
    # The rows of a record in insertion order (the floor never falls along the uids): the last row inserted
    # by a moment is one seek, the rows after a boundary one range.
    Index(
        "tx_runrecord_batch_history_floor",
        batch_history.c.tablename,
        batch_history.c.recuid,
        batch_history.c.floor,
        batch_history.c.uid,
    ),
    # A lane's rows in insertion order: the last of them inserted by a moment is one range. Rows of no lane
    # (no writer's, or no own-row action) are never read through it: PostgreSQL and SQLite leave them out.
    Index(
        "tx_runrecord_batch_history_lane",
        batch_history.c.tablename,
        batch_history.c.recuid,
        batch_history.c.lane,
        batch_history.c.floor,
        batch_history.c.uid,
        postgresql_where=batch_history.c.lane.is_not(None),
        sqlite_where=batch_history.c.lane.is_not(None),
    ),
    # A block's carry looked up for each of the block's rows (plans.recomputes_window_max).
    Index(
        "tx_runrecord_batch_floor_carry_block",
        batch_floor_carry.c.tablename,
        batch_floor_carry.c.recuid,
        batch_floor_carry.c.floor_block,
    ),
    Index(
        "tx_runrecord_batch_pos_carry_block",
        batch_pos_carry.c.tablename,
        batch_pos_carry.c.recuid,
        batch_pos_carry.c.lane,
        batch_pos_carry.c.block,
    ),
    Index("tx_runrecord_batch_multi_lane", batch_multi.c.tablename, batch_multi.c.recuid, batch_multi.c.lane),
    Index(
        "tx_runrecord_batch_named_record",
        batch_named.c.tablename,
        batch_named.c.recuid,
        batch_named.c.named_run,
    ),
    Index(
        "tx_runrecord_batch_candidate_floor",
        batch_candidate.c.tablename,
        batch_candidate.c.recuid,
        batch_candidate.c.lane,
        batch_candidate.c.floor,
        batch_candidate.c.n,
    ),
    Index(
        "tx_runrecord_batch_candidate_n",
        batch_candidate.c.tablename,
        batch_candidate.c.recuid,
        batch_candidate.c.lane,
        batch_candidate.c.n,
    ),
)
