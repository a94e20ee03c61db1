"""The derivation's additions: a run's last write time, and on PostgreSQL a JSON parse that cannot fail.

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-01

* `tx_runrecord_run_outcome.last_write_at`: the tool_write time of the run's last write, whose window
  decided when the run was derived (DESIGN.md rule 1); rates by period read it instead of derived_at, which
  only says which night the job ran.
* `tx_runrecord_jsonb(text)` on PostgreSQL only: the text as jsonb, or NULL when it is not JSON. PostgreSQL 15
  raises on an invalid text in a `::jsonb` cast, and one broken history_data or event payload must not fail
  the batch (DESIGN.md rules 6 and 7); SQLite and MariaDB guard with their own json_valid instead.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | tuple[str, ...] | None = "0001"
branch_labels: str | tuple[str, ...] | None = None
depends_on: str | tuple[str, ...] | None = None

# data_exception (class 22) is every way a text can fail to be JSON: a syntax error, an escape the database
# cannot hold, a number out of range; program_limit_exceeded a document too large. Anything else still raises.
_JSONB_FUNCTION = """
CREATE OR REPLACE FUNCTION tx_runrecord_jsonb(data text) RETURNS jsonb
LANGUAGE plpgsql IMMUTABLE STRICT AS $$
BEGIN
    RETURN data::jsonb;
EXCEPTION WHEN data_exception OR program_limit_exceeded THEN
    RETURN NULL;
END
$$
"""


def upgrade() -> None:
    op.add_column(
        "tx_runrecord_run_outcome",
        sa.Column("last_write_at", sa.Integer(), nullable=False, server_default="0"),
    )
    if op.get_bind().dialect.name == "postgresql":
        op.execute(_JSONB_FUNCTION)


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP FUNCTION IF EXISTS tx_runrecord_jsonb(text)")
    with op.batch_alter_table("tx_runrecord_run_outcome") as batch:
        batch.drop_column("last_write_at")
