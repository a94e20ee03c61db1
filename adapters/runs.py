"""Reads of nr-llm's runs (tx_nrllm_agentrun) and of the configurations they name; be_user is never
selected.

The Runs page's reads are keyset pages: at most `limit` runs, newest uid first, below a bound, filtered by
configuration, status, start and observed outcome (tx_runrecord_run_outcome, joined only when it is filtered
on or shown). No query here loads all runs.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from sqlalchemy import Connection, Select, and_, func, select

from adapters import schema
from core.outcomes import CallOutcome

agentrun = schema.agentrun

OUTCOMES: tuple[str, ...] = tuple(outcome.value for outcome in CallOutcome)
NO_OUTCOME = "none yet"  # the filter value for runs without an observed outcome (no writes, or not derived)


def run_columns() -> tuple[Any, ...]:
    r = agentrun.c
    return (
        r.uid,
        r.uuid,
        r.status,
        r.configuration_identifier,
        r.finished_at,
        r.tstamp,
        r.started_at,
        r.crdate,
    )


def runs_by_uuid(connection: Connection, uuids: Collection[str]) -> Sequence[Any]:
    """The runs with these uuids (the correlation id), with how nr-llm says each ended (termination_reason);
    lowest uid first."""
    if not uuids:
        return []
    r = agentrun.c
    query = select(*run_columns(), r.termination_reason).where(r.uuid.in_(list(uuids))).order_by(r.uid)
    return connection.execute(query).all()


def runs_by_uid(connection: Connection, uids: Collection[int]) -> Sequence[Any]:
    """The runs with these uids."""
    if not uids:
        return []
    r = agentrun.c
    return connection.execute(select(*run_columns()).where(r.uid.in_(list(uids))).order_by(r.uid)).all()


def configurations(connection: Connection) -> list[str]:
    """The configuration identifiers the installation has (tx_nrllm_configuration; small), sorted."""
    c = schema.nrllm_configuration.c
    names = connection.execute(select(c.identifier).where(c.identifier != "").distinct()).scalars()
    return sorted(set(names))


@dataclass(frozen=True)
class RunFilter:
    """The Runs table's filters; None means any."""

    configuration: str | None = None
    status: str | None = None
    outcome: str | None = None  # one of OUTCOMES, or NO_OUTCOME
    started_from: date | None = None
    started_to: date | None = None  # inclusive


def count_runs(connection: Connection, chosen: RunFilter, *, has_outcomes: bool) -> int:
    """How many runs match the filter (`has_outcomes` False: the outcome table is missing, and no run has an
    outcome)."""
    if chosen.outcome in OUTCOMES and not has_outcomes:
        return 0
    query = _select([func.count()], chosen, has_outcomes=has_outcomes, outcome_column=False)
    return int(connection.execute(query).scalar_one())


def run_page(
    connection: Connection, chosen: RunFilter, *, has_outcomes: bool, before_uid: int | None, limit: int
) -> Sequence[Any]:
    """The runs matching the filter with uid below before_uid (None: from the newest), newest first: uid,
    uuid, configuration_identifier, status, termination_reason, started_at, and `outcome` when the outcome
    table exists."""
    r = agentrun.c
    if chosen.outcome in OUTCOMES and not has_outcomes:
        return []
    columns = [r.uid, r.uuid, r.configuration_identifier, r.status, r.termination_reason, r.started_at]
    if has_outcomes:
        columns.append(schema.run_outcome.c.outcome)
    query = _select(columns, chosen, has_outcomes=has_outcomes, outcome_column=has_outcomes)
    if before_uid is not None:
        query = query.where(r.uid < before_uid)
    return connection.execute(query.order_by(r.uid.desc()).limit(limit)).all()


def _conditions(chosen: RunFilter, has_outcomes: bool) -> list[Any]:
    r = agentrun.c
    o = schema.run_outcome.c
    conditions: list[Any] = []
    if chosen.configuration:
        conditions.append(r.configuration_identifier == chosen.configuration)
    if chosen.status:
        conditions.append(r.status == chosen.status)
    if chosen.started_from is not None:
        conditions.append(r.started_at >= _unix_day(chosen.started_from))
    if chosen.started_to is not None:
        conditions.append(r.started_at < _unix_day(chosen.started_to + timedelta(days=1)))
    if chosen.outcome in OUTCOMES:
        conditions.append(o.outcome == chosen.outcome)
    if chosen.outcome == NO_OUTCOME and has_outcomes:
        conditions.append(~select(o.run_uid).where(o.run_uid == r.uid).exists())
    return conditions


def _select(
    columns: Sequence[Any], chosen: RunFilter, *, has_outcomes: bool, outcome_column: bool
) -> Select[Any]:
    """The runs matching the filter; joined to their outcome row when it is filtered on or shown."""
    run = agentrun
    outcome = schema.run_outcome
    if chosen.outcome in OUTCOMES:
        source: Any = run.join(outcome, outcome.c.run_uid == run.c.uid)
    elif outcome_column:
        source = run.outerjoin(outcome, outcome.c.run_uid == run.c.uid)
    else:
        source = run
    query = select(*columns).select_from(source)
    conditions = _conditions(chosen, has_outcomes)
    return query.where(and_(*conditions)) if conditions else query


def _unix_day(day: date) -> int:
    """Midnight UTC of the day, as unix seconds (the dashboard shows every time in UTC)."""
    return int(datetime.combine(day, time(), tzinfo=UTC).timestamp())
