"""The facts with a stored notice, in time order: an index of `tx_runrecord_measure_fact`.

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-06

Written out rather than taken from adapters.schema: a migration is frozen. `(notice, answer, ended_at)`: the
first completed answer with a stored nothingSaved notice (adapters.first_notice) is the first entry of the
index's range for notice 1 and a read answer. Without it, each measurement and the Runs page walked every fact
in `ended_at` order until they found one, all of them on an installation that has none.
"""

from __future__ import annotations

from alembic import op

revision: str = "0015"
down_revision: str | tuple[str, ...] | None = "0014"
branch_labels: str | tuple[str, ...] | None = None
depends_on: str | tuple[str, ...] | None = None

TABLE = "tx_runrecord_measure_fact"
INDEX = "tx_runrecord_measure_fact_notice"


def upgrade() -> None:
    op.create_index(INDEX, TABLE, ["notice", "answer", "ended_at"])


def downgrade() -> None:
    op.drop_index(INDEX, table_name=TABLE)
