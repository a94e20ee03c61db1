"""Job runs name the process that runs them and carry its heartbeat, so that a killed run can be marked
interrupted (core.job_runs).

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-02

Written out column by column rather than taken from adapters.schema: a migration is frozen. A row written
before has no heartbeat; its start stands in for it, so that a row a killed job left running is marked
interrupted once it has been silent for long enough.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | tuple[str, ...] | None = "0004"
branch_labels: str | tuple[str, ...] | None = None
depends_on: str | tuple[str, ...] | None = None

TABLE = "tx_runrecord_job_run"


def upgrade() -> None:
    op.add_column(TABLE, sa.Column("host", sa.String(255), nullable=False, server_default=""))
    op.add_column(TABLE, sa.Column("pid", sa.Integer(), nullable=False, server_default="0"))
    op.add_column(TABLE, sa.Column("token", sa.String(16), nullable=False, server_default=""))
    op.add_column(TABLE, sa.Column("heartbeat_at", sa.Integer(), nullable=False, server_default="0"))
    job_run = sa.table(TABLE, sa.column("started", sa.Integer()), sa.column("heartbeat_at", sa.Integer()))
    op.execute(job_run.update().values(heartbeat_at=job_run.c.started))
    op.create_index("tx_runrecord_job_run_status", TABLE, ["status"])


def downgrade() -> None:
    op.drop_index("tx_runrecord_job_run_status", table_name=TABLE)
    with op.batch_alter_table(TABLE) as batch:
        for name in ("heartbeat_at", "token", "pid", "host"):
            batch.drop_column(name)
