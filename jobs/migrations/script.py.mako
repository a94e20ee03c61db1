"""${message}

Revision ID: ${up_revision}
Revises: ${down_revision | comma,n}
Create Date: ${create_date}
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
${imports if imports else ""}
revision: str = ${repr(up_revision).replace("'", '"')}
down_revision: str | tuple[str, ...] | None = ${repr(down_revision).replace("'", '"')}
branch_labels: str | tuple[str, ...] | None = ${repr(branch_labels).replace("'", '"')}
depends_on: str | tuple[str, ...] | None = ${repr(depends_on).replace("'", '"')}


def upgrade() -> None:
    ${upgrades if upgrades else "pass"}


def downgrade() -> None:
    ${downgrades if downgrades else "pass"}
