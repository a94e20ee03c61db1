"""The runs the batch's conversations name (core.answers.named_runs), the first of each uuid, and the counts
of their events (core.measured_runs): the one pass over the batch's events, whose counts answer the
verdicts' doubt and find the approval events by uid.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import (
    BigInteger,
    ColumnElement,
    Connection,
    Select,
    and_,
    case,
    exists,
    func,
    insert,
    literal,
    select,
    true,
    union,
    update,
)

from adapters import events, schema
from adapters.dialect import documents as doc
from adapters.dialect import json as sqljson
from adapters.dialect import plans
from adapters.dialect.names import POSTGRESQL
from adapters.measure_batch import scratch
from adapters.measure_batch.scratch import flag
from core.events import EventKind
from core.measured_runs import RUN_END_COLUMNS, RUN_START_COLUMNS
from core.run_status import FINISHED_STATUSES, RunStatus
from core.time import LATEST_STAMP

agentrun = schema.agentrun
event = schema.agentrun_event


def run_end() -> ColumnElement[Any]:
    """core.measured_runs.run_end of tx_nrllm_agentrun's columns."""
    r = agentrun.c
    latest = literal(LATEST_STAMP, BigInteger)  # past the int(11) columns' range: bound as a bigint
    return case(*((and_(r[name] > 0, r[name] < latest), r[name]) for name in RUN_END_COLUMNS), else_=0)


def run_start() -> ColumnElement[Any]:
    """core.measured_runs.run_start of tx_nrllm_agentrun's columns."""
    r = agentrun.c
    *first, last = RUN_START_COLUMNS
    return case(*((r[name] != 0, r[name]) for name in first), else_=r[last])


# The batch's events are read as one range of event uids (each event's run looked up among the batch's runs)
# where the dialect reads a key range faster (plans.reads_key_ranges) and that range holds at most this many
# events for each event of the batch's runs; otherwise run by run through the (run, sequence) index.
EVENT_SPAN = 3


def _event_span(dialect: str) -> Select[Any]:
    """How many events the batch's runs have, and the range of their uids (read from the index alone), each
    run's events probed in it: as `run IN (…)`, MariaDB read the whole index for a later batch, every event
    of the installation (349,692 entries, 92 ms, against 76 ms for the probes of 20,000 runs, measured)."""
    ev, run = event.c, scratch.run.c
    spanned: list[ColumnElement[Any]] = [func.count(), func.min(ev.uid), func.max(ev.uid)]
    probed = select(*spanned).select_from(scratch.run.join(event, ev.run == run.uid))
    return plans.keys_first(dialect, probed, scratch.run, event, "run_sequence")


def _batch_events(dialect: str, query: Select[Any], span: Any) -> Select[Any]:
    """`query` (over the event table, grouped by run) for the events of the batch's runs."""
    ev, run = event.c, scratch.run.c
    if dialect == POSTGRESQL:
        # Each run's events probed through the (run, sequence) index and counted in a LATERAL subquery, the
        # runs in uid order. As `run IN (…)` PostgreSQL read every event of the installation for a later
        # batch, or the index from its start up to the batch's runs: 3.5 million events, 313 ms of the
        # statement's 848 ms for the twelfth batch at the wide shape's 0.5 (measured), a pass over all events
        # for every batch. Counted per run and probed in the order the events were inserted, the wide
        # shape's 0.1 took 1.08-1.11 s for its four batches, against 1.30-1.38 s for the events of the runs
        # in the batch's order, grouped once (measured).
        ordered = select(run.uid).order_by(run.uid).subquery("batch_run")
        each = query.where(ev.run == ordered.c.uid).lateral("batch_event")
        return select(*each.c).select_from(ordered.join(each, true()))
    if span is None:
        # The runs' uids as a list the engine sorts once: their events are then read in the index's order
        # (a join read them in the order of the run table's uuid index, each run's events elsewhere).
        return query.where(ev.run.in_(select(run.uid)))
    spanned, low, high = span
    if spanned and high - low + 1 <= EVENT_SPAN * spanned:
        ranged = query.join_from(event, scratch.run, run.uid == ev.run)
        return plans.in_key_range(dialect, ranged, event, ev.uid, low, high)
    probed = query.join_from(scratch.run, event, ev.run == run.uid)
    return plans.keys_first(dialect, probed, scratch.run, event, "run_sequence")


