"""How many rows each table holds, upstream and ours."""

from __future__ import annotations

from sqlalchemy import Connection, MetaData, func, select


def row_counts(connection: Connection, metadata: MetaData, present: frozenset[str]) -> dict[str, int | None]:
    """Rows per table of `metadata`, in dependency order; None for a table the database lacks."""
    return {
        table.name: int(connection.execute(select(func.count()).select_from(table)).scalar_one())
        if table.name in present
        else None
        for table in metadata.sorted_tables
    }
