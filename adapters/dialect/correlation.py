"""The run a sys_history row's correlation_id names (DOMAIN.md, "correlation_id").

DataHandler writes `0400$<scope>:<md5(table:uid)>`. An nr-llm that passes the run's uuid as the scope lets
a reader match AI rows exactly: the scope is then the 36 characters after the `$`, followed by a `:`. TYPO3's
own random scope is an md5 (32 characters), so it never takes that shape.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import ColumnElement, and_, case, func

from adapters.dialect.names import POSTGRESQL

UUID_LENGTH = 36


def run_scope(dialect: str, correlation_id: ColumnElement[Any]) -> ColumnElement[Any]:
    """The 36 characters after the first `$` when a `:` follows them, else NULL (never an error)."""
    dollar = func.strpos(correlation_id, "$") if dialect == POSTGRESQL else func.instr(correlation_id, "$")
    shaped = and_(dollar > 0, func.substr(correlation_id, dollar + UUID_LENGTH + 1, 1) == ":")
    return case((shaped, func.substr(correlation_id, dollar + 1, UUID_LENGTH)))
