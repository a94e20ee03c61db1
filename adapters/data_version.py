"""How new the data is: the newest row of each table the jobs write, the newest rate computation, and the
job run that finished last. Each is an index lookup (a primary key's maximum) or a pass over a small table.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import Connection, Table, func, select

from adapters import schema


def newest_uids(connection: Connection, tables: Sequence[Table], present: frozenset[str]) -> tuple[int, ...]:
    """The largest uid of each table, in the order given; 0 for a table that is empty or not `present`."""
    uids: list[int] = []
    for table in tables:
        found = connection.execute(select(func.max(table.c.uid))).scalar() if table.name in present else None
        uids.append(int(found or 0))
    return tuple(uids)


def newest_rate_computation(connection: Connection, present: frozenset[str]) -> int:
    """When measure-rates last computed a rate (it also updates open periods in place); 0 when never."""
    if schema.rate.name not in present:
        return 0
    return int(connection.execute(select(func.max(schema.rate.c.computed_at))).scalar() or 0)


def last_finished_job_run(connection: Connection, present: frozenset[str]) -> Any | None:
    """The job run that finished last (job, finished, status), or None when none has (or no table)."""
    if schema.job_run.name not in present:
        return None
    j = schema.job_run.c
    # The newest finished rows are among the newest uids; finished is not indexed, uid is.
    query = select(j.job, j.finished, j.status).where(j.finished.is_not(None)).order_by(j.uid.desc()).limit(1)
    return connection.execute(query).one_or_none()
