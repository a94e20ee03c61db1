"""The health of an installation's chat as SQL reads it (core.health's rules judge it): the conversations in
a claimed status, the write steps still waiting for their observed outcome, and the health readings
watch-conversations stores in tx_runrecord_health.

SELECTs only on the chat's and nr-llm's tables: failing a stuck conversation is ai-chat:cleanup's job. The
oldest retained sys_history row is adapters.history.oldest_retained_tstamp, as the derivation finds it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, and_, case, exists, func, insert, or_, select

from adapters.measure_marks import not_a_number
from adapters.schema import agentrun, agentrun_event, conversation, write_outcome
from adapters.schema import health as health_table
from core import health as rules
from core.events import EventKind
from core.run_status import FINISHED_STATUSES, KNOWN_STATUSES


def claimed_conversations(connection: Connection) -> list[rules.ConversationState]:
    """The conversations in a claimed status (core.health.CLAIMED_STATUSES): uid, status, tstamp.

    Deleted conversations are out of every editor's sight and out of the cleanup's; be_user is never read.
    """
    c = conversation.c
    rows = connection.execute(
        select(c.uid, c.status, c.tstamp).where(c.status.in_(rules.CLAIMED_STATUSES), c.deleted == 0)
    )
    return [rules.ConversationState(int(r.uid), str(r.status), _stamp(r.uid, r.tstamp)) for r in rows]


def _stamp(uid: int, value: Any) -> int:
    """A conversation's tstamp as a number; a text or blob there (only SQLite keeps one in an INTEGER column)
    is refused naming its row, never quoting it."""
    if isinstance(value, str | bytes):
        raise not_a_number(conversation.c.tstamp, uid, value, then="check again")
    return int(value or 0)


def pending_writes(connection: Connection, *, now: int, window_s: int) -> tuple[int, int]:
    """Write steps up to `now` without an outcome row; and those overdue for derivation: of finished runs, or
    of runs whose status is none nr-llm writes (such a run never ends, so derive-outcomes never takes it). A
    run still running or waiting is derived once it ends (core.run_status.is_finished)."""
    event = agentrun_event
    tool_write = EventKind.TOOL_WRITE.value
    last_write = (
        select(event.c.run, func.max(event.c.crdate).label("last_at"))
        .where(event.c.kind == tool_write, event.c.crdate <= now)
        .group_by(event.c.run)
        .subquery()
    )
    late = last_write.c.last_at < rules.overdue_before(now, window_s)
    unknown = and_(agentrun.c.uid.is_not(None), func.coalesce(agentrun.c.status, "").not_in(KNOWN_STATUSES))
    ended = or_(agentrun.c.status.in_(sorted(FINISHED_STATUSES)), unknown)
    overdue = case((and_(late, ended), 1), else_=0)
    row = connection.execute(
        select(func.count(), func.coalesce(func.sum(overdue), 0))
        .select_from(
            event.join(last_write, last_write.c.run == event.c.run).outerjoin(
                agentrun, agentrun.c.uid == event.c.run
            )
        )
        .where(
            event.c.kind == tool_write,
            event.c.crdate <= now,
            ~exists().where(write_outcome.c.event_uid == event.c.uid),
        )
    ).one()
    return int(row[0]), int(row[1])


# --- the stored readings ------------------------------------------------------------------------------------


def store(connection: Connection, reading: rules.Health) -> None:
    """Write the reading as one tx_runrecord_health row."""
    connection.execute(insert(health_table).values(**health_row(reading)))


def health_row(reading: rules.Health) -> dict[str, Any]:
    """The tx_runrecord_health row of a reading."""
    return {
        "checked_at": reading.checked_at,
        "status": reading.status,
        "stuck_conversations": len(reading.stuck),
        "stuck_since": reading.stuck_since,
        "oldest_history": reading.horizon.oldest,
        "horizon": reading.horizon.level.value,
        "horizon_warning": int(reading.horizon.warning),
        "window_s": reading.horizon.window_s,
        "pending_writes": reading.pending_writes,
        "overdue_writes": reading.overdue_writes,
        "message": rules.message(reading),
    }


@dataclass(frozen=True)
class Reading:
    """The newest tx_runrecord_health row."""

    checked_at: int
    status: str
    stuck_conversations: int
    horizon: str
    horizon_warning: bool
    window_s: int
    pending_writes: int
    overdue_writes: int
    message: str


def latest(connection: Connection) -> Reading | None:
    """The newest stored reading, or None when there is none."""
    h = health_table.c
    query = select(
        h.checked_at,
        h.status,
        h.stuck_conversations,
        h.horizon,
        h.horizon_warning,
        h.window_s,
        h.pending_writes,
        h.overdue_writes,
        h.message,
    ).order_by(h.uid.desc())
    row = connection.execute(query.limit(1)).first()
    if row is None:
        return None
    return Reading(
        checked_at=int(row.checked_at),
        status=row.status,
        stuck_conversations=int(row.stuck_conversations),
        horizon=row.horizon,
        horizon_warning=bool(row.horizon_warning),
        window_s=int(row.window_s),
        pending_writes=int(row.pending_writes),
        overdue_writes=int(row.overdue_writes),
        message=row.message or "",
    )
