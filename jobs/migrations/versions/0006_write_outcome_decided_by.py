"""A write's observed outcome names the sys_history rows that decided it (WriteOutcome.decided_by).

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-03

Written out column by column rather than taken from adapters.schema: a migration is frozen. `decided_by` is
a JSON array of sys_history uids, sorted ("[101, 107]"); a write derived before has NULL, since which rows
decided it was not kept, and its row is final (DESIGN.md rule 1).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | tuple[str, ...] | None = "0005"
branch_labels: str | tuple[str, ...] | None = None
depends_on: str | tuple[str, ...] | None = None

TABLE = "tx_runrecord_write_outcome"


def upgrade() -> None:
    op.add_column(TABLE, sa.Column("decided_by", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table(TABLE) as batch:
        batch.drop_column("decided_by")
