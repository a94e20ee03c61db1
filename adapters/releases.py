"""tx_runrecord_release: the dated markers (a release, a prompt change) that rates are compared across."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from sqlalchemy import Connection, select

from adapters import schema
from adapters.dialect import bulk
from adapters.dialect.days import day_of, stored_day
from adapters.errors import RunrecordError
from adapters.stored_dates import no_date

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


class UnreadableReleaseError(RunrecordError):
    """A marker whose date runrecord did not write (a row made by hand): it is never read as another day."""


def releases(connection: Connection) -> list[Release]:
    """Every marker, oldest first; a row whose date cannot be read is an UnreadableReleaseError naming it."""
    rel = release.c
    query = select(rel.uid, stored_day(rel.released_on), rel.label).order_by(rel.released_on, rel.label)
    found: list[Release] = []
    for row in connection.execute(query):
        try:
            day = day_of(row.released_on)
        except ValueError as error:
            said = no_date(release.name, row.uid, rel.released_on.name)
            raise UnreadableReleaseError(f"{said}: mend or delete it") from error
        found.append(Release(day, str(row.label)))
    return found


def labels_on(connection: Connection, day: date) -> list[str]:
    """The labels of the markers of one day."""
    rel = release.c
    query = select(rel.label).where(rel.released_on == day).order_by(rel.label)
    return [str(label) for label in connection.execute(query).scalars()]
