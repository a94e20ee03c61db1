"""Reads of a run's events (tx_nrllm_agentrun_event): columns, and of a payload only the keys a rule may
read."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import ColumnElement, Connection, Select, case, func, or_, select, type_coerce
from sqlalchemy.engine import Dialect
from sqlalchemy.types import NullType, TypeDecorator

from adapters import schema
from adapters.dialect import documents as doc
from adapters.dialect import json as sqljson
from adapters.dialect import payload as sqlpayload
from adapters.dialect.names import SQLITE
from core.events import OPENERS, Event, EventKind, EventProblem, Problem, read_event
from core.measured_runs import EventCounts
from core.waits import Step

event = schema.agentrun_event

KINDS = tuple(kind.value for kind in EventKind)  # the kinds core.events reads
_OPENERS = tuple(sorted(kind.value for kind in OPENERS))
# The event's columns core reads as numbers: an INTEGER or DECIMAL column of SQLite may hold text.
_NUMBER_COLUMNS = ("sequence", "round", "crdate", "duration_ms")


def count_columns() -> list[ColumnElement[Any]]:
    """What core.measured_runs.EventCounts holds, as aggregates over a run's event rows, in its order: events,
    tool_writes, approvals, openers, the first write's time and sequence, the last opener's sequence."""
    e = event.c
    is_write = e.kind == EventKind.TOOL_WRITE.value
    is_opener = e.kind.in_(_OPENERS)
    return [
        func.count(),
        func.sum(case((is_write, 1), else_=0)),
        func.sum(case((e.kind == EventKind.APPROVAL.value, 1), else_=0)),
        func.sum(case((is_opener, 1), else_=0)),
        func.min(case((is_write, e.crdate))),
        func.min(case((is_write, e.sequence))),
        func.max(case((is_opener, e.sequence))),
    ]


def event_counts(connection: Connection, run_uids: Collection[int]) -> dict[int, EventCounts]:
    """Per run: its events, tool_writes, approvals, openers, first write and last opener (columns only)."""
    if not run_uids:
        return {}
    e = event.c
    query = select(e.run, *count_columns()).where(e.run.in_(list(run_uids))).group_by(e.run)
    counts: dict[int, EventCounts] = {}
    for row in connection.execute(query).all():
        counts[int(row[0])] = EventCounts(
            events=int(row[1]),
            tool_writes=int(row[2] or 0),
            approvals=int(row[3] or 0),
            openers=int(row[4] or 0),
            first_write_at=None if row[5] is None else int(row[5]),
            first_write_sequence=None if row[6] is None else int(row[6]),
            last_opener_sequence=None if row[7] is None else int(row[7]),
        )
    return counts


def event_problems(connection: Connection, run_uids: Collection[int]) -> dict[int, int]:
    """Per run: events core.events.parse_event might not read (a kind it does not know, a payload that is
    not a JSON object, sequence or duration NULL). A run the database vouches for has 0; any other is read
    event by event in core, which decides."""
    if not run_uids:
        return {}
    return sqljson.cast_first(
        connection, lambda guarded: _event_problems(connection, run_uids, guarded=guarded)
    )


def doubtful(dialect: str, *, guarded: bool) -> ColumnElement[bool]:
    """An event core.events.parse_event might not read: a kind it does not know, a payload that is not a JSON
    object, sequence or duration NULL, on SQLite a number column holding text (`guarded`:
    adapters.dialect.json.cast_first)."""
    e = event.c
    checks = [
        e.kind.not_in(KINDS),
        e.sequence.is_(None),
        e.duration_ms.is_(None),
        ~doc.is_object(dialect, e.payload, guarded=guarded),
    ]
    if dialect == SQLITE:
        # A number column holding text (event_of: Problem.NOT_A_NUMBER), which only SQLite keeps: SQLite's max
        # of several values is a text or blob when one of them is. One call a row, where a typeof of each
        # column made the pass over the wide shape's events 0.14 s slower (measured).
        largest = func.max(*(e[column] for column in _NUMBER_COLUMNS))
        checks.append(func.typeof(largest).in_(("text", "blob")))
    return or_(*checks)


def _event_problems(connection: Connection, run_uids: Collection[int], *, guarded: bool) -> dict[int, int]:
    e = event.c
    problem = case((doubtful(connection.dialect.name, guarded=guarded), 1), else_=0)
    query = select(e.run, func.sum(problem)).where(e.run.in_(list(run_uids))).group_by(e.run)
    return {int(row[0]): int(row[1] or 0) for row in connection.execute(query).all()}


def events_of(connection: Connection, run_uids: Collection[int]) -> Sequence[Any]:
    """Every event of the runs, for core.saved: its columns, `payload_shape` and `kept_payload` (only the
    payload keys a rule may read, never the rest: core.events.read_event reads them)."""
    if not run_uids:
        return []
    e = event.c
    name = connection.dialect.name
    duration = type_coerce(e.duration_ms, _StoredDuration()) if name == SQLITE else e.duration_ms

    def query(guarded: bool) -> Select[Any]:
        return (
            select(
                e.uid,
                e.run,
                e.sequence,
                e.kind,
                e.round,
                duration.label("duration_ms"),
                sqlpayload.payload_shape(name, e.payload, guarded=guarded).label("payload_shape"),
                sqlpayload.kept_payload(name, e.payload, guarded=guarded).label("kept_payload"),
                e.crdate,
            )
            .where(e.run.in_(list(run_uids)))
            .order_by(e.run, e.sequence, e.uid)
        )

    return sqljson.cast_first(connection, lambda guarded: connection.execute(query(guarded)).all())


@dataclass(frozen=True)
class RunEvents:
    """The events of some runs as core.events reads them: the readable ones by run uid, in sequence order,
    and each one that cannot be read with its run's uid."""

    by_run: Mapping[int, tuple[Event, ...]]
    problems: tuple[tuple[int, EventProblem], ...]


