"""Which sys_history rows of a batch's records are AI rows, and which is each write's own (DESIGN.md rule 3):
core.own_rows.match_own_rows, set-based, in the temporary tables of adapters.own_rows_scratch (the job's
connection's).

`sys_history.userid` and `be_user` are compared inside these statements only; no table here holds either
(a channel is an event uid). Each statement names each temporary table once (MariaDB); on PostgreSQL the
installation's tables are probed per key through fenced LATERAL subqueries (adapters.dialect.plans).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import (
    BigInteger,
    ColumnElement,
    Connection,
    FromClause,
    Join,
    Select,
    Subquery,
    Table,
    and_,
    case,
    cast,
    exists,
    func,
    insert,
    literal,
    select,
    union_all,
    update,
)

from adapters import schema
from adapters import write_targets as targets
from adapters.dialect import plans
from adapters.dialect.correlation import run_scope
from adapters.dialect.exact import exact, record_partition, same_record
from adapters.history import automation_row, backend_userid
from adapters.own_rows_scratch import (
    batch_ai,
    batch_candidate,
    batch_channel,
    batch_evidence,
    batch_floor_carry,
    batch_history,
    batch_lane,
    batch_match,
    batch_multi,
    batch_named,
    batch_own,
    batch_pos,
    batch_pos_carry,
    batch_writer,
)
from core.outcomes import OWN_ACTIONS, SAME_SAVE_S, Action

# The installation's (tablename, recuid) index of sys_history (TYPO3 core's; DOMAIN.md).
HISTORY_INDEX = "recordident_1"
# A bound no insertion floor reaches: a named run's rows are its own whatever their stamps (rule 3).
NO_FLOOR = 2**31 - 1
# Every action code is below this: a row's uid and action packed in one integer, uid * ACTION_CODES + action.
ACTION_CODES = max(Action) + 1
# Rows per block where a running maximum or minimum is taken in blocks (plans.recomputes_window_max): n x 32
# steps within the blocks and (n / 64)² / 2 over them, for a record's n rows or a lane's n writes in a batch.
BLOCK_ROWS = 64
# Channels a record written by several backend users has on average, from which MariaDB groups them once
# (_channels_grouped). Asked one by one, each channel costs a row a run's look-up; grouped, every history row
# of the batch costs a probe (3.6 µs, a row of a record written once too). The statement filling the history
# rows, measured: the fanout shape at 0.05 (37 channels a record) 1.21 s grouped against 1.68 s; the default
# shape (2.2) 1.00 s against 0.68 s; the wide shape (2.2) alike; one-editor (1) slower grouped. The two
# costs, straight lines through those points, cross at about 16.
MANY_CHANNELS = 16
_OWN = tuple(action.value for action in OWN_ACTIONS)

Statistics = Callable[..., None]  # gives the planner the statistics of tables just filled


def _is_candidate(live: ColumnElement[Any], actiontype: ColumnElement[Any]) -> ColumnElement[bool]:
    """A row that can be a write's own (core.own_rows._is_candidate): live, an add, modify, move or delete."""
    return and_(live == 1, actiontype.in_(_OWN))


def match_own_rows(
    connection: Connection, records: Table, writes: Table, *, automation: bool, statistics: Statistics
) -> None:
    """Fill the tables above for the records (tablename, recuid) whose due writes are `writes` (event_uid).

    `automation`: whether the database has a readable be_users table; without one no row is automation's."""
    _fill_ai(connection, records, writes)
    statistics(batch_ai)
    a = batch_ai
    name = exact(connection.dialect.name, a.c.tablename)
    # The channels of the records written more than once: a row of one finds its writer's among them.
    shared = select(a.c.tablename, a.c.recuid, a.c.channel, a.c.run_uid).where(
        a.c.event_uid == a.c.channel, a.c.record_writes > 1
    )
    connection.execute(
        insert(batch_channel).from_select(["tablename", "recuid", "channel", "run_uid"], shared)
    )
    # A record's writer: its only AI write's channel as it is; the channels of a record written more than
    # once grouped (SQLite grouped every record at 13 ms a batch against 9 for both statements).
    columns = [c.name for c in batch_writer.c]
    alone = select(a.c.tablename, a.c.recuid, literal(1), a.c.channel, a.c.run_uid).where(
        a.c.record_writes <= 1
    )
    connection.execute(insert(batch_writer).from_select(columns, alone))
    writers = (
        select(
            name.label("tablename"),
            a.c.recuid,
            func.count(),
            func.min(a.c.channel),
            func.min(a.c.run_uid),
        )
        .where(a.c.event_uid == a.c.channel, a.c.record_writes > 1)
        .group_by(name, a.c.recuid)
    )
    connection.execute(insert(batch_writer).from_select(columns, writers))
    statistics(batch_channel, batch_writer)
    _fill_history(connection, automation=automation, grouped=_channels_grouped(connection))
    statistics(batch_history)
    lanes = _fill_lanes(connection)
    statistics(batch_named, batch_lane)
    multi = _fill_candidates(connection, lanes)
    statistics(batch_multi, batch_candidate)
    if multi:
        _fill_positions(connection, lanes)
        statistics(batch_pos)
    _fill_matches(connection, lanes, multi)
    if not plans.hashes_a_list(connection.dialect.name):
        _mark_own_rows(connection)
    statistics(batch_match, batch_own)


