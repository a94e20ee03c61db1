"""tx_runrecord_measure_mark: what the last measurement read of each source table, and its rule versions.

A rerun reads only the conversations changed since these marks (adapters.measure_since); the versions say
which rules the stored facts follow and which metrics the stored rates hold, so that a page can tell a
database measured before a metric existed from one where it counts none.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime
from typing import Any

from sqlalchemy import Column, Connection, func, select

from adapters import schema
from adapters.dialect import bulk
from adapters.errors import RunrecordError
from core.periods import Grain, period_start, unix_of

mark = schema.measure_mark

# The mark that says which rules the stored facts follow (core.facts.MEASURE_VERSION).
VERSION_MARK = "version"
# The mark that said which metrics the stored rates of both grains held (core.metrics.RATES_VERSION), as a
# runrecord from before GRAIN_RATES_VERSION_MARK stored it: read where a grain has no mark of its own.
RATES_VERSION_MARK = "rates_version"
# The first open period of each grain as the last measurement found it (core.periods.open_from), as unix time.
OPEN_FROM_MARK = "open_from_{grain}"
# When the last measurement read the tables at the earliest: its `now`, or the system clock at its start where
# that `now` was ahead (adapters.measure_since).
MEASURED_AT_MARK = "measured_at"
# What each grain's stored rates were written from (GrainMarks): a measurement of one grain (`--grain`)
# leaves the other grain's rates, and so what they still lack, as they were. Stored by each measurement for
# every grain; before they existed the shared marks above said it for both.
GRAIN_RATES_VERSION_MARK = "rates_version_{grain}"
GRAIN_MEASURE_VERSION_MARK = "measure_version_{grain}"
GRAIN_OUTCOME_MARK = "outcome_uid_{grain}"


@dataclass(frozen=True)
class Marks:
    """The newest tstamp and uid of each source table, and the newest outcome derive-outcomes stored (or as
    stored by the last measurement)."""

    conversation_tstamp: int = 0
    conversation_uid: int = 0
    message_uid: int = 0
    run_tstamp: int = 0
    run_uid: int = 0
    event_uid: int = 0
    outcome_uid: int = 0  # tx_runrecord_run_outcome, whose rows are only ever added

    def at_most(self, now: int) -> Marks:
        """The stamps no later than `now`. A row stamped in the future (a clock gone wrong, a hand-made row)
        would otherwise be the mark, and every change stamped before it would look old to the next run; so
        such a row is read again by each run until its stamp has passed."""
        return replace(
            self,
            conversation_tstamp=min(self.conversation_tstamp, now),
            run_tstamp=min(self.run_tstamp, now),
        )

    def as_rows(self) -> dict[str, int]:
        """The marks by name, as tx_runrecord_measure_mark stores them."""
        return dict(self.__dict__)


@dataclass(frozen=True)
class GrainMarks:
    """What a grain's stored rates were written from: the metrics they hold (RATES_VERSION), the rules of
    the facts its closed periods were written from (MEASURE_VERSION; None before any), and the outcomes
    derive-outcomes had stored when they were last written (its closed periods holding a run derived after
    that are written again)."""

    rates_version: int
    measure_version: int | None
    outcome_uid: int | None

    def as_rows(self, grain: Grain) -> dict[str, int]:
        """The marks by name; none for a value not known."""
        values = {
            GRAIN_RATES_VERSION_MARK: self.rates_version,
            GRAIN_MEASURE_VERSION_MARK: self.measure_version,
            GRAIN_OUTCOME_MARK: self.outcome_uid,
        }
        return {name.format(grain=grain.value): value for name, value in values.items() if value is not None}


def grain_marks(stored: Mapping[str, int], grain: Grain) -> GrainMarks:
    """The grain's marks as stored. Where the last measurement was by a runrecord from before them (no grain
    has a rates version of its own), the shared marks it left say it for both grains; otherwise a mark the
    grain lacks is not known (a grain never measured: rates version 0)."""
    older = not any(GRAIN_RATES_VERSION_MARK.format(grain=of.value) in stored for of in Grain)

    def of_grain(name: str, shared: str) -> int | None:
        return stored.get(name.format(grain=grain.value), stored.get(shared) if older else None)

    return GrainMarks(
        rates_version=of_grain(GRAIN_RATES_VERSION_MARK, RATES_VERSION_MARK) or 0,
        measure_version=of_grain(GRAIN_MEASURE_VERSION_MARK, VERSION_MARK),
        outcome_uid=of_grain(GRAIN_OUTCOME_MARK, "outcome_uid"),
    )


class NotANumberError(RunrecordError):
    """A number column of the installation holding text: only SQLite's loose typing lets a table keep one."""


