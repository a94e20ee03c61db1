"""The reads of measure-rates and compare: every select names its columns, and none names an editor.

be_user, userid, decidedBy and submittedBy are never selected (DESIGN.md, "Privacy"); tests capture every
statement and check it. Reads go by keyset (uid > after, never OFFSET) or by IN lists of one batch, so that
memory stays flat however large the installation is.

The upstream side (conversations, messages, runs, events) is read per batch of conversations; our side (the
facts, the outcome tables, the rates) is counted per period and group by the database, and core turns the
counts into rates.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from sqlalchemy import ColumnElement, Connection, and_, case, func, literal_column, or_, select, true

from adapters import dialect as sql
from adapters import schema
from adapters.runs import run_columns
from core.events import EventKind
from core.measures import (
    ALL_RUNS,
    AnswerState,
    EditedWrite,
    FactTally,
    Grain,
    Metric,
    OpenTally,
    OutcomeTally,
    unix_of,
)
from core.outcomes import CallOutcome

conversation = schema.conversation
message = schema.message
agentrun = schema.agentrun
event = schema.agentrun_event
fact = schema.measure_fact
mark = schema.measure_mark
rate = schema.rate
run_outcome = schema.run_outcome
write_outcome = schema.write_outcome

STREAM_ROWS = 5_000  # rows a streamed result fetches at a time
# The mark that says which metrics the stored rates hold (core.measures.RATES_VERSION); 0 before it existed.
RATES_VERSION_MARK = "rates_version"


def day_of(value: object) -> date:
    """A Date column as the driver returns it (SQLite may hand back text)."""
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    return date.fromisoformat(str(value))


# --- watermarks --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Marks:
    """The newest tstamp and uid of each source table (or as stored by the last measurement)."""

    conversation_tstamp: int = 0
    conversation_uid: int = 0
    message_uid: int = 0
    run_tstamp: int = 0
    run_uid: int = 0
    event_uid: int = 0

    def as_rows(self) -> dict[str, int]:
        """The marks by name, as tx_runrecord_measure_mark stores them."""
        return dict(self.__dict__)


def source_marks(connection: Connection) -> Marks:
    """The newest tstamp and uid of conversations, messages, runs and events, as they stand now."""
    c, m, r, e = conversation.c, message.c, agentrun.c, event.c
    conversations = connection.execute(select(func.max(c.tstamp), func.max(c.uid))).one()
    runs = connection.execute(select(func.max(r.tstamp), func.max(r.uid))).one()
    return Marks(
        conversation_tstamp=int(conversations[0] or 0),
        conversation_uid=int(conversations[1] or 0),
        message_uid=int(connection.execute(select(func.max(m.uid))).scalar() or 0),
        run_tstamp=int(runs[0] or 0),
        run_uid=int(runs[1] or 0),
        event_uid=int(connection.execute(select(func.max(e.uid))).scalar() or 0),
    )


def stored_marks(connection: Connection) -> dict[str, int]:
    """The marks the last measurement stored, by name (empty before the first)."""
    rows = connection.execute(select(mark.c.name, mark.c.value))
    return {str(row.name): int(row.value) for row in rows}


def rates_version(connection: Connection) -> int:
    """The RATES_VERSION of the last measurement: 0 when none stored one (no measurement, or an older one)."""
    query = select(mark.c.value).where(mark.c.name == RATES_VERSION_MARK)
    return int(connection.execute(query).scalar() or 0)


def touched_conversations(connection: Connection, marks: Marks, margin_s: int, limit: int) -> set[int] | None:
    """Conversations changed since `marks`: their row, a new message, or a run or event of a run they name.

    Rows stamped up to margin_s before a mark are read again, for a transaction that committed late. None
    when more than `limit` changed: then reading every conversation costs about the same.
    """
    c, m, r, e, f = conversation.c, message.c, agentrun.c, event.c, fact.c
    queries = [
        select(c.uid).where(
            or_(c.tstamp >= marks.conversation_tstamp - margin_s, c.uid > marks.conversation_uid)
        ),
        select(m.conversation).where(m.uid > marks.message_uid).distinct(),
        select(f.conversation_uid)
        .join(agentrun, r.uid == f.run_uid)
        .where(f.message_uid == 0, f.conversation_uid > 0, r.tstamp >= marks.run_tstamp - margin_s)
        .distinct(),
        select(f.conversation_uid)
        .join(event, e.run == f.run_uid)
        .where(f.message_uid == 0, f.conversation_uid > 0, e.uid > marks.event_uid)
        .distinct(),
    ]
    found: set[int] = set()
    for query in queries:
        for (uid,) in connection.execute(query.limit(limit + 1)):
            found.add(int(uid))
            if len(found) > limit:
                return None
    return found


# --- runs without a conversation's fact -------------------------------------------------------------


def unnamed_runs(
    connection: Connection, *, after: int, limit: int, since: Marks | None, margin_s: int
) -> Sequence[Any]:
    """Runs without a conversation's fact (none at all, or one that no conversation names), after `after`.

    With `since`, only runs new or updated since those marks.
    """
    r, f = agentrun.c, fact.c
    named = select(f.run_uid).where(f.run_uid == r.uid, f.message_uid == 0, f.conversation_uid > 0).exists()
    condition: ColumnElement[bool] = and_(r.uid > after, ~named)
    if since is not None:
        condition = and_(condition, or_(r.uid > since.run_uid, r.tstamp >= since.run_tstamp - margin_s))
    query = select(*run_columns()).where(condition).order_by(r.uid).limit(limit)
    return connection.execute(query).all()


# --- facts ----------------------------------------------------------------------------------------------


_FACT_COLUMNS = tuple(c for c in fact.c if c.name != "measured_at")


def facts_of_conversations(connection: Connection, conversation_uids: Collection[int]) -> Sequence[Any]:
    """The stored facts of the conversations (every column but measured_at)."""
    query = select(*_FACT_COLUMNS).where(fact.c.conversation_uid.in_(list(conversation_uids)))
    return connection.execute(query).all()


def facts_of_runs(connection: Connection, run_uids: Collection[int]) -> Sequence[Any]:
    """The stored facts of the runs (every column but measured_at)."""
    if not run_uids:
        return []
    f = fact.c
    query = select(*_FACT_COLUMNS).where(f.run_uid.in_(list(run_uids)), f.message_uid == 0)
    return connection.execute(query).all()


def earliest_end_after(connection: Connection, cutoff: int) -> int | None:
    """The earliest run end at or after `cutoff` (now − window): the first run that may still change."""
    f = fact.c
    value = connection.execute(select(func.min(f.ended_at)).where(f.ended_at >= cutoff)).scalar()
    return None if value is None else int(value)


def _period_column(grain: Grain) -> Any:
    return fact.c.week_start if grain is Grain.WEEK else fact.c.day_start


def fact_periods(connection: Connection, grain: Grain, *, before: date) -> set[date]:
    """The periods before `before` that hold a fact."""
    column = _period_column(grain)
    query = select(column).where(fact.c.ended_at < unix_of(before)).distinct()
    return {day_of(value) for value in connection.execute(query).scalars()}


def stored_periods(connection: Connection, grain: Grain) -> set[date]:
    """The periods tx_runrecord_rate holds rows of at this grain."""
    r = rate.c
    query = select(r.period_start).where(r.grain == grain.value).distinct()
    return {day_of(value) for value in connection.execute(query).scalars()}


def periods_with(connection: Connection, grain: Grain, metric: Metric, *, before: date) -> set[date]:
    """The periods before `before` that tx_runrecord_rate holds a row of the metric in, at this grain."""
    r = rate.c
    query = (
        select(r.period_start)
        .where(r.grain == grain.value, r.metric == metric.value, r.period_start < before)
        .distinct()
    )
    return {day_of(value) for value in connection.execute(query).scalars()}


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


def first_notice_at(connection: Connection) -> int | None:
    """When the installation's first completed answer with a stored nothingSaved notice was stored (its
    fact's time); None while there is none. Every fact counts, not only those of the periods written."""
    f = fact.c
    # In ended_at order (its index) up to the first match, rather than min() over every fact.
    query = (
        select(f.ended_at)
        .where(f.answer == AnswerState.READ.value, f.notice == 1)
        .order_by(f.ended_at)
        .limit(1)
    )
    value = connection.execute(query).scalar()
    return None if value is None else int(value)