def _fill_ai(connection: Connection, records: Table, writes: Table) -> None:
    """Every AI write of the records, with its channel and its rank within it: a record's only AI write is a
    channel of its own; the writes of a record written more than once are ranked by their runs' users."""
    dialect = connection.dialect.name
    t, r = targets.target, records
    columns = [c.name for c in batch_ai.c]

    def writes_of() -> tuple[Join, FromClause]:
        return plans.inner_probe(
            dialect,
            r,
            t,
            and_(same_record(dialect, r, t), r.c.ai_writes > 1),
            (t.c.event_uid, t.c.run_uid, t.c.written_at),
            "ai",
        )

    def inserted(joined: Join, found: FromClause, channel: Any, rank: Any) -> None:
        due = exists(select(writes.c.event_uid).where(writes.c.event_uid == found.c.event_uid))
        rows = select(
            found.c.event_uid,
            found.c.run_uid,
            found.c.written_at,
            r.c.tablename,
            r.c.recuid,
            channel,
            rank,
            case((due, 1), else_=0),
            r.c.ai_writes,
        ).select_from(joined)
        rows = plans.by_index(dialect, plans.in_order(dialect, rows), t, "tx_runrecord_write_target_record")
        connection.execute(insert(batch_ai).from_select(columns, rows))

    # A record written once: its one AI write is the batch's own, read from the batch without a look-up.
    w = writes
    alone = select(
        w.c.event_uid,
        w.c.run_uid,
        w.c.written_at,
        r.c.tablename,
        r.c.recuid,
        w.c.event_uid,
        literal(1),
        literal(1),
        r.c.ai_writes,
    ).select_from(r.join(w, and_(same_record(dialect, r, w), r.c.ai_writes <= 1)))
    connection.execute(insert(batch_ai).from_select(columns, plans.in_order(dialect, alone)))
    joined, found = writes_of()
    joined, writer = plans.outer_probe(
        dialect,
        joined,
        schema.agentrun,
        schema.agentrun.c.uid == found.c.run_uid,
        (schema.agentrun.c.uid, schema.agentrun.c.be_user),
        "writer",
    )
    # The writes of one record by runs of one backend user share a channel; a write whose run is gone has
    # one of its own. be_user only partitions here: it is never selected out of the statement.
    # One partition and order for both windows: one sort. The record by its integer key, cheaper to compare
    # than its table name and uid. The channel is the first write's event uid: a frame up to the current row
    # (SQLite's two windows took 9 ms a batch with the minimum over the whole partition, 5 ms with this).
    partition = [r.c.record_key, writer.c.be_user]
    order = (found.c.written_at, found.c.event_uid)
    same_user = func.first_value(found.c.event_uid).over(
        partition_by=partition, order_by=order, rows=(None, 0)
    )
    rank = func.row_number().over(partition_by=partition, order_by=order)
    gone = writer.c.uid.is_(None)
    inserted(joined, found, case((gone, found.c.event_uid), else_=same_user), case((gone, 1), else_=rank))


def _channels_grouped(connection: Connection) -> bool:
    """Whether a history row finds its writer's channel in the record's channels grouped by user, built once
    (plans.probes_grouped_subquery), rather than by asking the record's channels one by one.

    MariaDB asks them one by one, unless the batch's records written by several users have MANY_CHANNELS on
    average: each row there looked a run up for every channel of its record."""
    if plans.probes_grouped_subquery(connection.dialect.name):
        return True
    w = batch_writer.c
    channels, records = connection.execute(
        select(func.coalesce(func.sum(w.channels), 0), func.count()).where(w.channels > 1)
    ).one()
    return bool(records) and channels >= MANY_CHANNELS * records