def read_events(connection: Connection, run_uids: Collection[int]) -> RunEvents:
    """The events of the runs, read by core from the payload keys a rule may read (the database hands over
    no argument, result or content); a run without a readable event has no entry."""
    found: dict[int, list[Event]] = defaultdict(list)
    problems: list[tuple[int, EventProblem]] = []
    for row in events_of(connection, run_uids):
        parsed = event_of(row)
        if isinstance(parsed, EventProblem):
            problems.append((int(row.run), parsed))
        else:
            found[int(row.run)].append(parsed)
    return RunEvents({uid: tuple(events) for uid, events in found.items()}, tuple(problems))


def _not_a_number(row: Any) -> str | None:
    """The first of the row's number columns that holds text or bytes, else None: SQLite stores a text that
    reads as a number as the number, so what stays text is none (whatever Python's float would make of it)."""
    for column in _NUMBER_COLUMNS:
        if isinstance(getattr(row, column), str | bytes):
            return column
    return None


class _StoredDuration(TypeDecorator[Any]):
    """SQLite's duration_ms as stored: a number as the decimal the column's own type makes of it, a text or
    blob (which only SQLite keeps in a number column) as it is, for event_of to name; the column's type
    would stop the whole read at it."""

    impl = NullType
    cache_ok = True

    def result_processor(self, dialect: Dialect, coltype: Any) -> Callable[[Any], Any] | None:
        convert = event.c.duration_ms.type.result_processor(dialect, coltype)  # once for the whole result
        if convert is None:
            return None

        def process(value: Any) -> Any:
            return value if isinstance(value, str | bytes) or value is None else convert(value)

        return process


def event_of(row: Any) -> Event | EventProblem:
    """A row of `events_of` as core.events reads it."""
    column = _not_a_number(row)
    if column is not None:
        return EventProblem(int(row.uid), Problem.NOT_A_NUMBER, column)
    return read_event(
        int(row.uid),
        row.sequence,
        str(row.kind),
        int(row.round),
        row.duration_ms,
        row.payload_shape,
        row.kept_payload,
        int(row.crdate),
    )


def steps_of(connection: Connection, run_uids: Collection[int]) -> dict[int, list[Step]]:
    """Per run: its events' uid, sequence, kind and crdate (no payload), for the approval waits."""
    if not run_uids:
        return {}
    e = event.c
    query = (
        select(e.uid, e.run, e.sequence, e.kind, e.crdate)
        .where(e.run.in_(list(run_uids)))
        .order_by(e.run, e.sequence, e.uid)
    )
    steps: dict[int, list[Step]] = {}
    for row in connection.execute(query).all():
        sequence = -1 if row.sequence is None else int(row.sequence)
        steps.setdefault(int(row.run), []).append(
            Step(int(row.uid), sequence, str(row.kind), int(row.crdate))
        )
    return steps
