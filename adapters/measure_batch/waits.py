"""The user messages sent while an approval waited (core.waits, core.go_on): those a wait may hold or a
runFinishedOutside line answers, their texts for core.claims.is_go_on, the approval waits of the runs where
one of them counts (core.waits.needs_waits), and where each message stands in them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Connection,
    Select,
    and_,
    case,
    exists,
    func,
    insert,
    literal,
    null,
    or_,
    select,
    update,
)

from adapters import schema
from adapters.dialect import bulk, plans
from adapters.dialect import documents as doc
from adapters.measure_batch import scratch
from adapters.measure_batch.messages import message_texts
from adapters.measure_batch.scratch import flag
from core.error_codes import Notice
from core.events import EventKind
from core.run_status import RunStatus
from core.transcript import Role

event = schema.agentrun_event


def _waiting_runs() -> Any:
    n, run = scratch.named.c, scratch.run.c
    return scratch.named.join(scratch.run, and_(run.uid == n.run_uid, run.waited == 1))


def fill_user_messages(connection: Connection) -> None:
    """The user messages (a readable one by the payload's role, an unreadable one by the row's) that a wait
    of their conversation's runs may hold, or that a runFinishedOutside line answers: the only ones
    core.go_on counts, and the only texts `go_on_texts` hands over.

    A wait runs from an event of its run to a later one, or on from the run's last event while it waits:
    a message outside the span of every waiting run's events (core.measured_runs' counts: first and last
    event) is inside none of their waits, so the waits themselves are read only where a message the text
    rule said is a "go on" (or one that cannot be read) needs them (`fill_waits`, `place_user_messages`;
    core.waits.needs_waits)."""
    d = connection.dialect.name
    m = scratch.message.c
    following = scratch.message.alias("following")
    f = following.c
    n, run, k = scratch.named.c, scratch.run.c, scratch.count.c
    line = Notice.RUN_FINISHED_OUTSIDE.value
    next_notice = (
        select(f.notice)
        .where(f.conversation == m.conversation, f.sorting > m.sorting)
        .order_by(f.sorting)
        .limit(1)
        .scalar_subquery()
    )
    carries = func.coalesce(doc.exact(d, m.notice) == line, False) | func.coalesce(
        doc.exact(d, next_notice) == line, False
    )
    waiting_runs = _waiting_runs()
    spanned = exists(
        select(literal(1))
        .select_from(waiting_runs.join(scratch.count, k.run == run.uid))
        .where(
            n.conversation == m.conversation,
            k.first_event_at <= m.crdate,
            or_(m.crdate <= k.last_event_at, run.status == RunStatus.WAITING_FOR_APPROVAL.value),
        )
    )
    started_before = exists(
        select(literal(1))
        .select_from(waiting_runs)
        .where(n.conversation == m.conversation, run.started_at <= m.crdate)
    )
    unreadable = and_(m.readable == 0, doc.exact(d, m.role_column) == Role.USER.value)
    query = select(m.uid, m.conversation, m.sorting, m.crdate, flag(unreadable), flag(carries)).where(
        or_(and_(m.readable == 1, m.role == Role.USER.value), unreadable),
        or_(spanned, and_(carries, started_before)),
    )
    columns = ["message_uid", "conversation", "sorting", "crdate", "unreadable", "line"]
    connection.execute(insert(scratch.user).from_select(columns, query))
    scratch.analyze(connection, scratch.user)


def counted_run(u: Any) -> ColumnElement[Any]:
    """core.go_on._waiting_run: the run whose wait holds the message; with a runFinishedOutside line, else
    the last run that waited and started before it."""
    return func.coalesce(u.inside_run, case((u.line == 1, u.run_before)))


def go_on_texts(connection: Connection) -> list[tuple[int, str]]:
    """The readable user messages a wait may hold or a runFinishedOutside line answers (`fill_user_messages`):
    uid and text, for core.claims.is_go_on."""
    u = scratch.user.c
    chosen = select(u.message_uid).where(u.unreadable == 0)
    return [(int(row[0]), str(row[1] or "")) for row in message_texts(connection, chosen)]


def _placed(u: Any) -> ColumnElement[bool]:
    """The user messages core.go_on counts where a wait holds them: a "go on", or one that cannot be read."""
    said = exists(select(literal(1)).where(scratch.go_on.c.message_uid == u.message_uid))
    return or_(u.unreadable == 1, said)


def save_go_on(connection: Connection, uids: Sequence[int]) -> None:
    """The user messages whose whole text is a "go on" phrase."""
    bulk.insert_rows(connection, scratch.go_on, ["message_uid"], [(uid,) for uid in uids])
    scratch.analyze(connection, scratch.go_on)


def _earlier(probe: Any, ev: Any) -> ColumnElement[bool]:
    """The probed event comes before `ev` in its run's order (core.waits: by sequence, then uid)."""
    return and_(
        probe.run == ev.run,
        or_(probe.sequence < ev.sequence, and_(probe.sequence == ev.sequence, probe.uid < ev.uid)),
    )


