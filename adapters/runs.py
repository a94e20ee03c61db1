"""Reads of nr-llm's runs (tx_nrllm_agentrun); be_user is never selected."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

from sqlalchemy import Connection, select

from adapters import schema

agentrun = schema.agentrun


def run_columns() -> tuple[Any, ...]:
    r = agentrun.c
    return (
        r.uid,
        r.uuid,
        r.status,
        r.configuration_identifier,
        r.finished_at,
        r.tstamp,
        r.started_at,
        r.crdate,
    )


def runs_by_uuid(connection: Connection, uuids: Collection[str]) -> Sequence[Any]:
    """The runs with these uuids (the correlation id); lowest uid first."""
    if not uuids:
        return []
    r = agentrun.c
    query = select(*run_columns()).where(r.uuid.in_(list(uuids))).order_by(r.uid)
    return connection.execute(query).all()


def runs_by_uid(connection: Connection, uids: Collection[int]) -> Sequence[Any]:
    """The runs with these uids."""
    if not uids:
        return []
    r = agentrun.c
    return connection.execute(select(*run_columns()).where(r.uid.in_(list(uids))).order_by(r.uid)).all()
