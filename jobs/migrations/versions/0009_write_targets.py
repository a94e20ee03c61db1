"""The write targets kept between runs, the runs still pending, and the observed correlation ids.

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-05

Written out column by column rather than taken from adapters.schema: a migration is frozen.

* `tx_runrecord_write_target`: the target of every tool_write event, read from its payload once.
* `tx_runrecord_pending_run`: the runs with targets and no outcome yet, with their last write.
* `tx_runrecord_observed`: the correlation ids with an observed row in tx_nrllm_call_outcome.
* `tx_runrecord_scan_mark`: the highest uid of an installation's table read into one of ours.

The first derive-outcomes after the upgrade fills them from the events and call outcomes there are.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | tuple[str, ...] | None = "0008"
branch_labels: str | tuple[str, ...] | None = None
depends_on: str | tuple[str, ...] | None = None


def _int(name: str) -> sa.Column[int]:
    return sa.Column(name, sa.Integer(), nullable=False, server_default="0")


def upgrade() -> None:
    op.create_table(
        "tx_runrecord_write_target",
        sa.Column("event_uid", sa.Integer(), primary_key=True, autoincrement=False),
        _int("run_uid"),
        _int("written_at"),
        sa.Column("tablename", sa.String(64), nullable=True),
        sa.Column("recuid", sa.Integer(), nullable=True),
    )
    op.create_index("tx_runrecord_write_target_run", "tx_runrecord_write_target", ["run_uid", "written_at"])
    op.create_index(
        "tx_runrecord_write_target_record", "tx_runrecord_write_target", ["tablename", "recuid", "written_at"]
    )
    op.create_table(
        "tx_runrecord_pending_run",
        sa.Column("run_uid", sa.Integer(), primary_key=True, autoincrement=False),
        _int("last_write_at"),
        _int("writes"),
    )
    op.create_table(
        "tx_runrecord_observed",
        sa.Column("correlation_id", sa.String(36), primary_key=True),
    )
    op.create_table(
        "tx_runrecord_scan_mark",
        sa.Column("name", sa.String(64), primary_key=True),
        sa.Column("last_uid", sa.BigInteger(), nullable=False, server_default="0"),
    )


def downgrade() -> None:
    for table in (
        "tx_runrecord_scan_mark",
        "tx_runrecord_observed",
        "tx_runrecord_pending_run",
        "tx_runrecord_write_target",
    ):
        op.drop_table(table)
