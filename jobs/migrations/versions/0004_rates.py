"""measure-rates' own tables: the facts it counted per run, and its watermarks.

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-01

Written out column by column rather than taken from adapters.schema: a migration is frozen.

* `tx_runrecord_measure_fact`: one row per run (message_uid 0) and one per answer no run stands behind
  (run_uid 0), with the run's end, its period starts, its configuration and its conversation's skill, and
  what core.facts read of it. A rerun reads only the conversations and runs changed since the last one.
* `tx_runrecord_measure_mark`: the newest tstamp and uid read of each source table, and the rule version.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | tuple[str, ...] | None = "0003"
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
        "tx_runrecord_measure_fact",
        _uid(),
        _int("run_uid"),
        _int("message_uid"),
        _int("conversation_uid"),
        sa.Column("configuration_identifier", sa.String(150), nullable=True),
        sa.Column("skill_identifier", sa.String(100), nullable=True),
        _int("ended_at"),
        sa.Column("week_start", sa.Date(), nullable=False),
        sa.Column("day_start", sa.Date(), nullable=False),
        sa.Column("runs", sa.SmallInteger(), nullable=False, server_default="0"),
        _str("answer", 16),
        sa.Column("notice", sa.SmallInteger(), nullable=False, server_default="0"),
        _str("claim", 16),
        _str("denial", 16),
        _str("go_on", 16),
        _str("problems", 255),
        _int("measured_at"),
        sa.UniqueConstraint("run_uid", "message_uid", name="tx_runrecord_measure_fact_source"),
    )
    op.create_index(
        "tx_runrecord_measure_fact_conversation", "tx_runrecord_measure_fact", ["conversation_uid"]
    )
    op.create_index("tx_runrecord_measure_fact_ended", "tx_runrecord_measure_fact", ["ended_at"])

    op.create_table(
        "tx_runrecord_measure_mark",
        _uid(),
        _str("name", 64),
        sa.Column("value", sa.BigInteger(), nullable=False, server_default="0"),
        _int("updated_at"),
        sa.UniqueConstraint("name", name="tx_runrecord_measure_mark_name"),
    )


def downgrade() -> None:
    op.drop_table("tx_runrecord_measure_mark")
    op.drop_index("tx_runrecord_measure_fact_ended", table_name="tx_runrecord_measure_fact")
    op.drop_index("tx_runrecord_measure_fact_conversation", table_name="tx_runrecord_measure_fact")
    op.drop_table("tx_runrecord_measure_fact")