def fill_runs(connection: Connection) -> None:
    """The runs the batch names (core.answers.named_runs), the first of each uuid, and their event counts."""
    d = connection.dialect.name
    s, msg, e = scratch.conversation.c, scratch.message.c, scratch.entry.c
    named_uuids = union(
        select(msg.conversation, msg.run_uuid).where(msg.readable == 1, msg.run_uuid != ""),
        select(s.uid, s.approval_run_uuid).where(s.approval_run_uuid != ""),
        select(e.conversation, e.run_uuid).where(e.run_uuid.is_not(None)),
    )
    connection.execute(insert(scratch.name).from_select(["conversation", "uuid"], named_uuids))
    scratch.analyze(connection, scratch.name)
    # Each uuid named looked up in the run table's uuid index, one probe per name: as `uuid IN (…)`, MariaDB
    # read every run of the installation for every batch and asked each whether it was the first of its
    # uuid (measured: the whole table per batch).
    names = select(scratch.name.c.uuid).distinct().subquery("names")
    r = agentrun.c
    ended = run_end()
    started = run_start()
    status = doc.exact(d, r.status)
    picked: list[ColumnElement[Any]] = [
        r.uid,
        r.uuid,
        r.status,
        func.coalesce(r.configuration_identifier, "").label("configuration"),
        ended.label("ended_at"),
        started.label("started_at"),
        flag(status.in_(sorted(FINISHED_STATUSES))).label("finished"),
        flag(status == RunStatus.WAITING_FOR_APPROVAL.value).label("waited"),
    ]
    if d == POSTGRESQL:
        # The uuid's runs in uid order, the first taken: one probe of the uuid's index where NOT EXISTS took
        # two (0.11 s against 0.24 s for 20,000 names, measured). By uid + 0: ordered by the uid itself, the
        # planner may walk the primary key until a run of the uuid comes (adapters.own_rows' first_run).
        lookup = select(*picked).where(r.uuid == names.c.uuid).order_by(r.uid + 0).limit(1).lateral("run")
        joined, picked = names.join(lookup, true()), list(lookup.c)
    else:
        earlier = agentrun.alias("earlier")
        first = ~exists(select(literal(1)).where(earlier.c.uuid == r.uuid, earlier.c.uid < r.uid))
        joined = names.join(agentrun, and_(r.uuid == names.c.uuid, first))
    runs = plans.in_order(d, plans.by_index(d, select(*picked).select_from(joined), agentrun, "run_uuid"))
    columns = ["uid", "uuid", "status", "configuration", "ended_at", "started_at", "finished", "waited"]
    connection.execute(insert(scratch.run).from_select(columns, runs))
    scratch.analyze(connection, scratch.run)
    ev = event.c
    is_approval = ev.kind == EventKind.APPROVAL.value
    columns = [
        "run",
        "events",
        "openers",
        "first_write_at",
        "first_write_sequence",
        "last_opener_sequence",
        "first_approval",
        "last_approval",
        "first_event_at",
        "last_event_at",
        "doubtful",
    ]
    span = connection.execute(_event_span(d)).one() if plans.reads_key_ranges(d) else None

    def count(guarded: bool) -> None:
        # The one pass over the batch's events: everything else measure-rates asks of them is answered from
        # these counts (the verdicts' doubt) or found through them (the approval events, by uid).
        # Whether a run has a tool_write or an approval event is whether it has a first one: neither is
        # summed (each sum an aggregate over every event of the batch, 7 ms for 210,000 events on
        # PostgreSQL, measured).
        counted, _writes, _approvals, openers, *firsts = events.count_columns()
        counts = select(
            ev.run,
            counted,
            openers,
            *firsts,
            func.min(case((is_approval, ev.uid))),
            func.max(case((is_approval, ev.uid))),
            func.min(ev.crdate),
            func.max(ev.crdate),
            func.sum(flag(events.doubtful(d, guarded=guarded))),
        ).group_by(ev.run)
        connection.execute(insert(scratch.count).from_select(columns, _batch_events(d, counts, span)))

    sqljson.cast_first(connection, count)
    k, run = scratch.count.c, scratch.run.c
    # core.measured_runs.RunRow.waited_for_approval: an approval event, or the status.
    connection.execute(
        update(scratch.run)
        .where(run.uid.in_(select(k.run).where(k.first_approval.is_not(None))))
        .values(waited=1)
    )
    n = scratch.name.c
    named = select(n.conversation, run.uid).select_from(scratch.name.join(scratch.run, run.uuid == n.uuid))
    connection.execute(insert(scratch.named).from_select(["conversation", "run_uid"], named))
    scratch.analyze(connection, scratch.count, scratch.named)
