"""The facts, derived outcomes and runs inside their window, counted per period and group by the database.

Only counts leave the database (core.counting turns them into rates): a tally per period of the run's end,
configuration, skill and state, whatever the number of runs. The periods counted are the open ones (from
`open_from` on) and the listed ones.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from datetime import date
from typing import Any

from sqlalchemy import ColumnElement, Connection, and_, case, func, literal_column, or_, select, true

from adapters import schema
from adapters.dialect import plans
from adapters.dialect.days import day_of
from adapters.dialect.exact import exact, exact_values
from core.counting import SCOPE_PRECEDENCE, EditedTally, FactTally, OpenTally, OutcomeTally
from core.events import EventKind
from core.go_on import GoOnPaths
from core.outcomes import CallOutcome
from core.periods import Grain, open_from, period_of, period_start, unix_of
from core.time import DAY_S
from core.window import window_cutoff

event = schema.agentrun_event
fact = schema.measure_fact
run_outcome = schema.run_outcome
write_outcome = schema.write_outcome


def earliest_end_after(connection: Connection, cutoff: int) -> int | None:
    """The earliest run end at or after `cutoff` (now − window): the first run that may still change."""
    f = fact.c
    value = connection.execute(select(func.min(f.ended_at)).where(f.ended_at >= cutoff)).scalar()
    return None if value is None else int(value)


def first_open_periods(
    connection: Connection, grains: Collection[Grain], *, now: int, window_s: int
) -> dict[Grain, date]:
    """Each grain's first period open at `now` (core.periods.open_from on the stored facts): measure-rates
    rewrites it and every later one, and stores it (adapters.measure_marks.first_open) for what shows its
    rates."""
    earliest = earliest_end_after(connection, window_cutoff(now, window_s))
    return {grain: open_from(now, window_s, earliest, grain) for grain in grains}


def _period_column(grain: Grain) -> Any:
    return fact.c.week_start if grain is Grain.WEEK else fact.c.day_start


def closed_periods(connection: Connection, first_open: Mapping[Grain, date]) -> dict[Grain, set[date]]:
    """Each grain's periods before its first open one that hold a fact, from the facts' days read once (a
    day before a week's first open Monday is in an earlier week)."""
    if not first_open:
        return {}
    days = fact_days_before(connection, unix_of(max(first_open.values())))
    return {
        grain: {period_of(day, grain) for day in days if day < start} for grain, start in first_open.items()
    }


def fact_days_before(connection: Connection, before: int) -> set[date]:
    """The days of the facts that ended before `before`: on PostgreSQL and SQLite each day's first fact found
    through the `ended_at` index from the previous day's next midnight (a fact's day is its end's UTC day),
    one seek a day where a `DISTINCT` read nearly every stored fact in a rerun (plans.skips_through_index);
    on MariaDB the distinct days of the `day_start` index."""
    f = fact.c
    distinct = select(f.day_start).where(f.ended_at < before).distinct()
    if not plans.skips_through_index(connection.dialect.name):
        if before % DAY_S == 0:
            # Before a midnight, a fact's end is earlier exactly where its day is: MariaDB then reads the
            # distinct days from the `day_start` index, one entry a day (a loose index scan; 0.8 ms against
            # 6-22 ms for every fact of the wide shape's 0.05, measured).
            distinct = select(f.day_start).where(f.day_start < period_start(before, Grain.DAY)).distinct()
        return {day_of(value) for value in connection.execute(distinct).scalars()}
    first = select(func.min(f.ended_at).label("at")).where(f.ended_at < before)
    found = first.cte("fact_day", recursive=True)
    later = fact.alias("later")
    next_day = (found.c.at // DAY_S + 1) * DAY_S
    following = (
        select(func.min(later.c.ended_at))
        .where(later.c.ended_at >= next_day, later.c.ended_at < before)
        .scalar_subquery()
    )
    found = found.union_all(select(following).where(found.c.at.is_not(None)))
    ends = [int(at) for at in connection.execute(select(found.c.at).where(found.c.at.is_not(None))).scalars()]
    if ends and ends[0] < 0:
        # Integer division rounds a negative end towards zero, past its day's midnight: read them all.
        return {day_of(value) for value in connection.execute(distinct).scalars()}
    return {period_start(at, Grain.DAY) for at in ends}


def _in_periods(grain: Grain, open_from: date | None, periods: Collection[date]) -> ColumnElement[bool]:
    """Facts of the open periods (from `open_from` on) and of the listed ones; None and no list: all."""
    if open_from is None and not periods:
        return true()
    conditions = []
    if open_from is not None:
        conditions.append(fact.c.ended_at >= unix_of(open_from))
    if periods:
        conditions.append(_period_column(grain).in_(sorted(periods)))
    return or_(*conditions)


def fact_tallies(
    connection: Connection,
    grain: Grain,
    *,
    open_from: date | None,
    periods: Collection[date],
    first_notice: int | None = None,
) -> list[FactTally]:
    """Facts counted per period, configuration, skill and state, and whether they are at or after
    `first_notice` (first_notice_at), with their "go on" messages by path summed."""
    f = fact.c
    keys: list[ColumnElement[Any]] = [
        _period_column(grain),
        f.configuration_identifier,
        f.skill_identifier,
        f.answer,
        f.notice,
        f.claim,
        f.denial,
        f.go_on,
        f.problems,
    ]
    if first_notice is not None:
        # Written into the statement, not bound: PostgreSQL matches a grouped expression to the selected one
        # by its text, and two bound parameters are two texts. An int cannot carry anything else.
        keys.append(case((f.ended_at >= literal_column(str(int(first_notice))), 1), else_=0))
    paths = (f.go_on_finished_outside, f.go_on_second_run, f.go_on_unknown, f.go_on_unreadable)
    query = (
        select(*keys, func.sum(f.runs), func.count(), *(func.sum(column) for column in paths))
        .where(_in_periods(grain, open_from, periods))
        .group_by(*keys)
    )
    counted = len(keys)
    tallies = []
    for row in connection.execute(query).all():
        since = first_notice is not None and bool(row[9])
        runs, facts = row[counted], row[counted + 1]
        outside, second, unknown, unreadable = (int(value or 0) for value in row[counted + 2 :])
        tallies.append(
            FactTally(
                period=day_of(row[0]),
                configuration=row[1],
                skill=row[2],
                answer=str(row[3]),
                notice=bool(row[4]),
                claim=str(row[5]),
                denial=str(row[6]),
                go_on=str(row[7]),
                problems=str(row[8]),
                runs=int(runs or 0),
                facts=int(facts),
                since_first_notice=since,
                go_on_paths=GoOnPaths(outside, second, unknown, unreadable),
            )
        )
    return tallies


def _run_facts(grain: Grain, open_from: date | None, periods: Collection[date]) -> tuple[Any, Any, Any]:
    """The run facts of the periods counted, joined to their derived runs: (the join, the facts' columns,
    their period's column).

    Only the open periods (a rerun's): those facts first, found through the ended_at index in a subquery
    read once, each derived run then looked up by its key. SQLite, without statistics of these tables, read
    every derived run in key order and looked its fact up instead (15 ms against 1 ms for the open week of
    66,000 runs, measured)."""
    f, o = fact.c, run_outcome.c
    chosen = and_(f.message_uid == 0, _in_periods(grain, open_from, periods))
    if open_from is None or periods:
        return run_outcome.join(fact, and_(f.run_uid == o.run_uid, chosen)), f, _period_column(grain)
    columns = (f.run_uid, f.week_start, f.day_start, f.configuration_identifier, f.skill_identifier)
    facts = plans.evaluated_once(select(*columns).where(chosen)).subquery("run_fact")
    period = facts.c.week_start if grain is Grain.WEEK else facts.c.day_start
    return run_outcome.join(facts, facts.c.run_uid == o.run_uid), facts.c, period


def outcome_tallies(
    connection: Connection, grain: Grain, *, open_from: date | None, periods: Collection[date]
) -> list[OutcomeTally]:
    """Derived runs counted per period of the run's end, configuration, skill, outcome and rule version."""
    o = run_outcome.c
    joined, f, period = _run_facts(grain, open_from, periods)
    keys = (period, f.configuration_identifier, f.skill_identifier, o.outcome, o.rule_version)
    query = select(*keys, func.count()).select_from(joined).group_by(*keys)
    return [
        OutcomeTally(day_of(row[0]), row[1], row[2], str(row[3]), int(row[5]), str(row[4] or ""))
        for row in connection.execute(query).all()
    ]


def scope_rank(dialect: str, run_uid: ColumnElement[Any]) -> ColumnElement[Any]:
    """The edit scope of the run `run_uid` names, as its position in core.counting.SCOPE_PRECEDENCE: the
    lowest position that one of the run's EDITED writes names; NULL when none names one."""
    w = write_outcome.c
    # Byte for byte, as core.counting reads a scope (MariaDB's collation would take "Same_Fields " for one).
    known = exact_values(dialect, [scope.value for scope in SCOPE_PRECEDENCE])
    position = case({value: rank for rank, value in enumerate(known)}, value=exact(dialect, w.edit_scope))
    edited = CallOutcome.EDITED.value
    return select(func.min(position)).where(w.run_uid == run_uid, w.outcome == edited).scalar_subquery()


def edited_tallies(
    connection: Connection, grain: Grain, *, open_from: date | None, periods: Collection[date]
) -> list[EditedTally]:
    """EDITED runs counted per period, configuration, skill, edit scope and rule version
    (core.counting.edited_tallies): a run's scope is the first of core.counting.SCOPE_PRECEDENCE among its
    EDITED writes, the lowest position in that order that one of them names; NULL when none names one (or
    the run has no EDITED write)."""
    o = run_outcome.c
    edited = CallOutcome.EDITED.value
    run_facts, f, period = _run_facts(grain, open_from, periods)
    # A run's scope looked up by its key, one group by in all: a run has one derived row and one run fact,
    # so each joined row is a run. Grouped by run first, MariaDB sorted every EDITED run by its declared
    # widths (0.58 s against 0.28 s for 49,590 EDITED runs, measured).
    scope = scope_rank(connection.dialect.name, o.run_uid).label("scope")
    groups = (period, f.configuration_identifier, f.skill_identifier, o.rule_version, scope)
    runs = (
        select(*(column.label(f"k{index}") for index, column in enumerate(groups)))
        .select_from(run_facts)
        .where(o.outcome == edited)
        .subquery("edited_runs")
    )
    query = select(*runs.c, func.count()).group_by(*runs.c)
    return [
        EditedTally(
            day_of(row[0]),
            row[1],
            row[2],
            None if row[4] is None else SCOPE_PRECEDENCE[int(row[4])],
            int(row[5]),
            str(row[3] or ""),
        )
        for row in connection.execute(query).all()
    ]


def window_open_tallies(connection: Connection, grain: Grain, *, cutoff: int) -> list[OpenTally]:
    """Runs still inside their window at `cutoff` = now − window, per period of the run's end, configuration
    and skill: run facts ending at or after the cutoff, with a tool_write at or after it (the last write's
    window has not closed: core.outcomes.is_due) and without a row in tx_runrecord_run_outcome.

    A run ends after its writes, so only the run facts of the last window (the ended_at index) are looked at,
    and for each an index probe of its events (run, sequence) that stops at the first write in the window.
    On PostgreSQL both probes are fenced (OFFSET 0): unfenced, and without statistics, its planner may hash
    every tool_write event instead (as adapters.derivation fences the answered runs). On MariaDB the probe
    keeps to that index: with nr-llm's KEY crdate beside it, MariaDB first read every event of the last
    window from that key to filter the probe's rows (8,900 index entries at the wide shape's 0.05, measured).
    """
    d = connection.dialect.name
    f, e, o = fact.c, event.c, run_outcome.c
    answered = select(o.run_uid).where(o.run_uid == f.run_uid)
    wrote = select(e.uid).where(e.run == f.run_uid, e.kind == EventKind.TOOL_WRITE.value, e.crdate >= cutoff)
    answered = plans.fenced(d, answered)
    wrote = plans.fenced(d, plans.by_index(d, wrote, event, "run_sequence"))
    keys = (_period_column(grain), f.configuration_identifier, f.skill_identifier)
    query = (
        select(*keys, func.count())
        .where(f.message_uid == 0, f.ended_at >= cutoff, ~answered.exists(), wrote.exists())
        .group_by(*keys)
    )
    return [OpenTally(day_of(row[0]), row[1], row[2], int(row[3])) for row in connection.execute(query).all()]
