"""The observed correlation ids are read from nr-llm's own index instead of a copy of ours.

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-08

Written out rather than taken from adapters.schema: a migration is frozen.

`tx_nrllm_call_outcome` has had `KEY correlation (correlation_id)` since nr-llm created the table (its
ext_tables.sql; DOMAIN.md), so the derivation looks a run's observed row up there directly:
`tx_runrecord_observed`, kept because that index seemed missing, goes, with its scan mark. A downgrade
creates the table empty and without a mark, so the older code reads every call outcome into it once.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | tuple[str, ...] | None = "0011"
branch_labels: str | tuple[str, ...] | None = None
depends_on: str | tuple[str, ...] | None = None

# The name under which tx_runrecord_scan_mark held how far tx_nrllm_call_outcome had been read.
CALL_OUTCOME_MARK = "tx_nrllm_call_outcome"


def upgrade() -> None:
    op.drop_table("tx_runrecord_observed")
    mark = sa.table("tx_runrecord_scan_mark", sa.column("name", sa.String(64)))
    op.execute(mark.delete().where(mark.c.name == CALL_OUTCOME_MARK))


def downgrade() -> None:
    op.create_table(
        "tx_runrecord_observed",
        sa.Column("correlation_id", sa.String(36), primary_key=True),
    )
