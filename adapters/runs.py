"""Reads of nr-llm's runs (tx_nrllm_agentrun) and of the configurations they name; be_user is never
selected.

The Runs page's reads are keyset pages: at most `limit` runs, newest start first (uid breaking ties), below a
bound, filtered by configuration, status, start, observed outcome (tx_runrecord_run_outcome, joined only when
it is filtered on or shown), and by what measure-rates found of the run (tx_runrecord_measure_fact, asked
only when filtered on): its skill, the end that places it in a period, a claim of a change it never made, a
denial of recorded writes, the stored nothingSaved notice, and a notice that disagrees with the
recomputation; and by the edit scope of an EDITED run (the first of core.counting.SCOPE_PRECEDENCE among its
EDITED writes, as adapters.tallies counts it). A run is found by its uuid or the short id the table shows (a
prefix of 8 or more hex digits). No query here loads all runs.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from sqlalchemy import Connection, Select, and_, false, func, or_, select

from adapters import schema
from adapters.first_notice import first_notice_at
from adapters.tallies import scope_rank
from core.answers import AnswerState, ClaimState, DenialState
from core.counting import (
    AGREEMENT_COUNTS,
    CLAIM_COUNTS,
    DENIAL_COUNTS,
    DENOMINATOR,
    GO_ON_COUNTS,
    OUTCOME_METRICS,
    SCOPE_METRICS,
    SCOPE_PRECEDENCE,
    Counted,
)
from core.metrics import Metric, parse_metric
from core.outcomes import CallOutcome

agentrun = schema.agentrun
fact = schema.measure_fact

OUTCOMES: tuple[str, ...] = tuple(outcome.value for outcome in CallOutcome)
EDIT_SCOPES: tuple[str, ...] = tuple(scope.value for scope in SCOPE_PRECEDENCE)  # the scope filter's values
NO_OUTCOME = "none yet"  # the filter value for runs without an observed outcome (no writes, or not derived)
NO_SKILL = ""  # the skill filter's value for runs of conversations without a skill
SHORT_ID = 8  # the hex digits of a uuid the Runs table shows; a shorter prefix would match too many runs
# Where the recomputed notice and the stored one disagree: the pairs core.counting counts in the denominator
# of notice_agreement and not in its numerator.
DISAGREEMENTS: tuple[tuple[ClaimState, bool], ...] = tuple(
    pair for pair, counted in AGREEMENT_COUNTS.items() if counted == DENOMINATOR
)
# A page's keyset bound: the last row's start and uid.
Bound = tuple[int, int]


def _in_denominator(counts: Mapping[Any, Counted]) -> tuple[Any, ...]:
    """The states a counting table of core.counting puts in a rate's denominator (its numerator included)."""
    return tuple(state for state, counted in counts.items() if counted[1])


# The metrics whose denominator a run filter can name (`RunFilter.counted`): those core.counting counts one
# run (or one answer) at a time. The "go on" paths (counted per message) and the counts are not among them.
COUNTED_METRICS: tuple[str, ...] = (
    *(metric.value for metric in OUTCOME_METRICS),
    *(metric.value for metric in SCOPE_METRICS.values()),
    Metric.NOTHING_SAVED_RATE.value,
    Metric.CLAIMED_UNWRITTEN_RATE.value,
    Metric.NOTICE_AGREEMENT.value,
    Metric.DENIAL_RATE.value,
    Metric.GO_ON_WHILE_WAITING.value,
)


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


def uuids_of(connection: Connection, reference: str) -> tuple[str, ...]:
    """The uuids of the runs whose uuid is `reference` or starts with it (a checked run reference: hex digits
    and hyphens), at most two: one names its run, two say that the reference names several."""
    r = agentrun.c
    query = select(r.uuid).where(_uuid_condition(reference)).order_by(r.uuid).limit(2)
    return tuple(connection.execute(query).scalars())


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
    """The Runs table's filters; None (or False) means any."""

    configuration: str | None = None
    status: str | None = None
    outcome: str | None = None  # one of OUTCOMES, or NO_OUTCOME
    started_from: date | None = None
    started_to: date | None = None  # inclusive
    skill: str | None = None  # a skill identifier, or NO_SKILL
    claim: bool = False  # the run's answer claims a change the run never made
    denial: bool = False  # the run's answer denies writes the run record shows
    notice: bool = False  # the chat stored the nothingSaved notice on the run's answer
    disagreement: bool = False  # that notice and the recomputation disagree (from the first notice on)
    uuid: str | None = None  # a run's uuid, or the first SHORT_ID or more hex digits of it
    ended_from: date | None = None  # the run's end as the rates place it in a period (its fact's time)
    ended_to: date | None = None  # inclusive
    # A metric of COUNTED_METRICS: the runs its rate counts in its denominator (its numerator among them), as
    # measure-rates counted them (adapters.tallies, core.counting); with ended_from/ended_to and a group, the
    # runs behind one figure's n.
    counted: str | None = None
    scope: str | None = None  # an edit scope: the EDITED runs whose scope it is (adapters.tallies.scope_rank)

    @property
    def reads_facts(self) -> bool:
        """Whether a filter asks what measure-rates found of the run."""
        return (
            self.skill is not None
            or self.claim
            or self.denial
            or self.notice
            or self.disagreement
            or self.ended_from is not None
            or self.ended_to is not None
            or self.counted is not None
        )


