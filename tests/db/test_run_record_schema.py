"""Both readers of a run record entry follow core.run_record_schema.ENTRY, on every dialect.

The Python reader (core.run_record_json.from_json) and the SQL check that measure-rates keeps an entry by
(adapters.measure_batch.entries.readable_entry, read as fill_entries reads a record) are given one entry per
field of the schema that is malformed, null or missing there (tests/unit/core/run_record_schema_cases.py),
and must agree with each other and with what the schema says of the field. The cases are built from the
schema, so a field added to it is checked here without a line of this file changing.
"""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import Engine, String, literal, select

from adapters.dialect import document_members as doc_members
from adapters.dialect import documents as doc
from adapters.measure_batch.entries import ENTRY_MEMBERS, readable_entry
from core.run_record import RunRecordEntry
from core.run_record_json import from_json
from tests.unit.core.run_record_schema_cases import cases


def _sql_readable(engine: Engine, entries: list[dict[str, Any]]) -> list[bool]:
    """readable_entry of each entry of a stored record, read as fill_entries reads one, in record order."""
    with engine.connect() as connection:
        d = connection.dialect.name
        source = select(literal(json.dumps(entries), String).label("record")).subquery("source")
        items, position, item = doc_members.array_items(
            d, doc.document(d, source.c.record, of="array"), ENTRY_MEMBERS
        )
        query = (
            select(position, readable_entry(d, item))
            .select_from(source.join(items, literal(True)))
            .order_by(position)
        )
        rows = connection.execute(query).all()
    assert [int(row[0]) for row in rows] == list(range(len(entries)))
    return [bool(row[1]) for row in rows]


def test_the_sql_check_and_the_python_reader_agree_with_the_schema_on_every_field_malformed_null_or_missing(
    installation_engine: Engine,
) -> None:
    table = cases()

    in_sql = _sql_readable(installation_engine, [entry for _, entry, _ in table])
    in_python = [isinstance(from_json(entry), RunRecordEntry) for _, entry, _ in table]

    found = {what: (python, sql) for (what, _, _), python, sql in zip(table, in_python, in_sql, strict=True)}
    expected = {what: (readable, readable) for what, _, readable in table}
    assert found == expected