def _fill_history(connection: Connection, *, automation: bool, grouped: bool) -> None:
    dialect = connection.dialect.name
    h, r, run, c = schema.sys_history, batch_writer, schema.agentrun, batch_channel
    # A record with one channel: its run, looked up once for all the record's rows.
    single_run = run.alias("single_run")
    joined, single = plans.outer_probe(
        dialect,
        r,
        single_run,
        and_(r.c.channels == 1, single_run.c.uid == r.c.run_uid),
        (single_run.c.uid, single_run.c.be_user),
        "single",
    )
    joined, found = plans.inner_probe(
        dialect,
        joined,
        h,
        same_record(dialect, r, h),
        (
            h.c.uid,
            h.c.recuid,
            h.c.tstamp,
            h.c.actiontype,
            h.c.usertype,
            h.c.userid,
            h.c.workspace,
            h.c.correlation_id,
        ),
        "history",
    )
    userid = backend_userid(found)
    # A record several backend users wrote: the channel of the writes whose backend user wrote the row.
    if grouped:
        # The record's channels by user, built once with a key: one probe per row, not a look-up of every
        # channel's run (a hot record written by forty users: forty for each of its rows). Each channel's
        # run is looked up by its key (PostgreSQL: a fenced probe; as a plain join it hashed every run of
        # the installation for a night's few hundred channels, measured).
        writer_run = run.alias("writer_run")
        with_run, writer = plans.inner_probe(
            dialect, c, writer_run, writer_run.c.uid == c.c.run_uid, (writer_run.c.be_user,), "writer_run"
        )
        writers = (
            select(
                c.c.tablename,
                c.c.recuid,
                writer.c.be_user.label("userid"),
                func.min(c.c.channel).label("channel"),
            )
            .select_from(with_run)
            .group_by(*record_partition(dialect, c), writer.c.be_user)
            .subquery("writers")
        )
        # The row's record is its writer's (r): compared by our own names, which MariaDB keeps in ASCII
        # (own_rows_scratch), the batch's index is probed; a sys_history name cannot probe it.
        on = and_(r.c.channels > 1, same_record(dialect, r, writers), writers.c.userid == userid)
        joined = joined.outerjoin(writers, on)
        shared: ColumnElement[Any] = writers.c.channel
    else:
        shared = (
            select(func.min(c.c.channel))
            .select_from(c.join(run, run.c.uid == c.c.run_uid))
            .where(same_record(dialect, r, c), run.c.be_user == userid)  # r: as above
            .scalar_subquery()
        )
    # A workspace's row changed the live record where a live row of the record was inserted before it and no
    # publish row after it (core.workspaces): asked of a workspace's rows alone. (As windows over the
    # record's rows, MariaDB 10.11 read them wrongly where the lane below repeats them beside a subquery.)
    p, b = h.alias("publish"), h.alias("live_before")
    published_after = (
        select(literal(1))
        .where(
            same_record(dialect, r, p),
            p.c.actiontype == Action.PUBLISH.value,
            func.coalesce(p.c.workspace, 0) == 0,
            p.c.uid > found.c.uid,
        )
        .exists()
    )
    live_before = (
        select(literal(1))
        .where(same_record(dialect, r, b), func.coalesce(b.c.workspace, 0) == 0, b.c.uid < found.c.uid)
        .exists()
    )
    workspace = func.coalesce(found.c.workspace, 0)
    live = case((workspace == 0, 1), (published_after, 0), (live_before, 1), else_=0)
    by_automation = automation_row(found) if automation else literal(0)
    by_single = case((single.c.be_user == userid, r.c.channel))
    channel = case((r.c.channels == 1, by_single), else_=shared)
    scope = run_scope(dialect, found.c.correlation_id)
    # min(uid + 0): PostgreSQL, without statistics of the runs, read min(uid) as a walk of the primary key
    # until a run of that uuid came, every run for each row; min(uid + 0) is read through the uuid's index.
    first_run = select(func.min(run.c.uid + 0)).where(run.c.uuid == scope).scalar_subquery()
    named = case((scope.is_not(None), first_run))
    # One level, the window beside the row's own columns: a row's channel is asked only for its lane, and a
    # run a row names only where its correlation id has a run's scope (no row of today's nr-llm).
    lane = case((_is_candidate(live, found.c.actiontype), func.coalesce(-named, channel)))
    # The writer's table name, equal to the row's: MariaDB computes the window over rows as wide as their
    # declared types, and sys_history's name is four times ours (140 ms against 176 ms a batch, measured).
    columns = (found.c.uid, r.c.tablename, found.c.recuid, found.c.tstamp, found.c.actiontype)
    named_columns = (live.label("live"), by_automation.label("automation"), named.label("named_run"))
    carried = [*columns, *named_columns, lane.label("lane")]
    names = [column.name for column in batch_history.c if column.name not in ("floor", "floor_block")]
    # The record's smallest channel is an event uid of its own: an integer partition, cheaper to compare
    # than the table name and uid.
    if not plans.recomputes_window_max(dialect):
        floor = func.max(found.c.tstamp).over(partition_by=r.c.channel, order_by=found.c.uid, rows=(None, 0))
        rows = select(*carried, floor).select_from(joined)
        rows = plans.by_index(dialect, plans.in_order(dialect, rows), h, HISTORY_INDEX)
        connection.execute(insert(batch_history).from_select([*names, "floor"], rows))
        return
    number = func.row_number().over(partition_by=r.c.channel, order_by=found.c.uid)
    numbered = select(*carried, r.c.channel.label("channel"), number.label("n")).select_from(joined)
    inner = plans.by_index(dialect, plans.in_order(dialect, numbered), h, HISTORY_INDEX).subquery("numbered")
    block = (inner.c.n - 1) // BLOCK_ROWS
    floor = func.max(inner.c.tstamp).over(
        partition_by=[inner.c.channel, block], order_by=inner.c.uid, rows=(None, 0)
    )
    rows = select(*(inner.c[name] for name in names), floor, block)
    connection.execute(insert(batch_history).from_select([*names, "floor", "floor_block"], rows))
    _carry_floors(connection)


