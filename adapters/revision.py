"""The revision our tables are at, as Alembic records it in its version table, read without Alembic: a job
checks it each time it starts, and importing Alembic would cost it half a second."""

from __future__ import annotations

from sqlalchemy import Column, Connection, MetaData, String, Table, inspect, select

from adapters.database import RunrecordError
from adapters.schema import VERSION_TABLE

# Alembic's own version table (one row, the revision); its metadata is kept apart from ours so that nothing
# but the migrations creates it.
_version = Table(VERSION_TABLE, MetaData(), Column("version_num", String(32), primary_key=True))


def stored_revision(connection: Connection) -> str | None:
    """The revision the migrations left our tables at; None before the first migration ran."""
    if not inspect(connection).has_table(VERSION_TABLE):
        return None
    revisions = sorted(connection.execute(select(_version.c.version_num)).scalars())
    if len(revisions) > 1:
        raise RunrecordError(f"{VERSION_TABLE} holds several revisions ({', '.join(revisions)}), not one")
    return revisions[0] if revisions else None
