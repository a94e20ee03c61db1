"""Creating and upgrading the tables: the upstream mirrors when asked, ours through the Alembic migrations.

One connection and one transaction for the whole change. PostgreSQL and SQLite roll DDL back with it; on
MariaDB every CREATE commits at once, so after a failure the tables this call created are dropped again:
either way a failed init-db leaves the database as it found it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from sqlalchemy import Connection, Engine, MetaData, Table, inspect
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.schema import DropTable

from adapters.database import (
    DatabaseUnavailableError,
    RunrecordError,
    check_reachable,
    describe,
    one_line,
    reported,
    sqlite_path,
    table_names,
)
from adapters.dialect.session import begin_ddl
from adapters.revision import stored_revision
from adapters.schema import REQUIRED_UPSTREAM, VERSION_TABLE, ours, upstream
from adapters.table_repair import Repair, repair, tables_missing
from jobs.migrations import HEAD, SCRIPT_LOCATION

if TYPE_CHECKING:
    from alembic.config import Config

T = TypeVar("T")

# The only tables a failed call may drop again: the ones it can create.
_CREATABLE = frozenset(upstream.tables) | frozenset(ours.tables) | {VERSION_TABLE}


@dataclass(frozen=True)
class InitReport:
    """What init_db did: the upstream tables it created, and our tables' revision before and after."""

    created_upstream: tuple[str, ...]
    revision_before: str | None
    revision_after: str | None
    repaired: Repair = Repair()  # our tables missing at the newest revision (dropped by hand), created again


def init_db(engine: Engine, *, with_upstream: bool, derive_again: bool = False) -> InitReport:
    """Create or upgrade our tables; without with_upstream, refuse a database lacking an upstream table.
    A table of ours dropped by hand is created again (adapters.table_repair; `derive_again`: even one of the
    outcomes, every finished run then derived again)."""
    new_file = _sqlite_file_to_create(engine)
    if new_file is None:
        check_reachable(engine)
    elif not with_upstream:
        raise _missing_upstream(REQUIRED_UPSTREAM)
    try:
        return _schema_change(
            engine, "creating tables", lambda connection: _init(connection, with_upstream, derive_again)
        )
    except BaseException:
        if new_file is not None:
            engine.dispose()
            new_file.unlink(missing_ok=True)
        raise


def init_installation(engine: Engine) -> InitReport:
    """init_db with the upstream tables: what a generated installation (the demo, a test) starts from."""
    return init_db(engine, with_upstream=True)


def upgrade_ours(engine: Engine) -> str | None:
    """Upgrade our tables to the newest revision; returns that revision."""
    check_reachable(engine)
    return _schema_change(engine, "upgrading our tables", _upgrade)


def current_revision(engine: Engine) -> str | None:
    """The revision our tables are at; None before init-db created them."""
    with reported(engine, "reading the revision of our tables"), engine.connect() as connection:
        return stored_revision(connection)


def head_revision() -> str:
    """The newest revision of our tables that the migrations know (jobs.migrations.HEAD)."""
    return HEAD


def known_revisions() -> frozenset[str]:
    """Every revision the migrations know, by their scripts' names (`0001_our_tables.py` is 0001)."""
    scripts = (SCRIPT_LOCATION / "versions").glob("[0-9]*_*.py")
    return frozenset(path.name.split("_", 1)[0] for path in scripts)


def _newer(revision: str) -> RunrecordError:
    return RunrecordError(
        f"our tables are at revision {revision}, which this runrecord does not know (its newest is "
        f"{head_revision()}): a newer runrecord wrote them; run that one, or restore our tables from a backup"
    )


def require_head(engine: Engine, job: str) -> None:
    """Refuse to run `job` on our tables at another revision than this code needs, or with one of them
    dropped by hand, in one line, before it reads or writes anything."""
    head = head_revision()
    with reported(engine, "reading the revision of our tables"), engine.connect() as connection:
        revision = stored_revision(connection)
        present = set(inspect(connection).get_table_names()) if revision in (head, None) else set()
    if revision is not None and revision != head and revision not in known_revisions():
        raise _newer(revision)
    upstream_missing = [name for name in REQUIRED_UPSTREAM if name not in present]
    if revision is None and upstream_missing:
        # init-db would refuse this database too: the line asks what init-db would ask.
        raise _missing_upstream(
            upstream_missing,
            "(`runrecord init-db --with-upstream` creates empty ones for a demo or a test database)",
        )
    if revision != head:
        raise RunrecordError(
            f"our tables are at revision {revision or 'none'}, {job} needs {head}: "
            "run `runrecord init-db` first"
        )
    missing = [table.name for table in ours.sorted_tables if table.name not in present]
    if missing:
        raise RunrecordError(
            f"our {tables_missing(missing)} although our tables are at revision {head}: run `runrecord "
            f"init-db`, which creates a table dropped by hand again, before {job}"
        )


