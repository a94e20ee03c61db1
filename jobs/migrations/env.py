"""The Alembic environment: migrates on the connection jobs.schema_setup hands over, in its transaction."""

from __future__ import annotations

from alembic import context
from sqlalchemy import Connection

from adapters.schema import VERSION_TABLE, ours
from jobs.migrations import compare_server_default, is_ours


def run_migrations_online() -> None:
    connection = context.config.attributes.get("connection")
    if not isinstance(connection, Connection):
        raise RuntimeError("run the migrations through jobs.schema_setup (runrecord init-db), which connects")
    context.configure(
        connection=connection,
        target_metadata=ours,
        version_table=VERSION_TABLE,
        include_name=is_ours,
        compare_server_default=compare_server_default,
    )
    # The caller's transaction is already open, so Alembic joins it instead of committing on its own.
    with context.begin_transaction():
        context.run_migrations()


if context.is_offline_mode():
    raise RuntimeError("offline (--sql) migrations are not supported; run `runrecord init-db`")
run_migrations_online()
