"""The facts by their day: an index of `tx_runrecord_measure_fact`.

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-06

Written out rather than taken from adapters.schema: a migration is frozen. `(day_start)`: the days that hold a
fact before a measurement's first open period (adapters.tallies.fact_days_before) are read by MariaDB as a
loose scan of this index, one entry a day, where it read every fact before.
"""

from __future__ import annotations

from alembic import op

revision: str = "0016"
down_revision: str | tuple[str, ...] | None = "0015"
branch_labels: str | tuple[str, ...] | None = None
depends_on: str | tuple[str, ...] | None = None

TABLE = "tx_runrecord_measure_fact"
INDEX = "tx_runrecord_measure_fact_day"


def upgrade() -> None:
    op.create_index(INDEX, TABLE, ["day_start"])


def downgrade() -> None:
    op.drop_index(INDEX, table_name=TABLE)
