"""The survival of AI text counted as writes are derived, filled once from the outcomes derived so far.

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-06

Written out column by column rather than taken from adapters.schema: a migration is frozen.

* `tx_runrecord_survival_tally`: per configuration and distinct time, the writes a human changed then
  (`events`) and all the writes ending then (`writes`, the censored ones included).
* `tx_runrecord_survival_group`: per configuration, the runs of its curve, the writes with an unknown outcome,
  the changed writes no human row dates, and the longest window.

The rule is core.survival_report's: a write with a known outcome; EDITED or DISCARDED at its
first_change_after_s, ACCEPTED_UNCHANGED censored at its run's window (7 days for a run row without one).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | tuple[str, ...] | None = "0009"
branch_labels: str | tuple[str, ...] | None = None
depends_on: str | tuple[str, ...] | None = None

DEFAULT_WINDOW_S = 7 * 86_400


def _int(name: str) -> sa.Column[int]:
    return sa.Column(name, sa.Integer(), nullable=False, server_default="0")


def upgrade() -> None:
    op.create_table(
        "tx_runrecord_survival_tally",
        sa.Column("configuration_identifier", sa.String(150), primary_key=True),
        sa.Column("t", sa.Integer(), primary_key=True, autoincrement=False),
        _int("events"),
        _int("writes"),
    )
    op.create_table(
        "tx_runrecord_survival_group",
        sa.Column("configuration_identifier", sa.String(150), primary_key=True),
        _int("runs"),
        _int("unknown"),
        _int("undated"),
        _int("window_s"),
    )
    window = f"COALESCE(NULLIF(o.window_s, 0), {DEFAULT_WINDOW_S})"
    dated = "w.outcome IN ('edited', 'discarded') AND w.first_change_after_s IS NOT NULL"
    undated = "w.outcome IN ('edited', 'discarded') AND w.first_change_after_s IS NULL"
    unknown = "w.outcome NOT IN ('accepted_unchanged', 'edited', 'discarded')"
    in_curve = f"(w.outcome = 'accepted_unchanged' OR ({dated}))"
    time = f"CASE WHEN {dated} THEN w.first_change_after_s ELSE {window} END"
    joined = "tx_runrecord_write_outcome w JOIN tx_runrecord_run_outcome o ON o.run_uid = w.run_uid"
    op.execute(
        "INSERT INTO tx_runrecord_survival_tally (configuration_identifier, t, events, writes) "
        f"SELECT o.configuration_identifier, {time}, SUM(CASE WHEN {dated} THEN 1 ELSE 0 END), COUNT(*) "
        f"FROM {joined} WHERE {in_curve} GROUP BY o.configuration_identifier, {time}"
    )
    op.execute(
        "INSERT INTO tx_runrecord_survival_group "
        "(configuration_identifier, runs, unknown, undated, window_s) "
        f"SELECT o.configuration_identifier, COUNT(DISTINCT CASE WHEN {in_curve} THEN w.run_uid END), "
        f"SUM(CASE WHEN {unknown} THEN 1 ELSE 0 END), SUM(CASE WHEN {undated} THEN 1 ELSE 0 END), "
        f"MAX({window}) FROM {joined} GROUP BY o.configuration_identifier"
    )


def downgrade() -> None:
    op.drop_table("tx_runrecord_survival_group")
    op.drop_table("tx_runrecord_survival_tally")
