"""A step's duration is its payload's durationMs, the decimal(10,2) column only without it (000_…, amendment:
a refusal is an error of exactly 0.0 ms, a call that ran is timed). On SQLite, MariaDB and PostgreSQL."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from sqlalchemy import Engine, insert, select

from adapters import schema
from adapters.events import event_of, events_of
from core.events import Event, split_segments
from core.refused import RefusalReading, Shape, read_segment, shape_of

RUN = 1
T0 = 1_790_000_000


def _plant_an_approved_call_that_failed(engine: Engine, written_duration: str) -> None:
    """A card approved, its call failing after `written_duration` ms, stored with the column rounded."""
    tool_payload = (
        '{"kind": "tool", "round": 1, "durationMs": ' + written_duration + ', "toolName": "update_page_seo", '
        '"toolIsError": true, "toolArgumentsLength": 12, "toolResultLength": 40}'
    )
    events = [
        ("llm", 1, Decimal("850.00"), json.dumps({"kind": "llm", "round": 1, "durationMs": 850.0,
                                                  "requestedToolNames": ["update_page_seo"]})),
        ("approval", 0, Decimal("0.00"), json.dumps({"kind": "approval", "round": 0, "durationMs": 0,
                                                     "approved": True, "decidedBy": 7})),
        ("tool", 1, Decimal("0.00"), tool_payload),
        ("llm", 2, Decimal("900.00"), json.dumps({"kind": "llm", "round": 2, "durationMs": 900.0,
                                                  "requestedToolNames": []})),
    ]  # fmt: skip
    with engine.begin() as connection:
        connection.execute(
            insert(schema.agentrun_event),
            [
                {
                    "uid": 10 + sequence,
                    "pid": 0,
                    "run": RUN,
                    "sequence": sequence,
                    "kind": kind,
                    "round": round_,
                    "duration_ms": column,
                    "payload": payload,
                    "crdate": T0 + sequence,
                }
                for sequence, (kind, round_, column, payload) in enumerate(events)
            ],
        )


@pytest.mark.parametrize("written_duration", ["0.004", "4e-3", "0.0040"])
def test_a_tool_error_of_0_004_ms_stored_with_the_column_at_0_00_reads_as_a_timed_error_not_a_refusal(
    installation_engine: Engine, written_duration: str
) -> None:
    _plant_an_approved_call_that_failed(installation_engine, written_duration)

    e = schema.agentrun_event.c
    with installation_engine.connect() as connection:
        column = connection.execute(select(e.duration_ms).where(e.kind == "tool")).scalar_one()
        read = [event_of(row) for row in events_of(connection, [RUN])]

    events = [event for event in read if isinstance(event, Event)]
    (step,) = [event for event in events if event.kind.value == "tool"]
    (_, approved) = split_segments(events)
    (reading,) = read_segment(approved)
    assert Decimal(str(column)) == 0 and len(events) == len(read) == 4
    assert step.duration_ms == 0.004
    assert shape_of(step) is Shape.TIMED_ERROR
    assert (reading.reading, reading.in_record, reading.failed) == (RefusalReading.FAILURE, True, True)