def fact_tallies(
    connection: Connection,
    grain: Grain,
    *,
    open_from: date | None,
    periods: Collection[date],
    first_notice: int | None = None,
) -> list[FactTally]:
    """Facts counted per period, configuration, skill and state, and whether they are at or after
    `first_notice` (first_notice_at)."""
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
    query = (
        select(*keys, func.sum(f.runs), func.count())
        .where(_in_periods(grain, open_from, periods))
        .group_by(*keys)
    )
    tallies = []
    for row in connection.execute(query).all():
        since = first_notice is not None and bool(row[9])
        runs, facts = row[-2], row[-1]
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
            )
        )
    return tallies


def _run_facts() -> Any:
    f, o = fact.c, run_outcome.c
    return run_outcome.join(fact, and_(f.run_uid == o.run_uid, f.message_uid == 0))


def outcome_tallies(
    connection: Connection, grain: Grain, *, open_from: date | None, periods: Collection[date]
) -> list[OutcomeTally]:
    """Derived runs counted per period of the run's end, configuration, skill and outcome."""
    f, o = fact.c, run_outcome.c
    period = _period_column(grain)
    keys = (period, f.configuration_identifier, f.skill_identifier, o.outcome)
    query = (
        select(*keys, func.count())
        .select_from(_run_facts())
        .where(_in_periods(grain, open_from, periods))
        .group_by(*keys)
    )
    return [
        OutcomeTally(day_of(row[0]), row[1], row[2], str(row[3]), int(row[4]))
        for row in connection.execute(query).all()
    ]


