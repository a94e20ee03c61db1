"""Alembic migrations of our own tables (`tx_runrecord_*`), run by jobs.schema_setup; no alembic.ini needed.

A migration is frozen: it writes its tables out instead of importing them from adapters.schema, so that a
later change to adapters.schema needs a new revision here (tests/db/test_init_db.py compares the two).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from adapters.schema import OUR_PREFIX

if TYPE_CHECKING:
    from alembic.migration import MigrationContext
    from alembic.runtime.environment import NameFilterParentNames, NameFilterType
    from sqlalchemy import Column, FetchedValue

SCRIPT_LOCATION = Path(__file__).parent
# The newest revision in versions/, the one every job requires; a new migration moves it on
# (tests/db/test_init_db.py holds it to the scripts' head). Stated here so that a job starts without Alembic.
HEAD = "0016"


def is_ours(name: str | None, type_: NameFilterType, parent_names: NameFilterParentNames) -> bool:
    """Autogenerate compares only our tables: the installation's tables are not ours to migrate."""
    if type_ == "table":
        return name is not None and name.startswith(OUR_PREFIX)
    return True


def compare_server_default(
    context: MigrationContext,
    inspected_column: Column[Any],
    metadata_column: Column[Any],
    inspected_default: str | None,
    metadata_default: FetchedValue | None,
    rendered_metadata_default: str | None,
) -> bool | None:
    """False (no change) when both defaults are the empty string; otherwise Alembic's own comparison (None).

    Alembic renders `server_default=""` as an empty text instead of `''`, so on SQLite (which reflects it as
    `('')`) and MariaDB (`''`) every such column would look changed on every comparison.
    """
    both_empty = rendered_metadata_default == "" and _unquoted(inspected_default or "") == ""
    return False if both_empty else None


def _unquoted(sql_default: str) -> str | None:
    """The text of a reflected string default such as `''`, `('')` or `''::character varying`, else None."""
    text = sql_default.strip()
    while text.startswith("(") and text.endswith(")"):
        text = text[1:-1].strip()
    text = text.split("::", 1)[0]
    if len(text) >= 2 and text[0] == text[-1] == "'":
        return text[1:-1].replace("''", "'")
    return None
