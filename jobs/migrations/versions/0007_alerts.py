"""Alerts: a significant move of a rate, written once per move after a measurement (core.alerts).

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-04

Written out column by column rather than taken from adapters.schema: a migration is frozen.

* `tx_runrecord_alert`: metric, grain, group, kind (`trend` or `release`) and date of the move, both sides'
  periods and figures, the difference with its Newcombe interval, p, and whether it is still open. Unique on
  the move (metric, grain, group_kind, group_value, kind, at_date), so that a rerun or a concurrent
  measurement inserts it once.
"""

from __future__ import annotations

from datetime import date

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

revision: str = "0007"
down_revision: str | tuple[str, ...] | None = "0006"
branch_labels: str | tuple[str, ...] | None = None
depends_on: str | tuple[str, ...] | None = None

TABLE = "tx_runrecord_alert"


def _int(name: str) -> sa.Column[int]:
    return sa.Column(name, sa.Integer(), nullable=False, server_default="0")


def _str(name: str, length: int, default: str = "") -> sa.Column[str]:
    return sa.Column(name, sa.String(length), nullable=False, server_default=default)


def _date(name: str) -> sa.Column[date]:
    return sa.Column(name, sa.Date(), nullable=False)


def _double(name: str) -> sa.Column[float]:
    return sa.Column(name, sa.Float(25).with_variant(mysql.DOUBLE(), "mysql", "mariadb"), nullable=False)


def upgrade() -> None:
    op.create_table(
        TABLE,
        sa.Column("uid", sa.Integer(), primary_key=True, autoincrement=True),
        _str("metric", 64),
        _str("grain", 8),
        _str("group_kind", 16),
        _str("group_value", 150),
        _str("kind", 16),
        _date("at_date"),
        _str("label", 255),
        _date("before_from"),
        _date("before_to"),
        _date("after_from"),
        _date("after_to"),
        _int("before_numerator"),
        _int("before_denominator"),
        _int("after_numerator"),
        _int("after_denominator"),
        _double("difference"),
        _double("difference_low"),
        _double("difference_high"),
        _double("p_value"),
        _int("created_at"),
        _str("status", 8, "open"),
        _int("closed_at"),
        sa.UniqueConstraint(
            "metric", "grain", "group_kind", "group_value", "kind", "at_date", name="tx_runrecord_alert_move"
        ),
    )
    op.create_index("tx_runrecord_alert_status", TABLE, ["status", "created_at"])


def downgrade() -> None:
    op.drop_index("tx_runrecord_alert_status", table_name=TABLE)
    op.drop_table(TABLE)