def source_marks(connection: Connection) -> Marks:
    """The newest tstamp and uid of conversations, messages, runs and events, and the newest outcome, as they
    stand now: a pass over the conversation and the run table each, which keep no index on tstamp."""
    c, r = schema.conversation.c, schema.agentrun.c
    return replace(
        newest_uids(connection),
        conversation_tstamp=stamp_of(
            connection, connection.execute(select(func.max(c.tstamp))).scalar(), c.tstamp
        ),
        run_tstamp=stamp_of(connection, connection.execute(select(func.max(r.tstamp))).scalar(), r.tstamp),
    )


def newest_uids(connection: Connection) -> Marks:
    """The newest uid of each source table and the newest outcome, each read at the end of its primary key, in
    one statement; the stamps left 0."""
    tables = {
        "conversation_uid": schema.conversation,
        "message_uid": schema.message,
        "run_uid": schema.agentrun,
        "event_uid": schema.agentrun_event,
        "outcome_uid": schema.run_outcome,
    }
    newest = select(*(select(func.max(t.c.uid)).scalar_subquery().label(name) for name, t in tables.items()))
    row = connection.execute(newest).one()
    return Marks(**{name: int(row._mapping[name] or 0) for name in tables})


def stamp_of(connection: Connection, value: Any, column: Column[Any]) -> int:
    """The newest stamp `value` read of a column, as a number (0 for none); a text or blob there (SQLite sorts
    either after every number) is refused, naming the first row that holds one."""
    if not isinstance(value, str | bytes):
        return int(value or 0)
    table = column.table
    first = select(func.min(table.c.uid)).where(func.typeof(column).in_(("text", "blob")))
    raise not_a_number(column, connection.execute(first).scalar(), value, then="measure again")


def not_a_number(column: Column[Any], uid: object, value: str | bytes, *, then: str) -> NotANumberError:
    """The error for a row whose number column holds a text or blob, naming the row, never quoting it; `then`:
    what to do once it is mended."""
    held = "text" if isinstance(value, str) else "bytes"
    return NotANumberError(
        f"{column.table.name}.{column.name} of uid {uid} holds {held}, not a number (only SQLite keeps "
        f"either in an INTEGER column): mend the row, then {then}"
    )


def stored_marks(connection: Connection) -> dict[str, int]:
    """The marks the last measurement stored, by name (empty before the first)."""
    rows = connection.execute(select(mark.c.name, mark.c.value))
    return {str(row.name): int(row.value) for row in rows}


def rates_version(connection: Connection, grain: Grain) -> int:
    """The RATES_VERSION the grain's stored rates were written by: 0 when none stored one (no measurement, or
    an older one)."""
    names = [GRAIN_RATES_VERSION_MARK.format(grain=of.value) for of in Grain] + [RATES_VERSION_MARK]
    stored = {row.name: row.value for row in connection.execute(select(mark).where(mark.c.name.in_(names)))}
    return grain_marks(stored, grain).rates_version


def first_open(connection: Connection, grain: Grain, *, now: int) -> date:
    """The first period of the grain the last measurement treated as open (its rates may still change);
    before a measurement stored one, the period holding `now`."""
    query = select(mark.c.value).where(mark.c.name == OPEN_FROM_MARK.format(grain=grain.value))
    value = connection.execute(query).scalar()
    if value is None:
        return period_start(now, grain)
    return datetime.fromtimestamp(int(value), tz=UTC).date()


def save_marks(
    connection: Connection,
    marks: Marks,
    *,
    measure_version: int,
    grains: Mapping[Grain, GrainMarks],
    first_open: Mapping[Grain, date],
    now: int,
    measured_at: int,
) -> None:
    """Store the marks read, the version of the rules the facts follow, what each grain's rates were
    written from, the first open period of each grain measured, and when the measurement read the tables
    at the earliest (`measured_at`; `now` stamps the rows)."""
    opens = {OPEN_FROM_MARK.format(grain=grain.value): unix_of(day) for grain, day in first_open.items()}
    written = {name: value for grain, of in grains.items() for name, value in of.as_rows(grain).items()}
    values = {
        **marks.as_rows(),
        **opens,
        VERSION_MARK: measure_version,
        **written,
        MEASURED_AT_MARK: measured_at,
    }
    rows = [{"name": name, "value": value, "updated_at": now} for name, value in values.items()]
    connection.execute(bulk.upsert(connection.dialect.name, mark, ("name",)), rows)
