"""A run's fact counts what followed each stored "go on" sent while it waited for an approval (core.go_on).

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-04

Written out column by column rather than taken from adapters.schema: a migration is frozen. Four counts on
`tx_runrecord_measure_fact`: the "go on" messages stored with a runFinishedOutside line, those after which a
second run started, those followed by neither, and the unreadable user messages in their place. Existing rows
get 0; measure-rates counts every fact afresh anyway, since core.facts.MEASURE_VERSION rose with them.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | tuple[str, ...] | None = "0007"
branch_labels: str | tuple[str, ...] | None = None
depends_on: str | tuple[str, ...] | None = None

TABLE = "tx_runrecord_measure_fact"
COLUMNS = ("go_on_finished_outside", "go_on_second_run", "go_on_unknown", "go_on_unreadable")


def upgrade() -> None:
    for name in COLUMNS:
        op.add_column(TABLE, sa.Column(name, sa.SmallInteger(), nullable=False, server_default="0"))


def downgrade() -> None:
    with op.batch_alter_table(TABLE) as batch:
        for name in reversed(COLUMNS):
            batch.drop_column(name)