def _carry_floors(connection: Connection) -> None:
    """Raise the floor of each block of a record's rows to the greatest stamp of its earlier blocks, where
    the floor was taken within blocks (plans.recomputes_window_max). Only a block whose first floor lies
    below that stamp changes: one holding a row stamped before a row of an earlier block."""
    dialect = connection.dialect.name
    h, k = batch_history, batch_floor_carry
    name = exact(dialect, h.c.tablename)
    tops = (
        select(
            name.label("tablename"),
            h.c.recuid,
            h.c.floor_block,
            func.min(h.c.floor).label("low"),
            func.max(h.c.floor).label("top"),
        )
        .group_by(name, h.c.recuid, h.c.floor_block)
        .subquery("tops")
    )
    # Over a record's blocks, not its rows: (n / BLOCK_ROWS)² / 2 steps.
    earlier = func.max(tops.c.top).over(
        partition_by=[tops.c.tablename, tops.c.recuid], order_by=tops.c.floor_block, rows=(None, -1)
    )
    blocks = select(tops.c.tablename, tops.c.recuid, tops.c.floor_block, tops.c.low, earlier.label("carry"))
    raised = blocks.subquery("raised")
    rows = select(raised.c.tablename, raised.c.recuid, raised.c.floor_block, raised.c.carry).where(
        raised.c.carry > raised.c.low
    )
    columns = ["tablename", "recuid", "floor_block", "carry"]
    if connection.execute(insert(k).from_select(columns, rows)).rowcount == 0:
        return
    # Each row of a later block asks for its block's carry by key: as a join, MariaDB read every row of the
    # record for each block carried (0.86 s for 410 rows of records of 6,000 rows, measured).
    carry = (
        select(k.c.carry)
        .where(same_record(dialect, k, h), k.c.floor_block == h.c.floor_block)
        .scalar_subquery()
    )
    connection.execute(update(h).where(h.c.floor_block > 0, h.c.floor < carry).values(floor=carry))


@dataclass(frozen=True)
class _Lanes:
    """Each AI write with its lane and its rank i (by written_at, event uid) within the lane: batch_ai itself
    where no row of the batch names a run (a write's lane is then its channel), else batch_lane."""

    table: Table
    lane: ColumnElement[int]
    rank: ColumnElement[int]
    # A channel is the event uid of one write, so it names its record too; a named run's lane (minus the
    # run's uid) does not.
    channels_only: bool

    def partition(self, dialect: str, rows: Any) -> list[ColumnElement[Any]]:
        """PARTITION BY one lane of `rows` (with tablename, recuid and lane columns): by the lane alone where
        every lane is a channel, an integer where the record's key is a table name byte for byte (MariaDB's
        sort keys of the candidates of the `fanout` shape's hot records were 256 bytes and more: numbering
        them took 3.7 s against 4.5 s, their writes' positions 1.2 s against 1.7 s, measured)."""
        if self.channels_only:
            return [rows.c.lane]
        return [*record_partition(dialect, rows), rows.c.lane]


