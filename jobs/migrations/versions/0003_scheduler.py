"""The scheduler's tables: its lease, APScheduler's job store, health readings, and job durations.

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-01

Written out column by column rather than taken from adapters.schema: a migration is frozen.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

revision: str = "0003"
down_revision: str | tuple[str, ...] | None = "0002"
branch_labels: str | tuple[str, ...] | None = None
depends_on: str | tuple[str, ...] | None = None


def _uid() -> sa.Column[int]:
    return sa.Column("uid", sa.Integer(), primary_key=True, autoincrement=True)


def _int(name: str) -> sa.Column[int]:
    return sa.Column(name, sa.Integer(), nullable=False, server_default="0")


def _str(name: str, length: int) -> sa.Column[str]:
    return sa.Column(name, sa.String(length), nullable=False, server_default="")


def upgrade() -> None:
    op.create_table(
        "tx_runrecord_lease",
        _uid(),
        _str("name", 64),
        _str("holder", 128),
        _int("acquired_at"),
        sa.Column("expires_at_ms", sa.BigInteger(), nullable=False, server_default="0"),
        sa.UniqueConstraint("name", name="tx_runrecord_lease_name"),
    )

    op.create_table(
        "tx_runrecord_health",
        _uid(),
        _int("checked_at"),
        _str("status", 16),
        _int("stuck_conversations"),
        sa.Column("stuck_since", sa.Integer(), nullable=True),
        sa.Column("oldest_history", sa.Integer(), nullable=True),
        _str("horizon", 16),
        sa.Column("horizon_warning", sa.SmallInteger(), nullable=False, server_default="0"),
        _int("window_s"),
        _int("pending_writes"),
        _int("overdue_writes"),
        sa.Column("message", sa.Text(), nullable=True),
    )
    op.create_index("tx_runrecord_health_checked", "tx_runrecord_health", ["checked_at"])

    # As APScheduler 3.11's SQLAlchemyJobStore defines it (191: the longest key InnoDB indexes in utf8mb4).
    op.create_table(
        "tx_runrecord_apscheduler_jobs",
        sa.Column("id", sa.Unicode(191), primary_key=True),
        sa.Column(
            "next_run_time", sa.Float(25).with_variant(mysql.DOUBLE(), "mysql", "mariadb"), nullable=True
        ),
        sa.Column("job_state", sa.LargeBinary(), nullable=False),
    )
    op.create_index(
        "ix_tx_runrecord_apscheduler_jobs_next_run_time", "tx_runrecord_apscheduler_jobs", ["next_run_time"]
    )

    op.add_column("tx_runrecord_job_run", sa.Column("duration_ms", sa.Integer(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("tx_runrecord_job_run") as batch:
        batch.drop_column("duration_ms")
    op.drop_index(
        "ix_tx_runrecord_apscheduler_jobs_next_run_time", table_name="tx_runrecord_apscheduler_jobs"
    )
    op.drop_table("tx_runrecord_apscheduler_jobs")
    op.drop_index("tx_runrecord_health_checked", table_name="tx_runrecord_health")
    op.drop_table("tx_runrecord_health")
    op.drop_table("tx_runrecord_lease")
