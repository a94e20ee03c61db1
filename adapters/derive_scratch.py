"""The temporary tables one batch of derive-outcomes moves through (adapters.derive_batch).

Each is declared with its column types (SQLite cannot use an index on a table made with `CREATE TABLE … AS`
from expressions), created once per job with its indexes (adapters.dialect.session.create_temporary_tables)
and emptied at the start of every batch:

    batch_run      the page of due runs (adapters.write_targets.due_page_query)
    batch_write    their writes, with whether the target is readable and its table there (rule 6)
    batch_record   the written records, with whether each is still there (rule 2)
    (adapters.own_rows: every AI write of those records, their history rows, each write's own row, its
                   boundary, rule 3)
    batch_countable the batch's history rows that may count in a window, whichever write's
                   (derive_batch._may_count): a window reads its rows from these alone
    batch_stray    those of them stamped before a row inserted earlier, and the deletes: the only rows past
                   a window's close by insertion floor that may still belong to it
    batch_long     the records with more of those rows than a window reads whole (MariaDB: their writes'
                   windows are sought as ranges, derive_batch.WHOLE_RECORD_ROWS)
    batch_window   the rows of each due write's window (rule 4), and the deletes after it (rule 2);
                   batch_window_agg their counts per write
    batch_asked    the due writes whose decision may ask about fields: EDITED by the window's counts, or
                   left to an automation's change (derive_batch._fill_asked)
    batch_publish, batch_draft_row, batch_draft_of: the records' live publishes and draft modifies, and
                   the drafts each publish of a window moved (those since the record's previous publish)
    batch_keys     the keys of the rows a rule asks about: the own rows of the writes whose window holds a
                   change, the record's modifies that may lie in the window, the drafts its publishes moved
                   (rule 7)
    batch_key_name each key list of batch_keys exploded once, one row a field (bookkeeping fields left out);
                   batch_field numbers the batch's field names, batch_key_field holds the lists by number
    batch_written, batch_changed, batch_unreadable(_agg), batch_scope: the written fields, the changed fields
                   per write, field and writer (with their last row and count), and their counts
    batch_modified the countable modifies' fields, numbered per record, field and writer kind, where a
                   window's changed fields are counted from them (derive_scope._counted_changes)
    batch_last, batch_revert: each written field's last human change, and whether all hold their old value
    batch_fact     each write's outcome, reason, scope, first change and deciding test
    batch_decided  the sys_history uids that decided each write, as the stored JSON array
    batch_mine     the runs whose row this transaction inserted (the unique key decides, as before)
    batch_mirror   their correlation ids without an observed row in tx_nrllm_call_outcome
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Column, Index, MetaData, SmallInteger, String, Table, Text
from sqlalchemy.dialects import mysql

from adapters import own_rows_scratch
from adapters.dialect.session import integer_column, temporary_table
from core.outcomes import WINDOW_TESTS, Action
from core.table_names import MAX_TABLE_NAME

_scratch = MetaData()

# Target states of batch_write (DESIGN.md rule 6): readable; unreadable (no table or uid, a name that is no
# table name, a table without uid); a well-formed name this database has no table of (the record is gone).
READABLE, UNREADABLE, TABLE_MISSING = 0, 1, 2

# Field names compared byte for byte, as Python compares them (MariaDB's default collation ignores case).
_FIELD = Text().with_variant(mysql.TEXT(collation="utf8mb4_bin"), "mysql", "mariadb")
_NAME = String(MAX_TABLE_NAME)


def _temporary(name: str, *columns: Any, sqlite_order: tuple[str, ...] = (), hashed: bool = False) -> Table:
    return temporary_table(_scratch, name, *columns, in_memory=True, sqlite_order=sqlite_order, hashed=hashed)


def human_column(action: Action) -> str:
    """batch_window_agg's count of the window's human rows of an action WINDOW_TESTS asks about."""
    return f"human_{action.name.lower()}"


batch_run = _temporary(
    "tx_runrecord_batch_run",
    integer_column("run_uid", key=True),
    Column("correlation_id", String(36), nullable=False),
    Column("configuration_identifier", String(150), nullable=False),
    integer_column("last_write_at"),
    integer_column("writes"),
    Column("derivable", SmallInteger, nullable=False),
    Column("gone", SmallInteger, nullable=False),
)
batch_write = _temporary(
    "tx_runrecord_batch_write",
    integer_column("event_uid", key=True),
    integer_column("run_uid"),
    integer_column("written_at"),
    Column("tablename", _NAME, nullable=True),
    integer_column("recuid", nullable=True),
    Column("target_state", SmallInteger, nullable=False),
    hashed=True,  # PostgreSQL hashes the writes, the records and the key lists wherever it joins them
)
batch_record = _temporary(
    "tx_runrecord_batch_record",
    Column("tablename", _NAME, nullable=False),
    integer_column("recuid"),
    Column("presence", String(16), nullable=False),
    integer_column("first_write_at"),  # the first and the last write to the record in this batch
    integer_column("last_write_at"),
    integer_column("ai_writes"),  # 2 when the record has more than one AI write (any run, any batch), else 1
    integer_column("record_key"),  # the smallest event uid of its writes in this batch: an integer of its own
    hashed=True,
)


def _history_rows(name: str) -> Table:
    """A table of batch_history's columns but the lane and the floor's block."""
    dropped = ("lane", "floor_block")
    columns = own_rows_scratch.batch_history.c
    kept = (Column(c.name, c.type, nullable=c.nullable) for c in columns if c.name not in dropped)
    return _temporary(name, *kept)


batch_countable = _history_rows("tx_runrecord_batch_countable")
batch_stray = _history_rows("tx_runrecord_batch_stray")
batch_long = _temporary(
    "tx_runrecord_batch_long", Column("tablename", _NAME, nullable=False), integer_column("recuid")
)
batch_window = _temporary(
    "tx_runrecord_batch_window",
    integer_column("event_uid"),  # the write: its record is the row's (batch_match)
    integer_column("uid"),
    integer_column("tstamp"),
    integer_column("actiontype"),
    Column("automation", SmallInteger, nullable=False),
    Column("in_window", SmallInteger, nullable=False),  # 0: a delete stamped after the window
    # Each write's rows in uid order where the deciders' aggregate keeps the order the rows come in. The
    # index on the write is MariaDB's alone: PostgreSQL hashes the table in every join, and the index cost
    # the window's insert as much again (1.8 s against 0.9 s at one-editor's 0.1, measured).
    sqlite_order=("event_uid", "uid"),
    hashed=True,
)
batch_window_agg = _temporary(
    "tx_runrecord_batch_window_agg",
    integer_column("event_uid", key=True),
    integer_column("first_tstamp", nullable=True),  # the first human row's
    *(integer_column(human_column(action)) for action in WINDOW_TESTS),
    integer_column("changes"),  # its changes, human or automation's: whether a rule asks for W's fields
    integer_column("deletes_after"),  # the deletes stamped after the window (rule 2)
)
# The due writes whose decision may ask for the fields of their window's changes (rule 7, or an automation's
# change to a field W wrote, rule 4): only their windows' keys are read.
batch_asked = _temporary("tx_runrecord_batch_asked", integer_column("event_uid", key=True))
batch_publish = _temporary(
    "tx_runrecord_batch_publish",
    Column("tablename", _NAME, nullable=False),
    integer_column("recuid"),
    integer_column("uid"),
)
batch_draft_row = _temporary(
    "tx_runrecord_batch_draft_row",
    Column("tablename", _NAME, nullable=False),
    integer_column("recuid"),
    integer_column("uid"),
)
batch_draft_of = _temporary(
    "tx_runrecord_batch_draft_of",
    integer_column("event_uid"),
    integer_column("publish_uid"),
    integer_column("draft_uid"),
    Column("automation", SmallInteger, nullable=False),
)
batch_keys = _temporary(
    "tx_runrecord_batch_keys", integer_column("uid", key=True), Column("fields", Text, nullable=True)
)
batch_key_name = _temporary("tx_runrecord_batch_key_name", integer_column("uid"), Column("field", _FIELD))
# A field by its number: MariaDB cannot keep a TEXT column in memory, and the windows' changes are grouped by
# field (a million pairs in a batch with hot records).
batch_field = _temporary(
    "tx_runrecord_batch_field", integer_column("field_id", key=True), Column("field", _FIELD)
)
batch_key_field = _temporary(
    "tx_runrecord_batch_key_field", integer_column("uid"), integer_column("field_id"), hashed=True
)
batch_written = _temporary(
    "tx_runrecord_batch_written", integer_column("event_uid"), integer_column("field_id")
)
# The modifies of the records' countable rows whose keys were read, one row a field they name, numbered within
# their record, field and writer kind in insertion order: where a batch's windows hold many changes, a
# window's changes of a field are counted by two numbers, not row by row (derive_scope._counts_changes).
batch_modified = _temporary(
    "tx_runrecord_batch_modified",
    Column("tablename", _NAME, nullable=False),
    integer_column("recuid"),
    integer_column("field_id"),
    Column("automation", SmallInteger, nullable=False),
    integer_column("uid"),
    integer_column("floor"),
    integer_column("n"),
)
batch_changed = _temporary(
    "tx_runrecord_batch_changed",
    integer_column("event_uid"),
    integer_column("field_id"),
    Column("automation", SmallInteger, nullable=False),
    integer_column("last_uid"),  # the last row of the window that changed the field, by this writer
    integer_column("changes"),  # the rows that did (a publish once for each draft naming the field)
)
batch_unreadable = _temporary(
    "tx_runrecord_batch_unreadable",
    integer_column("event_uid"),
    integer_column("uid"),
    Column("automation", SmallInteger, nullable=False),
)
batch_unreadable_agg = _temporary(
    "tx_runrecord_batch_unreadable_agg",
    integer_column("event_uid", key=True),
    integer_column("human"),
    integer_column("automation"),
    integer_column("last_human", nullable=True),
)
batch_scope = _temporary(
    "tx_runrecord_batch_scope",
    integer_column("event_uid", key=True),
    integer_column("changed"),
    integer_column("release_changed"),
    integer_column("same_changed"),
    integer_column("automation_changed"),
    integer_column("automation_same"),
)
batch_last = _temporary(
    "tx_runrecord_batch_last",
    integer_column("event_uid"),
    integer_column("field_id"),
    integer_column("last_uid", nullable=True),
)
batch_revert = _temporary(
    "tx_runrecord_batch_revert", integer_column("event_uid", key=True), integer_column("reverted")
)
batch_fact = _temporary(
    "tx_runrecord_batch_fact",
    integer_column("event_uid", key=True),
    integer_column("run_uid"),
    integer_column("written_at"),
    Column("tablename", _NAME, nullable=True),
    integer_column("recuid", nullable=True),
    Column("target_state", SmallInteger, nullable=False),
    Column("outcome", String(24), nullable=False),
    Column("reason", String(32), nullable=False),
    Column("edit_scope", String(16), nullable=False),
    Column("decision", String(24), nullable=False),
    integer_column("first_change_after_s", nullable=True),
    # What heads decided_by: its evidence row where not UNKNOWN, a gone record's boundary.
    integer_column("evidence_uid", nullable=True),
)
batch_decided = _temporary(
    "tx_runrecord_batch_decided",
    integer_column("event_uid", key=True),
    Column("decided_by", Text, nullable=False),
)
batch_mine = _temporary(
    "tx_runrecord_batch_mine",
    integer_column("run_uid", key=True),
    Column("correlation_id", String(36), nullable=False),
    Column("outcome", String(24), nullable=False),
    integer_column("writes", nullable=True),  # the run row's; NULL once read back from the insert
)
batch_mirror = _temporary(
    "tx_runrecord_batch_mirror",
    Column("correlation_id", String(36), primary_key=True),
    integer_column("run_uid"),
)
batch_ordinal = _temporary("tx_runrecord_batch_ordinal", integer_column("n", key=True))

# The countable rows' and the strays' (record, floor, uid) indexes, named where a window's rows are sought in
# them (adapters.derive_batch).
COUNTABLE_FLOOR_INDEX = "tx_runrecord_batch_countable_floor"
STRAY_FLOOR_INDEX = "tx_runrecord_batch_stray_floor"
# Each index belongs to its table; adapters.dialect.session.create_temporary_tables creates them with it.
_INDEXES = (
    Index("tx_runrecord_batch_write_record", batch_write.c.tablename, batch_write.c.recuid),
    # Not unique: on MariaDB "Pages" and "pages" are one key, yet two records (same_record).
    Index("tx_runrecord_batch_record_record", batch_record.c.tablename, batch_record.c.recuid),
    # A record's rows in insertion order (the floor never falls along the uids): the rows after a boundary
    # are one range.
    Index(
        COUNTABLE_FLOOR_INDEX,
        batch_countable.c.tablename,
        batch_countable.c.recuid,
        batch_countable.c.floor,
        batch_countable.c.uid,
    ),
    Index(
        STRAY_FLOOR_INDEX,
        batch_stray.c.tablename,
        batch_stray.c.recuid,
        batch_stray.c.floor,
        batch_stray.c.uid,
    ),
    Index("tx_runrecord_batch_long_record", batch_long.c.tablename, batch_long.c.recuid),
    Index("tx_runrecord_batch_window_event", batch_window.c.event_uid),
    # A record's deletes and drafts without reading its other rows: a record written a hundred times has
    # thousands.
    Index(
        "tx_runrecord_batch_publish_record",
        batch_publish.c.tablename,
        batch_publish.c.recuid,
        batch_publish.c.uid,
    ),
    Index(
        "tx_runrecord_batch_draft_row_record",
        batch_draft_row.c.tablename,
        batch_draft_row.c.recuid,
        batch_draft_row.c.uid,
    ),
    Index("tx_runrecord_batch_draft_of_publish", batch_draft_of.c.event_uid, batch_draft_of.c.publish_uid),
    Index("tx_runrecord_batch_key_field_uid", batch_key_field.c.uid),
    Index("tx_runrecord_batch_written_event", batch_written.c.event_uid, batch_written.c.field_id),
    # A field's modifies of a record by floor and by uid: the last one up to a window's close, and the last
    # one up to its boundary (the floor never falls along the uids, so both orders are one).
    Index(
        "tx_runrecord_batch_modified_floor",
        *(batch_modified.c[name] for name in ("tablename", "recuid", "field_id", "automation", "floor", "n")),
    ),
    Index(
        "tx_runrecord_batch_modified_uid",
        *(batch_modified.c[name] for name in ("tablename", "recuid", "field_id", "automation", "uid", "n")),
    ),
    Index("tx_runrecord_batch_changed_event", batch_changed.c.event_uid, batch_changed.c.field_id),
)
BATCH_TABLES = (*own_rows_scratch.TABLES.tables.values(), *_scratch.tables.values())