def _fill_lanes(connection: Connection) -> _Lanes:
    dialect = connection.dialect.name
    h = batch_history
    # Rule 3: a write whose run rows of the record name is matched among those rows; every other write in
    # its channel. Where no row of the batch names a run (nr-llm sets no correlation scope today), every
    # write's lane is its channel, ranked already.
    a, n = batch_ai, batch_named
    if connection.execute(select(h.c.uid).where(h.c.named_run.is_not(None)).limit(1)).first() is None:
        return _Lanes(a, a.c.channel, a.c.channel_rank, channels_only=True)
    name = exact(dialect, h.c.tablename)
    named = (
        select(name.label("tablename"), h.c.recuid, h.c.named_run)
        .where(h.c.named_run.is_not(None))
        .group_by(name, h.c.recuid, h.c.named_run)
    )
    connection.execute(insert(batch_named).from_select(["tablename", "recuid", "named_run"], named))
    lane = case((n.c.named_run.is_not(None), -a.c.run_uid), else_=a.c.channel)
    rank = func.row_number().over(
        partition_by=[*record_partition(dialect, a), lane], order_by=(a.c.written_at, a.c.event_uid)
    )
    lanes = select(a.c.event_uid, a.c.tablename, a.c.recuid, a.c.written_at, a.c.due, lane, rank).select_from(
        a.outerjoin(n, and_(same_record(dialect, a, n), n.c.named_run == a.c.run_uid))
    )
    connection.execute(insert(batch_lane).from_select([c.name for c in batch_lane.c], lanes))
    return _Lanes(batch_lane, batch_lane.c.lane, batch_lane.c.rank, channels_only=False)


def _fill_candidates(connection: Connection, lanes: _Lanes) -> bool:
    """The lanes with more than one write, and their rows numbered; whether there are any."""
    dialect = connection.dialect.name
    w = lanes.table
    name = exact(dialect, w.c.tablename)
    multi = (
        select(name.label("tablename"), w.c.recuid, lanes.lane.label("lane"))
        .where(lanes.rank > 1)
        .group_by(name, w.c.recuid, lanes.lane)
    )
    connection.execute(insert(batch_multi).from_select(["tablename", "recuid", "lane"], multi))
    if connection.execute(select(batch_multi.c.lane).limit(1)).first() is None:
        return False
    h, x = batch_history, batch_multi
    number = func.row_number().over(partition_by=lanes.partition(dialect, h), order_by=h.c.uid)
    candidates = select(
        h.c.tablename, h.c.recuid, h.c.lane, number, h.c.floor, h.c.uid, h.c.actiontype
    ).select_from(x.join(h, and_(same_record(dialect, x, h), h.c.lane == x.c.lane)))
    candidates = plans.in_order(dialect, candidates)
    connection.execute(insert(batch_candidate).from_select([c.name for c in batch_candidate.c], candidates))
    return True


def _moment(writes: Table) -> ColumnElement[int]:
    """W's moment (rule 3): a row inserted by then has an insertion floor at most this."""
    return writes.c.written_at + SAME_SAVE_S


def _bound(lanes: _Lanes) -> ColumnElement[int]:
    """The latest insertion floor of a lane's rows a write may take: W's moment (rule 3), none for a named
    run (its rows are its own whatever their stamps)."""
    return case((lanes.lane < 0, NO_FLOOR), else_=_moment(lanes.table))


