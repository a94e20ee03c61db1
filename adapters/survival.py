"""The survival of AI text, counted in the database as derive-outcomes stores the writes
(tx_runrecord_survival_tally and _group, migration 0010), so that a page reads a few thousand counts rather
than counting every write outcome again.

Per configuration, each distinct time (seconds after the write) with the writes changed then and the writes
censored then, so that no list of per-write times leaves the database; beside it the runs of the curve and
the writes left out. Which writes count and at what time is core.survival_report's rule: a write with a known
outcome; EDITED or DISCARDED at `first_change_after_s` when a human row dates it, ACCEPTED_UNCHANGED
censored at its run's window (`window_s`, the setting's when the row has none).
"""

from __future__ import annotations

from sqlalchemy import ColumnElement, Connection, FromClause, Integer, and_, case, func, literal, or_, select

from adapters import schema
from adapters.dialect import bulk
from core.groups import ALL_RUNS, Group, GroupKind
from core.outcomes import CallOutcome
from core.survival import Tally
from core.survival_report import GroupTallies

write_outcome = schema.write_outcome
survival_tally = schema.survival_tally
survival_group = schema.survival_group

CHANGED = (CallOutcome.EDITED.value, CallOutcome.DISCARDED.value)
KNOWN = (CallOutcome.ACCEPTED_UNCHANGED.value, *CHANGED)


def configurations(connection: Connection) -> list[str]:
    """The configuration identifiers of the derived runs, sorted."""
    g = survival_group.c
    query = select(g.configuration_identifier).order_by(g.configuration_identifier)
    return [str(value) for value in connection.execute(query).scalars()]


def has_derived_writes(connection: Connection) -> bool:
    """Whether derive-outcomes has stored any write outcome."""
    return connection.execute(select(write_outcome.c.uid).limit(1)).first() is not None


def group_tallies(connection: Connection, group: Group, *, window_s: int) -> GroupTallies:
    """The tallies of one group's curve (all runs, or one configuration) and what was left out, from the
    counts derive-outcomes keeps (`add_counts`). `window_s` is the curve's end when no run recorded one."""
    if group.kind not in (GroupKind.ALL, GroupKind.CONFIGURATION):
        raise ValueError(f"survival is counted for all runs or a configuration, not {group.label}")
    t, g = survival_tally.c, survival_group.c
    groups_query = select(
        func.coalesce(func.sum(g.runs), 0),
        func.coalesce(func.sum(g.unknown), 0),
        func.coalesce(func.sum(g.undated), 0),
        func.max(g.window_s),
    )
    if group == ALL_RUNS:  # every configuration's count of a time, summed
        tallies_query = select(t.t, func.sum(t.events), func.sum(t.writes)).group_by(t.t).order_by(t.t)
    else:  # one row per time already (the primary key): read along it, nothing to sum
        tallies_query = (
            select(t.t, t.events, t.writes).where(t.configuration_identifier == group.value).order_by(t.t)
        )
        groups_query = groups_query.where(g.configuration_identifier == group.value)
    tallies = tuple(
        Tally(int(time), int(events), int(writes) - int(events))
        for time, events, writes in connection.execute(tallies_query)
    )
    runs, unknown, undated, window = connection.execute(groups_query).one()
    return GroupTallies(
        group=group,
        tallies=tallies,
        runs=int(runs),
        unknown=int(unknown),
        undated=int(undated),
        window_s=int(window or window_s) if tallies or runs else 0,
    )


def add_counts(
    connection: Connection,
    writes: FromClause,
    *,
    configuration: ColumnElement[str],
    run_uid: ColumnElement[int],
    outcome: ColumnElement[str],
    first_change_after_s: ColumnElement[int | None],
    window_s: int,
) -> None:
    """Add the survival counts of newly derived writes (a FROM of them, with these columns) to the kept ones.

    Each write is counted once, by the transaction that stored it (adapters.derive_batch): its counts commit
    with its row, and a rollback takes both back."""
    dialect = connection.dialect.name
    changed = outcome.in_(CHANGED)
    dated = and_(changed, first_change_after_s.is_not(None))
    in_curve = or_(outcome == CallOutcome.ACCEPTED_UNCHANGED.value, dated)
    time = case((dated, first_change_after_s), else_=literal(window_s, Integer, literal_execute=True))
    per_write = (
        select(configuration.label("configuration"), time.label("t"), case((dated, 1), else_=0).label("ev"))
        .select_from(writes)
        .where(in_curve)
        .subquery("survived")
    )
    tallied = select(
        per_write.c.configuration, per_write.c.t, func.sum(per_write.c.ev), func.count()
    ).group_by(per_write.c.configuration, per_write.c.t)
    connection.execute(
        bulk.upsert_adding(
            dialect, survival_tally, ("configuration_identifier", "t"), tallied, added=("events", "writes")
        )
    )
    grouped = (
        select(
            configuration,
            func.count(func.distinct(case((in_curve, run_uid)))),
            func.sum(case((outcome.not_in(KNOWN), 1), else_=0)),
            func.sum(case((and_(changed, first_change_after_s.is_(None)), 1), else_=0)),
            literal(window_s, Integer, literal_execute=True),
        )
        .select_from(writes)
        .group_by(configuration)
    )
    connection.execute(
        bulk.upsert_adding(
            dialect,
            survival_group,
            ("configuration_identifier",),
            grouped,
            added=("runs", "unknown", "undated"),
            highest=("window_s",),
        )
    )
