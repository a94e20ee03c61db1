"""What every page reads: which tables exist, the data version the caches are keyed on, "data as of"."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

import pandas as pd
from sqlalchemy import Engine, Table

from adapters import schema
from adapters.data_version import last_finished_job_run, newest_rate_computation, newest_uids
from adapters.database import reported, table_names
from adapters.table_rows import row_counts

# The tables the jobs write. A new row in any of them (a job run, a rate, a release marker, an outcome, a
# health reading) changes the data version; their largest uid is an index lookup on the primary key.
# measure-rates also updates rate rows in place (open periods), which their newest computed_at shows.
VERSIONED: tuple[Table, ...] = (
    schema.job_run,
    schema.rate,
    schema.release,
    schema.run_outcome,
    schema.health,
)


@dataclass(frozen=True)
class Marks:
    """What one page's cached results depend on: the tables present and the marks of the tables it reads."""

    tables: frozenset[str]
    marks: tuple[int, ...]


@dataclass(frozen=True)
class DataVersion:
    """The tables present, the newest uid of each versioned table, and the newest rate computation."""

    tables: frozenset[str]
    uids: tuple[int, ...]  # in VERSIONED order
    rates_computed: int

    def _uid(self, table: Table) -> int:
        return self.uids[VERSIONED.index(table)]

    @property
    def rates(self) -> Marks:
        """The Rates page reads rates and releases only (the runs inside their window are a stored figure):
        not the outcomes themselves, which derive-outcomes writes before measure-rates rates them, and not
        the 5-minute watch."""
        marks = (self._uid(schema.rate), self.rates_computed, self._uid(schema.release))
        return Marks(self.tables, marks)

    @property
    def runs(self) -> Marks:
        """The Runs and Conversation pages read upstream rows (bounded by a time-to-live), outcomes, and the
        facts measure-rates found (Runs filters on them)."""
        return Marks(self.tables, (self._uid(schema.run_outcome), self.rates_computed))

    @property
    def jobs(self) -> Marks:
        """The Health page and "data as of" read every job run and health reading."""
        return Marks(self.tables, self.uids + (self.rates_computed,))


@dataclass(frozen=True)
class LastJobRun:
    """The newest finished job run: "data as of" its end."""

    job: str
    finished: int
    status: str


def present_tables(engine: Engine) -> frozenset[str]:
    """The tables the database has, as it lists them."""
    return frozenset(table_names(engine))


def data_version(engine: Engine) -> DataVersion:
    """The present tables, the largest uid of each versioned table (0 when empty or missing) and the newest
    rate computation: a primary-key lookup per table and one pass over the small rate table."""
    tables = present_tables(engine)
    with reported(engine, "reading the data version"), engine.connect() as connection:
        uids = newest_uids(connection, VERSIONED, tables)
        computed = newest_rate_computation(connection, tables)
    return DataVersion(tables, uids, computed)


def last_job_run(engine: Engine, tables: frozenset[str]) -> LastJobRun | None:
    """The job run that finished last, or None when no job has finished (or the table is missing)."""
    with reported(engine, "reading the job runs"), engine.connect() as connection:
        row = last_finished_job_run(connection, tables)
    return None if row is None else LastJobRun(row.job, int(row.finished), row.status)


def table_counts(engine: Engine, tables: frozenset[str]) -> pd.DataFrame:
    """Rows per table, upstream and ours; a table the database lacks is listed with no count."""
    rows = []
    with reported(engine, "counting rows"), engine.connect() as connection:
        for kind, metadata in (("upstream", schema.upstream), ("runrecord", schema.ours)):
            counts = row_counts(connection, metadata, tables)
            rows += [{"table": name, "kind": kind, "rows": count} for name, count in counts.items()]
    return pd.DataFrame(rows, columns=["table", "kind", "rows"]).astype({"rows": "Int64"})


def when(unix: int, *, seconds: bool = False) -> str:
    """A unix time in UTC as the pages show it; "" for 0 (not set)."""
    if not unix:
        return ""
    return datetime.fromtimestamp(unix, UTC).strftime("%Y-%m-%d %H:%M:%S" if seconds else "%Y-%m-%d %H:%M")
