"""Measurement marks as a runrecord from before they were kept per grain left them."""

from __future__ import annotations

from sqlalchemy import Connection, insert

from adapters import measure_marks, schema
from core.periods import Grain


def left_by_an_older_runrecord(connection: Connection, *, rates_version: int | None) -> None:
    """The marks of both grains in one, the stored rates of `rates_version` (None: from before that mark)."""
    mark = schema.measure_mark
    names = [name for grain in Grain for name in measure_marks.GrainMarks(0, 0, 0).as_rows(grain)]
    connection.execute(mark.delete().where(mark.c.name.in_([*names, measure_marks.RATES_VERSION_MARK])))
    if rates_version is not None:
        row = {"name": measure_marks.RATES_VERSION_MARK, "value": rates_version, "updated_at": 0}
        connection.execute(insert(mark).values(**row))
