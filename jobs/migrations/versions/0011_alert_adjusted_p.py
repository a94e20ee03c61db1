"""An alert keeps Benjamini–Hochberg's adjusted p beside its raw p (core.alerts.Alert.adjusted_p_value).

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-07

Written out column by column rather than taken from adapters.schema: a migration is frozen.
`adjusted_p_value` is the p of the alert's comparison adjusted over every comparison of the measurement that
raised it (core.multiple_testing.adjusted_p_values); an alert written before has NULL, since that
measurement's other comparisons were not kept, and its row is otherwise final.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

revision: str = "0011"
down_revision: str | tuple[str, ...] | None = "0010"
branch_labels: str | tuple[str, ...] | None = None
depends_on: str | tuple[str, ...] | None = None

TABLE = "tx_runrecord_alert"


def upgrade() -> None:
    double = sa.Float(25).with_variant(mysql.DOUBLE(), "mysql", "mariadb")
    op.add_column(TABLE, sa.Column("adjusted_p_value", double, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table(TABLE) as batch:
        batch.drop_column("adjusted_p_value")