def edited_writes(
    connection: Connection, grain: Grain, *, open_from: date | None, periods: Collection[date]
) -> Iterator[EditedWrite]:
    """The EDITED writes of EDITED runs in run order, with the run's period and groups; a run without one
    yields NULL. Streamed: an installation has as many as it has EDITED runs."""
    f, o, w = fact.c, run_outcome.c, write_outcome.c
    edited = CallOutcome.EDITED.value
    joined = _run_facts().outerjoin(write_outcome, and_(w.run_uid == o.run_uid, w.outcome == edited))
    query = (
        select(_period_column(grain), f.configuration_identifier, f.skill_identifier, o.run_uid, w.edit_scope)
        .select_from(joined)
        .where(o.outcome == edited, _in_periods(grain, open_from, periods))
        .order_by(o.run_uid)
        .execution_options(yield_per=STREAM_ROWS)
    )
    for row in connection.execute(query):
        yield EditedWrite(day_of(row[0]), row[1], row[2], int(row[3]), row[4])


def window_open_tallies(connection: Connection, grain: Grain, *, cutoff: int) -> list[OpenTally]:
    """Runs still inside their window at `cutoff` = now − window, per period of the run's end, configuration
    and skill: run facts ending at or after the cutoff, with a tool_write at or after it (the last write's
    window has not closed: core.outcomes.is_due) and without a row in tx_runrecord_run_outcome.

    A run ends after its writes, so only the run facts of the last window (the ended_at index) are looked at,
    and for each an index probe of its events (run, sequence) that stops at the first write in the window.
    On PostgreSQL both probes are fenced (OFFSET 0): unfenced, and without statistics, its planner may hash
    every tool_write event instead (as adapters.derivation fences the answered runs).
    """
    f, e, o = fact.c, event.c, run_outcome.c
    answered = select(o.run_uid).where(o.run_uid == f.run_uid)
    wrote = select(e.uid).where(e.run == f.run_uid, e.kind == EventKind.TOOL_WRITE.value, e.crdate >= cutoff)
    if connection.dialect.name == sql.POSTGRESQL:
        answered, wrote = answered.offset(0), wrote.offset(0)
    keys = (_period_column(grain), f.configuration_identifier, f.skill_identifier)
    query = (
        select(*keys, func.count())
        .where(f.message_uid == 0, f.ended_at >= cutoff, ~answered.exists(), wrote.exists())
        .group_by(*keys)
    )
    return [OpenTally(day_of(row[0]), row[1], row[2], int(row[3])) for row in connection.execute(query).all()]