def _fill_positions(connection: Connection, lanes: _Lanes) -> None:
    """p_i and the greedy pos_i = min over j >= i of (p_j - (j - i)) (core.own_rows.match_own_rows), for the
    writes of the lanes with more than one write."""
    dialect = connection.dialect.name
    w, c, x = lanes.table, batch_candidate, batch_multi
    bound = _bound(lanes)
    lane_writes = w.join(x, and_(same_record(dialect, w, x), x.c.lane == lanes.lane))
    written = (w.c.event_uid, w.c.tablename, w.c.recuid, lanes.lane.label("lane"), lanes.rank.label("rank"))
    if not plans.counts_lane_positions(dialect):
        # The lane's rows inserted by W's moment: the last of them in (floor, n) order is the p-th, one seek.
        inserted = (
            select(c.c.n)
            .where(same_record(dialect, w, c), c.c.lane == lanes.lane, c.c.floor <= bound)
            .order_by(c.c.floor.desc(), c.c.n.desc())
            .limit(1)
            .scalar_subquery()
        )
        p: ColumnElement[Any] = func.coalesce(inserted, 0)
        counted = plans.fenced(dialect, select(*written, p.label("p")).select_from(lane_writes)).subquery(
            "counted"
        )
    else:
        counted = _counted_positions(dialect, lane_writes, written, bound)
    partition = lanes.partition(dialect, counted)
    # min over j >= i, taken from the lane's last write back: a frame whose start never moves (PostgreSQL
    # computes MIN afresh for every row whose frame starts later than the last row's: one lane of 10,000
    # writes 2.6 s, of 40,000 writes 48 s, against 0.006 s and 0.026 s from the last back, measured).
    gap = counted.c.p - counted.c.rank
    # Where MIN is recomputed for every row, within blocks of the lane's writes, lowered by the later blocks.
    blocked = plans.recomputes_window_max(dialect)
    if blocked:
        partition.append((counted.c.rank - 1) // BLOCK_ROWS)
    left = func.min(gap).over(partition_by=partition, order_by=counted.c.rank.desc(), rows=(None, 0))
    positions = select(counted.c.event_uid, counted.c.p, counted.c.rank + left)
    connection.execute(insert(batch_pos).from_select(["event_uid", "p", "pos"], positions))
    if blocked:
        _carry_positions(connection, lanes)


def _counted_positions(
    dialect: str, lane_writes: Join, written: tuple[ColumnElement[Any], ...], bound: ColumnElement[Any]
) -> Subquery:
    """The writes of the lanes with more than one write with p_i counted, not sought: p_i the lane's rows
    before the write when its rows go by floor and its writes by W's moment (`_summed_before`). A lane's
    floors never fall along n, so its rows inserted by W's moment are its first p_i rows, and the last of them
    in (floor, n) order is the p_i-th."""
    c = batch_candidate
    rows = select(
        literal(0).label("event_uid"),
        c.c.tablename,
        c.c.recuid,
        c.c.lane,
        literal(0).label("rank"),
        c.c.floor.label("at"),
        literal(0).label("kind"),
        c.c.uid,
        literal(1).label("step"),
    )
    writes = select(
        *written,
        bound.label("at"),
        literal(1).label("kind"),
        literal(0).label("uid"),
        literal(0).label("step"),
    ).select_from(lane_writes)
    return _summed_before(dialect, rows, writes, ("lane",), "p")


def _summed_before(
    dialect: str, rows: Select[Any], writes: Select[Any], within: tuple[str, ...], total: str
) -> Subquery:
    """Each write of `writes` with the sum of the steps of the `rows` before it, as `total`. `rows` and
    `writes` have the same columns: a record's tablename and recuid, those named in `within`, any others
    carried, then `at`, `kind` (0 a row, 1 a write), `uid` and `step`. They go in one order per record and
    `within`: by `at`, a row before a write at the same value, rows by uid. A running SUM, which every engine
    carries along its frame (a running MAX MariaDB recomputes for every row: plans.recomputes_window_max)."""
    merged = union_all(rows, writes).subquery("merged")
    m = merged.c
    before = func.sum(m.step).over(
        partition_by=[*record_partition(dialect, merged), *(m[name] for name in within)],
        order_by=(m.at, m.kind, m.uid),
        rows=(None, 0),
    )
    carried = [column for column in m if column.name not in ("at", "kind", "uid", "step")]
    summed = select(*carried, m.kind, before.label(total)).subquery("summed")
    kept = [summed.c[column.name] for column in carried]
    return select(*kept, summed.c[total]).where(summed.c.kind == 1).subquery("counted")


def _carry_positions(connection: Connection, lanes: _Lanes) -> None:
    """Lower each write's pos_i to i + the least p_j - j of its lane's later blocks, where the minimum was
    taken within blocks (plans.recomputes_window_max). A block's gaps pos_i - i grow along it, so only a
    block whose last gap lies above that least gap changes."""
    dialect = connection.dialect.name
    w, pos, k = lanes.table, batch_pos, batch_pos_carry
    name = exact(dialect, w.c.tablename)
    block = (lanes.rank - 1) // BLOCK_ROWS
    gap = pos.c.pos - lanes.rank
    tops = (
        select(
            name.label("tablename"),
            w.c.recuid,
            lanes.lane.label("lane"),
            block.label("block"),
            func.min(gap).label("low"),
            func.max(gap).label("top"),
        )
        .select_from(pos.join(w, w.c.event_uid == pos.c.event_uid))
        .group_by(name, w.c.recuid, lanes.lane, block)
        .subquery("tops")
    )
    # Over a lane's blocks, not its writes: (n / BLOCK_ROWS)² / 2 steps.
    later = func.min(tops.c.low).over(
        partition_by=[tops.c.tablename, tops.c.recuid, tops.c.lane], order_by=tops.c.block, rows=(1, None)
    )
    lowered = select(*tops.c, later.label("carry")).subquery("lowered")
    rows = select(
        lowered.c.tablename, lowered.c.recuid, lowered.c.lane, lowered.c.block, lowered.c.carry
    ).where(lowered.c.carry < lowered.c.top)
    columns = ["tablename", "recuid", "lane", "block", "carry"]
    if connection.execute(insert(k).from_select(columns, rows)).rowcount == 0:
        return
    connection.execute(
        update(pos)
        .where(
            pos.c.event_uid == w.c.event_uid,
            same_record(dialect, k, w),
            k.c.lane == lanes.lane,
            k.c.block == block,
            gap > k.c.carry,
        )
        .values(pos=lanes.rank + k.c.carry)
    )


def _fill_matches(connection: Connection, lanes: _Lanes, multi: bool) -> None:
    """Each write's own row: the pos_i-th row of its lane (lanes of several writes), the last row of its lane
    inserted by its moment (a lane of one write: pos = p); whether it cannot be told (pos < 1 <= p); and its
    boundary, the own row or else the last row of the record inserted by W's moment."""
    dialect = connection.dialect.name
    w = lanes.table
    columns = [c.name for c in batch_match.c]
    moment = _moment(w)
    if multi:
        p, c = batch_pos, batch_candidate
        rows = select(
            w.c.event_uid,
            w.c.tablename,
            w.c.recuid,
            w.c.written_at,
            w.c.due,
            c.c.uid,
            c.c.actiontype,
            case((and_(p.c.pos < 1, p.c.p >= 1), 1), else_=0),
            func.coalesce(c.c.uid, 0),
            # Every row after the last one inserted by W's moment has a floor beyond that moment.
            func.coalesce(c.c.floor, moment),
        ).select_from(
            w.join(p, p.c.event_uid == w.c.event_uid).outerjoin(
                c, and_(same_record(dialect, w, c), c.c.lane == lanes.lane, c.c.n == p.c.pos)
            )
        )
        connection.execute(insert(batch_match).from_select(columns, rows))
    connection.execute(insert(batch_match).from_select(columns, _single_lanes(dialect, lanes)))
    _fill_evidence(connection)


def _single_lanes(dialect: str, lanes: _Lanes) -> Select[Any]:
    """The own row of each write alone in its lane: the last of the lane's rows inserted by its moment, the
    one with the greatest uid (the floor never falls along the uids)."""
    w, x, h = lanes.table, batch_multi, batch_history
    alone = and_(same_record(dialect, w, x), x.c.lane == lanes.lane)
    inserted = and_(same_record(dialect, w, h), h.c.lane == lanes.lane, h.c.floor <= _bound(lanes))
    write = (w.c.event_uid, w.c.tablename, w.c.recuid, w.c.written_at, w.c.due)
    moment = _moment(w)
    if plans.seeks_last_per_row(dialect):
        # One seek at the end of the lane's range of the index, and the row read by its rowid.
        last = select(plans.sqlite_rowid(h)).where(inserted).order_by(h.c.floor.desc(), h.c.uid.desc())
        found = (
            select(*write, moment.label("moment"), last.limit(1).scalar_subquery().label("row"))
            .select_from(w.outerjoin(x, alone))
            .where(x.c.lane.is_(None))
            .subquery("found")
        )
        own = h.alias("own")
        return select(
            *(found.c[column.name] for column in write),
            own.c.uid,
            own.c.actiontype,
            literal(0),
            func.coalesce(own.c.uid, 0),
            func.coalesce(own.c.floor, found.c.moment),
        ).select_from(found.outerjoin(own, plans.sqlite_rowid(own) == found.c.row))
    # Read in one grouped join: its action packed beside the uid in one integer (an action code is below
    # ACTION_CODES).
    greatest = func.max(cast(h.c.uid, BigInteger) * ACTION_CODES + h.c.actiontype)
    single = (
        select(
            *write,
            greatest // ACTION_CODES,
            greatest % ACTION_CODES,
            literal(0),
            func.coalesce(greatest // ACTION_CODES, 0),
            func.coalesce(func.max(h.c.floor), moment),
        )
        .select_from(w.outerjoin(x, alone).outerjoin(h, inserted))
        .where(x.c.lane.is_(None))
        # By the write's key alone, on which its other columns depend: MariaDB then reads the writes in key
        # order without sorting them (86 ms against 80 ms a batch of 10,000 runs).
        .group_by(w.c.event_uid)
    )
    # MariaDB read the rows through the floor's index, every row of the record for each write (58 ms against
    # 44 ms for a batch of 10,000 writes at scale 0.05); the lane's index gives the lane's rows.
    single = plans.by_index(dialect, single, h, "tx_runrecord_batch_history_lane")
    return plans.in_order(dialect, single)


def _fill_evidence(connection: Connection) -> None:
    """The boundary of each due write without an own row: the last row of the record inserted by W's moment
    (any row, any writer), else none (0); the rows after it were inserted after W. It is evidence only where
    W's own row cannot be told (rule 3; adapters.derive_batch). Only a due write's boundary is read (its
    window, its facts and deciders); a write of the batch's records that is not due keeps 0."""
    dialect = connection.dialect.name
    m, h = batch_match, batch_history
    # Only the due writes are asked: seeking a hot record's rows for the writes that are not due cost MariaDB
    # 0.15 s a batch at scale 0.05 of the wide shape, for a boundary unread.
    asked = and_(m.c.own_uid.is_(None), m.c.due == 1)
    if not plans.seeks_below_outer_bound(dialect):
        # Counted in a pass over every history row of the batch: not at all where each due write has its own
        # row (0.44 s for three batches with none, MariaDB's default shape at 0.05, measured).
        if connection.execute(select(m.c.event_uid).where(asked).limit(1)).first() is None:
            return
        _count_evidence(connection, asked)
        e = batch_evidence
        found = select(e.c.boundary).where(e.c.event_uid == m.c.event_uid).scalar_subquery()
        connection.execute(update(m).where(asked).values(boundary=func.coalesce(found, 0)))
        return
    last_inserted = (
        select(h.c.uid)
        .where(same_record(dialect, m, h), h.c.floor <= _moment(m))
        .order_by(h.c.floor.desc(), h.c.uid.desc())
        .limit(1)
        .scalar_subquery()
    )
    connection.execute(update(m).where(asked).values(boundary=func.coalesce(last_inserted, 0)))


def _count_evidence(connection: Connection, asked: ColumnElement[bool]) -> None:
    """Each asked write's boundary found in one pass, not sought: the record's rows by floor and uid and the
    writes by W's moment (`_summed_before`). A record's floors never fall along its uids, so the rows inserted
    by W's moment come first, and the last of them is the boundary; its uid is the sum of each row's step from
    the row before it."""
    dialect = connection.dialect.name
    m, h = batch_match, batch_history
    previous = func.lag(h.c.uid).over(
        partition_by=record_partition(dialect, h), order_by=(h.c.floor, h.c.uid)
    )
    rows = select(
        literal(0).label("event_uid"),
        h.c.tablename,
        h.c.recuid,
        h.c.floor.label("at"),
        literal(0).label("kind"),
        h.c.uid,
        (h.c.uid - func.coalesce(previous, 0)).label("step"),
    )
    writes = select(
        m.c.event_uid,
        m.c.tablename,
        m.c.recuid,
        _moment(m).label("at"),
        literal(1).label("kind"),
        literal(0).label("uid"),
        literal(0).label("step"),
    ).where(asked)
    found = _summed_before(dialect, rows, writes, (), "boundary")
    evidence = select(found.c.event_uid, found.c.boundary)
    connection.execute(insert(batch_evidence).from_select(["event_uid", "boundary"], evidence))


def _mark_own_rows(connection: Connection) -> None:
    """Every write's own row is an AI row, for every write of its record (rules 3 and 4)."""
    m = batch_match
    own = select(m.c.own_uid).where(m.c.own_uid.is_not(None)).distinct()
    connection.execute(insert(batch_own).from_select(["uid"], own))
