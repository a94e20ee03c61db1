"""Buffered, batched writing of generated rows, with uids assigned up front.

The builder assigns every uid itself so that rows can name each other without a round trip; the buffer
writes them in batches of executemany inserts, in the order that keeps references valid.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from sqlalchemy import Connection, Table, func, select

from adapters import schema
from adapters.dialect import bulk

Row = dict[str, Any]

# Upstream tables in the order they are flushed; ours are never written by the builder.
TABLES: tuple[Table, ...] = (
    schema.be_users,
    schema.nrllm_configuration,
    schema.pages,
    schema.tt_content,
    schema.agentrun,
    schema.agentrun_event,
    schema.conversation,
    schema.message,
    schema.sys_history,
    schema.call_outcome,
)

FLUSH_ROWS = 20_000  # rows buffered before a flush: large enough for executemany, small enough for memory


class RowBuffer:
    """Rows per table, written to a connection whenever FLUSH_ROWS have gathered (or on flush())."""

    def __init__(
        self,
        connection: Connection | None,
        *,
        flush_rows: int = FLUSH_ROWS,
        on_flush: Callable[[int], None] | None = None,
    ) -> None:
        self._connection = connection
        self._flush_rows = flush_rows
        self._on_flush = on_flush
        self._rows: dict[str, list[Row]] = {table.name: [] for table in TABLES}
        self._pending = 0
        self.written = 0
        self._next_uid = dict.fromkeys(self._rows, 1)
        if connection is not None:
            for table in TABLES:
                highest = connection.execute(select(func.max(table.c.uid))).scalar()
                self._next_uid[table.name] = (highest or 0) + 1

    def uid(self, table: Table) -> int:
        """The next free uid of a table."""
        value = self._next_uid[table.name]
        self._next_uid[table.name] = value + 1
        return value

    def add(self, table: Table, row: Row) -> None:
        """Queue a row; flushes when the buffer is full."""
        self._rows[table.name].append(row)
        self._pending += 1
        if self._pending >= self._flush_rows:
            self.flush()

    def rows(self, table: Table) -> list[Row]:
        """The rows of a table still in the buffer (for tests that build without a database)."""
        return self._rows[table.name]

    def flush(self) -> None:
        """Write every queued row."""
        if self._connection is None or self._pending == 0:
            return
        for table in TABLES:
            queued = self._rows[table.name]
            if queued:
                for chunk in _uniform_chunks(queued):
                    self._connection.execute(table.insert(), chunk)
                queued.clear()
        self.written += self._pending
        self._pending = 0
        if self._on_flush is not None:
            self._on_flush(self.written)

    def finish(self) -> None:
        """Flush, and move PostgreSQL's uid sequences past the uids written explicitly."""
        self.flush()
        if self._connection is not None:
            bulk.after_explicit_uids(self._connection, TABLES)


def _uniform_chunks(rows: list[Row]) -> Iterable[list[Row]]:
    """Runs of rows with the same keys: executemany needs one column list per statement."""
    start = 0
    for index in range(1, len(rows) + 1):
        if index == len(rows) or rows[index].keys() != rows[start].keys():
            yield rows[start:index]
            start = index