def rate_keys(
    connection: Connection, grain: Grain, *, open_from: date | None, periods: Collection[date]
) -> Sequence[Any]:
    """The stored rate rows of the periods about to be written: uid and key."""
    r = rate.c
    conditions: list[ColumnElement[bool]] = []
    if open_from is not None:
        conditions.append(r.period_start >= open_from)
    if periods:
        conditions.append(r.period_start.in_(sorted(periods)))
    where = or_(*conditions) if conditions else true()
    query = select(r.uid, r.metric, r.period_start, r.group_kind, r.group_value).where(
        r.grain == grain.value, where
    )
    return connection.execute(query).all()


# --- releases and comparisons -------------------------------------------------------------------------


def releases(connection: Connection) -> Sequence[Any]:
    """Every release marker, oldest first."""
    rel = schema.release.c
    return connection.execute(select(rel.released_on, rel.label).order_by(rel.released_on, rel.label)).all()


def release_labels_on(connection: Connection, day: date) -> list[str]:
    """The labels of the markers of one day."""
    rel = schema.release.c
    query = select(rel.label).where(rel.released_on == day).order_by(rel.label)
    return [str(label) for label in connection.execute(query).scalars()]


@dataclass(frozen=True)
class PeriodFigures:
    numerator: int
    denominator: int
    excluded: int


def rate_figures(
    connection: Connection,
    grain: Grain,
    metrics: Sequence[str],
    group_kind: str,
    group_value: str,
    periods: Iterable[date],
) -> dict[tuple[str, date], PeriodFigures]:
    """The stored figures of the metrics for one group in the listed periods."""
    chosen = sorted(set(periods))
    if not chosen:
        return {}
    r = rate.c
    query = select(r.metric, r.period_start, r.numerator, r.denominator, r.excluded).where(
        r.grain == grain.value,
        r.metric.in_(list(metrics)),
        r.group_kind == group_kind,
        r.group_value == group_value,
        r.period_start.in_(chosen),
    )
    return {
        (str(row.metric), day_of(row.period_start)): PeriodFigures(
            int(row.numerator), int(row.denominator), int(row.excluded)
        )
        for row in connection.execute(query)
    }


def stored_total(connection: Connection, grain: Grain, metric: Metric) -> tuple[PeriodFigures, date | None]:
    """A metric's stored rows of all runs at a grain, every period summed (the rate table is small), and
    the first period that holds one (None: none does)."""
    r = rate.c
    query = select(
        func.sum(r.numerator), func.sum(r.denominator), func.sum(r.excluded), func.min(r.period_start)
    ).where(r.grain == grain.value, r.metric == metric.value, r.group_kind == ALL_RUNS.kind.value)
    numerator, denominator, excluded, first = connection.execute(query).one()
    figures = PeriodFigures(int(numerator or 0), int(denominator or 0), int(excluded or 0))
    return figures, None if first is None else day_of(first)


def measured_grains(connection: Connection) -> set[str]:
    """The grains tx_runrecord_rate holds."""
    return {str(grain) for grain in connection.execute(select(rate.c.grain).distinct()).scalars()}


def group_values(connection: Connection, grain: Grain, group_kind: str) -> list[str]:
    """The values of a group kind the rates hold at a grain."""
    r = rate.c
    query = (
        select(r.group_value)
        .where(r.grain == grain.value, r.group_kind == group_kind)
        .distinct()
        .order_by(r.group_value)
    )
    return [str(value) for value in connection.execute(query).scalars()]