def skills(connection: Connection) -> list[str]:
    """The skill identifiers the measured runs' conversations name, sorted (NO_SKILL among them when a
    conversation has none); none before measure-rates has run."""
    f = fact.c
    found = connection.execute(
        select(f.skill_identifier).where(f.run_uid > 0, f.skill_identifier.is_not(None)).distinct()
    ).scalars()
    return sorted(set(found))


@dataclass(frozen=True)
class Tables:
    """Which of our tables the filter can read: the observed outcomes, the measured facts."""

    outcomes: bool
    facts: bool

    def cannot_match(self, chosen: RunFilter) -> bool:
        """A filter on a table the database does not have yet matches no run."""
        on_outcomes = chosen.outcome in OUTCOMES or chosen.scope is not None
        return (on_outcomes and not self.outcomes) or (chosen.reads_facts and not self.facts)


def count_runs(connection: Connection, chosen: RunFilter, *, tables: Tables) -> int:
    """How many runs match the filter (a filter on a missing table matches none)."""
    if tables.cannot_match(chosen):
        return 0
    query = _select(connection, [func.count()], chosen, tables=tables, outcome_column=False)
    return int(connection.execute(query).scalar_one())


def count_all(connection: Connection) -> int:
    """How many runs the installation holds (a page's empty state tells none from none matching)."""
    return int(connection.execute(select(func.count()).select_from(agentrun)).scalar_one())


def run_page(
    connection: Connection, chosen: RunFilter, *, tables: Tables, before: Bound | None, limit: int
) -> Sequence[Any]:
    """The runs matching the filter after the keyset bound `before` (None: from the newest), newest start
    first and the higher uid first among runs of one start: uid, uuid, configuration_identifier, status,
    termination_reason, started_at, and `outcome` when the outcome table exists."""
    r = agentrun.c
    if tables.cannot_match(chosen):
        return []
    columns = [r.uid, r.uuid, r.configuration_identifier, r.status, r.termination_reason, r.started_at]
    if tables.outcomes:
        columns.append(schema.run_outcome.c.outcome)
    query = _select(connection, columns, chosen, tables=tables, outcome_column=tables.outcomes)
    if before is not None:
        started, uid = before
        query = query.where(or_(r.started_at < started, and_(r.started_at == started, r.uid < uid)))
    return connection.execute(query.order_by(r.started_at.desc(), r.uid.desc()).limit(limit)).all()


def _uuid_condition(text: str) -> Any:
    r = agentrun.c
    if len(text) >= 36:
        return r.uuid == text
    return r.uuid.like(f"{text}%")  # the caller has checked it is hex digits: nothing to escape


def _fact_conditions(connection: Connection, chosen: RunFilter) -> list[Any]:
    f = fact.c
    conditions: list[Any] = []
    if chosen.skill is not None:
        conditions.append(f.skill_identifier == chosen.skill)
    if chosen.claim:
        conditions.append(f.claim == ClaimState.NOTHING_SAVED.value)
    if chosen.denial:
        conditions.append(f.denial == DenialState.DENIES.value)
    if chosen.notice:
        conditions += [f.answer == AnswerState.READ.value, f.notice == 1]
    if chosen.disagreement:
        conditions += _notice_pairs(connection, DISAGREEMENTS)
    if chosen.counted is not None:
        conditions += _counted_conditions(connection, chosen.counted)
    if chosen.ended_from is not None:
        conditions.append(f.ended_at >= _unix_day(chosen.ended_from))
    if chosen.ended_to is not None:
        conditions.append(f.ended_at < _unix_day(chosen.ended_to + timedelta(days=1)))
    return conditions


