"""tx_runrecord_release: the dated markers (a release, a prompt change) that rates are compared across."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from sqlalchemy import Connection, select

from adapters import schema
from adapters.dialect import bulk
from adapters.dialect.days import day_of

release = schema.release

MAX_LABEL = 255  # tx_runrecord_release.label


@dataclass(frozen=True)
class Release:
    released_on: date
    label: str


def add_release(connection: Connection, released_on: date, label: str, *, now: int) -> bool:
    """Record a marker; False when the same date and label are recorded already."""
    statement = bulk.insert_or_ignore(connection.dialect.name, release).returning(release.c.uid)
    inserted = connection.execute(statement, [{"released_on": released_on, "label": label, "crdate": now}])
    return bool(inserted.all())


def releases(connection: Connection) -> list[Release]:
    """Every marker, oldest first."""
    rel = release.c
    query = select(rel.released_on, rel.label).order_by(rel.released_on, rel.label)
    return [Release(day_of(row.released_on), str(row.label)) for row in connection.execute(query)]


def labels_on(connection: Connection, day: date) -> list[str]:
    """The labels of the markers of one day."""
    rel = release.c
    query = select(rel.label).where(rel.released_on == day).order_by(rel.label)
    return [str(label) for label in connection.execute(query).scalars()]
