"""The runs a night saw not finished, read again by run once they have finished.

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-08

Written out rather than taken from adapters.schema: a migration is frozen.

* `tx_runrecord_unfinished_run`: the runs seen queued, running or waiting at the last read of the write
  targets. Their events may still commit in their run's transaction with uids far below the ones read since,
  so each is read again by run (nr-llm's KEY run_sequence) once it has finished, and derived only then.

The first derive-outcomes after the upgrade reads the events above the highest target less the margin, as
before, and from then on from the highest event uid it saw (`tx_runrecord_scan_mark`,
`tx_nrllm_agentrun_event`).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0013"
down_revision: str | tuple[str, ...] | None = "0012"
branch_labels: str | tuple[str, ...] | None = None
depends_on: str | tuple[str, ...] | None = None

# The name under which tx_runrecord_scan_mark holds the highest event uid a night saw.
EVENT_MARK = "tx_nrllm_agentrun_event"


def upgrade() -> None:
    op.create_table(
        "tx_runrecord_unfinished_run",
        sa.Column("run_uid", sa.Integer(), primary_key=True, autoincrement=False),
    )


def downgrade() -> None:
    op.drop_table("tx_runrecord_unfinished_run")
    mark = sa.table("tx_runrecord_scan_mark", sa.column("name", sa.String(64)))
    op.execute(mark.delete().where(mark.c.name == EVENT_MARK))
