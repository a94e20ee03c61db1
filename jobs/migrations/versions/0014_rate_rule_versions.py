"""A rate row names the rule versions of the derived runs it counts (core.rule_versions).

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-08

Written out column by column rather than taken from adapters.schema: a migration is frozen. One column on
`tx_runrecord_rate`: the versions, oldest first, comma-separated; "" for a count of facts. Existing rows get
""; measure-rates writes every period once more, since core.metrics.RATES_VERSION rose with it.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0014"
down_revision: str | tuple[str, ...] | None = "0013"
branch_labels: str | tuple[str, ...] | None = None
depends_on: str | tuple[str, ...] | None = None

TABLE = "tx_runrecord_rate"
COLUMN = "rule_versions"


def upgrade() -> None:
    op.add_column(TABLE, sa.Column(COLUMN, sa.String(255), nullable=False, server_default=""))


def downgrade() -> None:
    with op.batch_alter_table(TABLE) as batch:
        batch.drop_column(COLUMN)