def fill_waits(connection: Connection) -> None:
    """core.waits.approval_waits of the runs that waited: from the event before each approval event up to
    it, and from the last event on while the status is waiting_for_approval.

    Only for the runs of conversations with a user message whose placement counts (`_placed`; after
    `save_go_on`): every other wait changes no count (core.waits.needs_waits). The approval events are
    looked up by uid, between the first and the last of each run's (as the counts found them), not found
    among all of its events again. Each bound is then one probe of the (run, sequence) index per approval
    event or per waiting run, in the index's own order (the uid breaks ties, as it does in core.waits): no
    window over the runs' events, which would sort every event of every run that waited, twice."""
    d = connection.dialect.name
    run, k, n, u = scratch.run.c, scratch.count.c, scratch.named.c, scratch.user.c
    needed = (
        select(n.run_uid)
        .select_from(scratch.named.join(scratch.user, u.conversation == n.conversation))
        .where(_placed(u))
    )
    e = event.c
    on = and_(
        e.uid.between(k.first_approval, k.last_approval),
        e.run == k.run,
        e.kind == EventKind.APPROVAL.value,
    )
    # The runs that need their waits first, as a table of their own: as `IN (…)` MariaDB flattened it into a
    # semi-join, ordered the events before the counts, and read every event of the installation (0.8 s
    # against 0.02 s at scale 0.02 of the wide shape, measured, depending on the events' statistics).
    runs = needed.distinct().subquery("needed")
    joined, found = plans.inner_probe(
        d,
        runs.join(scratch.count, k.run == runs.c.run_uid),
        event,
        on,
        [e.uid, e.run, e.sequence, e.crdate],
        "approval",
    )
    ev = found.c
    # The event before it: found in the (run, sequence) index alone (its uid is in every dialect's index
    # entry), and only that one row read for its crdate (the condition on uid is no index condition, so a
    # row read for it would be every event of the run: 13 rows per approval, measured on MariaDB).
    before_approval = event.alias("before_approval")
    before = before_approval.c
    previous_uid = (
        select(before.uid)
        .where(_earlier(before, ev))
        .order_by(before.sequence.desc(), before.uid.desc())
        .limit(1)
        .correlate_except(before_approval)
        .scalar_subquery()
    )
    previous = event.alias("previous").c
    started = select(previous.crdate).where(previous.uid == previous_uid).scalar_subquery()
    columns = ["run_uid", "started", "ended"]
    steps: Select[Any] = (
        select(ev.run.label("run"), started.label("started"), ev.crdate.label("ended"))
        .select_from(joined)
        .where(k.first_approval.is_not(None))
    )
    steps = plans.in_order(d, plans.by_index(d, steps, event, "run_sequence"))
    waits = plans.evaluated_once(steps).subquery("waits")
    # No event before it: no wait (core.waits pairs each approval with the event before it).
    approvals = select(waits.c.run, waits.c.started, waits.c.ended).where(waits.c.started.is_not(None))
    connection.execute(insert(scratch.wait).from_select(columns, approvals))
    last = event.alias("last_event").c
    final = (
        select(last.crdate)
        .where(last.run == run.uid)
        .order_by(last.sequence.desc(), last.uid.desc())
        .limit(1)
        .scalar_subquery()
    )
    still = select(run.uid, final, null()).where(
        run.waited == 1,
        run.uid.in_(needed),
        run.status == RunStatus.WAITING_FOR_APPROVAL.value,
        exists(select(literal(1)).where(last.run == run.uid)),
    )
    connection.execute(insert(scratch.wait).from_select(columns, still))
    scratch.analyze(connection, scratch.wait)


def place_user_messages(connection: Connection) -> None:
    """For the user messages that need it (`_placed`), the waits and runs core.waits and core.go_on place them
    by: the first run (by start) whose wait holds it, the last run that waited and started at or before it,
    and the next user message's crdate."""
    d = connection.dialect.name
    u = scratch.user.c
    m = scratch.message.c
    n, run, w = scratch.named.c, scratch.run.c, scratch.wait.c
    waiting_runs = _waiting_runs()
    inside = (
        select(run.uid)
        .select_from(waiting_runs.join(scratch.wait, w.run_uid == run.uid))
        .where(
            n.conversation == u.conversation,
            w.started <= u.crdate,
            or_(w.ended.is_(None), u.crdate <= w.ended),
        )
        .order_by(run.started_at, run.uid)
        .limit(1)
        .scalar_subquery()
    )
    before = (
        select(run.uid)
        .select_from(waiting_runs)
        .where(n.conversation == u.conversation, run.started_at <= u.crdate)
        .order_by(run.started_at.desc(), run.uid.desc())
        .limit(1)
        .scalar_subquery()
    )
    next_user = (
        select(m.crdate)
        .where(
            m.conversation == u.conversation,
            m.sorting > u.sorting,
            doc.exact(d, m.role_column) == Role.USER.value,
        )
        .order_by(m.sorting)
        .limit(1)
        .scalar_subquery()
    )
    connection.execute(
        update(scratch.user)
        .where(_placed(u))
        .values(inside_run=inside, run_before=before, next_user_at=next_user)
    )