def alembic_config(connection: Connection | None = None) -> Config:
    """An Alembic configuration that migrates on the connection (no alembic.ini involved)."""
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(SCRIPT_LOCATION))
    if connection is not None:
        config.attributes["connection"] = connection
    return config


def _init(connection: Connection, with_upstream: bool, derive_again: bool) -> InitReport:
    existing = set(inspect(connection).get_table_names())
    missing = [name for name in REQUIRED_UPSTREAM if name not in existing]
    if missing and not with_upstream:
        raise _missing_upstream(missing)
    created_upstream: tuple[str, ...] = ()
    if with_upstream:
        created_upstream = tuple(table.name for table in upstream.sorted_tables if table.name not in existing)
        upstream.create_all(connection, checkfirst=True)
    revision_before = stored_revision(connection)
    if revision_before is None and set(ours.tables) <= existing:
        # The migrations would create every table again, and fail on the first (a table of ours made by hand
        # on a database without the others fails so, and the failed init-db leaves the database as it was).
        raise RunrecordError(
            f"our tables are there but not the revision they are at ({VERSION_TABLE} is missing or empty), "
            f"so init-db cannot tell which migrations they had: restore {VERSION_TABLE} from a backup (this "
            f"runrecord's revision is {HEAD})"
        )
    revision_after = _upgrade(connection)
    repaired = repair(connection, revision=revision_after, derive_again=derive_again)
    return InitReport(created_upstream, revision_before, revision_after, repaired)


def _upgrade(connection: Connection) -> str | None:
    from alembic import command
    from alembic.util import CommandError

    revision = stored_revision(connection)
    if revision is not None and revision not in known_revisions():
        raise _newer(revision)
    try:
        command.upgrade(alembic_config(connection), "head")
    except CommandError as error:
        raise RunrecordError(f"migrating our tables: {one_line(error)}") from error
    return stored_revision(connection)


def _missing_upstream(
    missing: Sequence[str], advice: str = "Use --with-upstream to create them (for a demo or a test database)"
) -> RunrecordError:
    """The error for a database without the installation's tables; `advice`: how to create them."""
    listed = ", ".join(missing)
    return RunrecordError(
        f"the database lacks the upstream tables {listed}; is it the installation's database? {advice}"
    )


def _sqlite_file_to_create(engine: Engine) -> Path | None:
    """The SQLite file init-db will create, or None; a location where none can be created fails here."""
    path = sqlite_path(engine.url)
    if path is None or path.exists():
        return None
    directory = path.parent
    if not directory.is_dir():
        what = "is not a directory" if directory.exists() else "does not exist"
        raise DatabaseUnavailableError(f"cannot create the database file {path}: {directory} {what}")
    if not os.access(directory, os.W_OK | os.X_OK):
        raise DatabaseUnavailableError(f"cannot create the database file {path}: {directory} is not writable")
    return path


def _schema_change(engine: Engine, action: str, change: Callable[[Connection], T]) -> T:
    """Run change in one transaction; on failure, drop again what a non-transactional dialect kept."""
    before = table_names(engine)
    try:
        with reported(engine, action), _transaction(engine) as connection:
            return change(connection)
    except BaseException as error:
        _drop_created_since(engine, before, error)
        raise


@contextmanager
def _transaction(engine: Engine) -> Iterator[Connection]:
    with engine.connect() as connection:
        begin_ddl(connection)
        yield connection
        connection.commit()


def _drop_created_since(engine: Engine, before: set[str], error: BaseException) -> None:
    try:
        with engine.begin() as connection:
            created = (set(inspect(connection).get_table_names()) - before) & _CREATABLE
            for name in sorted(created):
                connection.execute(DropTable(Table(name, MetaData())))
    except SQLAlchemyError as cleanup_error:
        raise DatabaseUnavailableError(
            f"{error}; then removing the tables created before the failure from {describe(engine.url)} "
            f"failed too: {one_line(cleanup_error)}"
        ) from error