def _counted_conditions(connection: Connection, metric: str) -> list[Any]:
    """What puts a run's fact into the denominator of `metric`: the counting tables of core.counting over the
    columns adapters.tallies groups by (a metric not in COUNTED_METRICS matches no run)."""
    f = fact.c
    read = f.answer == AnswerState.READ.value
    known = parse_metric(metric)
    if known is not None and known in OUTCOME_METRICS:
        return [_derived_as(f.run_uid, _in_denominator(OUTCOME_METRICS[known]))]
    if known is not None and known in SCOPE_METRICS.values():
        # An EDITED run's scope counts it; one without a scope is excluded (core.counting).
        edited = _derived_as(f.run_uid, [CallOutcome.EDITED])
        return [edited, scope_rank(connection.dialect.name, f.run_uid).is_not(None)]
    if known is Metric.NOTHING_SAVED_RATE:
        return [read]
    if known is Metric.CLAIMED_UNWRITTEN_RATE:
        return [read, f.claim.in_([claim.value for claim in _in_denominator(CLAIM_COUNTS)])]
    if known is Metric.DENIAL_RATE:
        return [read, f.denial.in_([denial.value for denial in _in_denominator(DENIAL_COUNTS)])]
    if known is Metric.GO_ON_WHILE_WAITING:
        return [f.go_on.in_([state.value for state in _in_denominator(GO_ON_COUNTS)])]
    if known is Metric.NOTICE_AGREEMENT:
        return _notice_pairs(connection, _in_denominator(AGREEMENT_COUNTS))
    return [false()]


def _notice_pairs(connection: Connection, pairs: Sequence[tuple[ClaimState, bool]]) -> list[Any]:
    """A read answer whose claim and stored notice are one of `pairs`, from the first stored notice on (before
    it no answer could carry one)."""
    f = fact.c
    first = first_notice_at(connection)
    matching = [and_(f.claim == claim.value, f.notice == int(notice)) for claim, notice in pairs]
    return [
        f.answer == AnswerState.READ.value,
        or_(*matching),
        false() if first is None else f.ended_at >= first,
    ]


def _conditions(connection: Connection, chosen: RunFilter, tables: Tables) -> list[Any]:
    r = agentrun.c
    o = schema.run_outcome.c
    conditions: list[Any] = []
    if chosen.uuid:
        conditions.append(_uuid_condition(chosen.uuid))
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
    if chosen.outcome == NO_OUTCOME and tables.outcomes:
        # An alias: the page joins the outcome table itself to show each run's, and a subquery naming the
        # same table would be taken for that join's (no FROM of its own left).
        derived = schema.run_outcome.alias("derived")
        conditions.append(~select(derived.c.run_uid).where(derived.c.run_uid == r.uid).exists())
    if chosen.scope is not None:
        conditions += _of_scope(connection, chosen.scope)
    if chosen.reads_facts:
        found = _fact_conditions(connection, chosen)
        conditions.append(select(fact.c.run_uid).where(fact.c.run_uid == r.uid, *found).exists())
    return conditions


def _derived_as(run_uid: Any, outcomes: Sequence[CallOutcome]) -> Any:
    """The run was derived with one of these outcomes; asked of an alias, never of the outcome row the page
    joins to show."""
    d = schema.run_outcome.alias("derived_as").c
    return select(d.run_uid).where(d.run_uid == run_uid, d.outcome.in_([o.value for o in outcomes])).exists()


def _of_scope(connection: Connection, scope: str) -> list[Any]:
    """An EDITED run whose edit scope is `scope` (a scope no rule writes matches no run)."""
    if scope not in EDIT_SCOPES:
        return [false()]
    run_uid = agentrun.c.uid
    edited = _derived_as(run_uid, [CallOutcome.EDITED])
    return [edited, scope_rank(connection.dialect.name, run_uid) == EDIT_SCOPES.index(scope)]


def _select(
    connection: Connection,
    columns: Sequence[Any],
    chosen: RunFilter,
    *,
    tables: Tables,
    outcome_column: bool,
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
    conditions = _conditions(connection, chosen, tables)
    return query.where(and_(*conditions)) if conditions else query


def _unix_day(day: date) -> int:
    """Midnight UTC of the day, as unix seconds (the dashboard shows every time in UTC)."""
    return int(datetime.combine(day, time(), tzinfo=UTC).timestamp())
