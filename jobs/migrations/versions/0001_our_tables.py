"""Our tables: outcomes of writes and runs, rates, job runs and release markers.

Revision ID: 0001
Revises:
Create Date: 2026-11-29

Written out column by column rather than taken from adapters.schema: a migration is frozen.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | tuple[str, ...] | None = None
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
        "tx_runrecord_write_outcome",
        _uid(),
        _int("run_uid"),
        _str("correlation_id", 36),
        sa.Column("event_uid", sa.Integer(), nullable=False),
        _str("tablename", 64),
        _int("recuid"),
        _int("written_at"),
        _str("outcome", 24),
        _str("reason", 32),
        _str("edit_scope", 16),
        sa.Column("first_change_after_s", sa.Integer(), nullable=True),
        _str("rule_version", 16),
        _int("derived_at"),
        sa.UniqueConstraint("event_uid", name="tx_runrecord_write_outcome_event"),
    )
    op.create_index("tx_runrecord_write_outcome_run", "tx_runrecord_write_outcome", ["run_uid"])

    op.create_table(
        "tx_runrecord_run_outcome",
        _uid(),
        sa.Column("run_uid", sa.Integer(), nullable=False),
        _str("correlation_id", 36),
        _str("outcome", 24),
        _int("writes"),
        _str("configuration_identifier", 150),
        _int("window_s"),
        _str("rule_version", 16),
        _int("derived_at"),
        sa.UniqueConstraint("run_uid", name="tx_runrecord_run_outcome_run"),
    )

    op.create_table(
        "tx_runrecord_rate",
        _uid(),
        _str("metric", 64),
        _str("grain", 8),
        sa.Column("period_start", sa.Date(), nullable=False),
        _str("group_kind", 16),
        _str("group_value", 150),
        _int("numerator"),
        _int("denominator"),
        _int("excluded"),
        _int("computed_at"),
        sa.UniqueConstraint(
            "metric", "grain", "period_start", "group_kind", "group_value", name="tx_runrecord_rate_period"
        ),
    )

    op.create_table(
        "tx_runrecord_job_run",
        _uid(),
        _str("job", 64),
        _int("started"),
        sa.Column("finished", sa.Integer(), nullable=True),
        _str("status", 16),
        _int("processed"),
        _int("failed"),
        sa.Column("message", sa.Text(), nullable=True),
    )
    op.create_index("tx_runrecord_job_run_job", "tx_runrecord_job_run", ["job", "started"])

    op.create_table(
        "tx_runrecord_release",
        _uid(),
        sa.Column("released_on", sa.Date(), nullable=False),
        _str("label", 255),
        _int("crdate"),
        sa.UniqueConstraint("released_on", "label", name="tx_runrecord_release_marker"),
    )


def downgrade() -> None:
    op.drop_table("tx_runrecord_release")
    op.drop_index("tx_runrecord_job_run_job", table_name="tx_runrecord_job_run")
    op.drop_table("tx_runrecord_job_run")
    op.drop_table("tx_runrecord_rate")
    op.drop_table("tx_runrecord_run_outcome")
    op.drop_index("tx_runrecord_write_outcome_run", table_name="tx_runrecord_write_outcome")
    op.drop_table("tx_runrecord_write_outcome")
