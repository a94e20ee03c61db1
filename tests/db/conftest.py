"""Database fixtures: every test here runs on SQLite, MariaDB and PostgreSQL.

* `dialect` — "sqlite", "mariadb", "postgresql"; a test that takes it (directly or through a fixture below)
  runs once per dialect.
* `empty_db_url` — a brand-new empty database of that dialect for one test, dropped afterwards;
  `make_empty_db` makes one of any dialect (for a test that compares dialects).
* `installation_engine` / `installation_url` — a database holding every upstream table and ours (built by
  init_db --with-upstream once per dialect and session), with every table emptied before each test.

A test whose answer is what the database gives (a statement, a transaction, a type, a lock) runs on every
dialect. A test of what a command makes of rows already read (its wording, its arguments, a statistic, a
webhook) is marked `on_sqlite_alone`: the statements it runs are the ones its file's other tests run on every
dialect, so a server would only repeat them.

The servers come from RUNRECORD_TEST_MARIADB and RUNRECORD_TEST_POSTGRESQL. A server that cannot be reached
skips its tests, or fails them when CI is "true" or "1", so that a CI run cannot pass without them.
"""

from __future__ import annotations

import functools
import os
import secrets
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from sqlalchemy import Connection, Engine, Table, create_engine, delete, inspect, table, text
from sqlalchemy.engine import URL, make_url
from sqlalchemy.pool import NullPool

from adapters import derive_batch, derive_scope
from adapters.database import describe, make_engine, one_line
from adapters.dialect import plans
from adapters.dialect.exact import ranges_each_row
from adapters.schema import VERSION_TABLE
from jobs.schema_setup import init_db

ALL_DIALECTS = ("sqlite", "mariadb", "postgresql")
# RUNRECORD_TEST_DIALECTS narrows the run to some of them (`make test-fast`: sqlite); `make test` runs all.
DIALECTS = tuple(
    name.strip() for name in os.environ.get("RUNRECORD_TEST_DIALECTS", ",".join(ALL_DIALECTS)).split(",")
)
if not DIALECTS or not set(DIALECTS) <= set(ALL_DIALECTS):
    raise pytest.UsageError(f"RUNRECORD_TEST_DIALECTS names {DIALECTS}: each of {', '.join(ALL_DIALECTS)}")

SERVERS = {
    "mariadb": ("RUNRECORD_TEST_MARIADB", "mysql+pymysql://root@127.0.0.1:3306/test"),
    "postgresql": ("RUNRECORD_TEST_POSTGRESQL", "postgresql+psycopg://postgres@127.0.0.1:5432/test"),
}

CONNECT_TIMEOUT_S = 3  # a server that is not there costs one short wait per session, not one per test
DATABASE_PREFIX = "runrecord_t_"  # test databases are recognisable on a shared server


on_sqlite_alone = pytest.mark.parametrize("dialect", ["sqlite"], indirect=True)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in item.path.parents:
            item.add_marker(pytest.mark.db)


def _in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("true", "1")


def _server_engine(url: URL) -> Engine:
    return create_engine(
        url,
        poolclass=NullPool,
        isolation_level="AUTOCOMMIT",  # CREATE DATABASE cannot run inside a transaction on PostgreSQL
        connect_args={"connect_timeout": CONNECT_TIMEOUT_S},
    )


@functools.cache
def _server(dialect: str) -> tuple[URL | None, str]:
    """The server's URL, or None and why it cannot be used; asked once per session."""
    variable, default = SERVERS[dialect]
    raw = os.environ.get(variable) or default
    try:
        url = make_url(raw)
    except Exception as error:
        return None, f"{variable}={raw!r} is not a database URL ({error})"
    try:
        engine = _server_engine(url)
        with engine.connect():
            pass
        engine.dispose()
    except Exception as error:
        return None, f"no {dialect} server at {describe(url)} ({one_line(error)}); set {variable}"
    return url, ""


def server_url(dialect: str) -> URL:
    """The URL of the dialect's test server; fails the test in CI, skips it elsewhere, when there is none;
    skips it when RUNRECORD_TEST_DIALECTS leaves the dialect out."""
    if dialect not in DIALECTS:
        pytest.skip(f"RUNRECORD_TEST_DIALECTS leaves out {dialect}")
    url, problem = _server(dialect)
    if url is None:
        if _in_ci():
            pytest.fail(problem, pytrace=False)
        pytest.skip(problem)
    return url


@contextmanager
def fresh_database(dialect: str, directory: Path) -> Iterator[str]:
    """A new empty database of the dialect, as a URL string; dropped on exit (SQLite: a file in directory)."""
    name = f"{DATABASE_PREFIX}{secrets.token_hex(6)}"
    if dialect == "sqlite":
        path = directory / f"{name}.sqlite"
        path.touch()  # an empty file is an empty SQLite database
        try:
            yield URL.create("sqlite", database=str(path)).render_as_string()
        finally:
            path.unlink(missing_ok=True)
        return
    server = server_url(dialect)
    admin = _server_engine(server)
    quoted = admin.dialect.identifier_preparer.quote(name)
    with admin.connect() as connection:
        connection.exec_driver_sql(f"CREATE DATABASE {quoted}{_creating_options(connection)}")
    try:
        yield server.set(database=name).render_as_string(hide_password=False)
    finally:
        _drop_database(admin, dialect, name, quoted)
        admin.dispose()


def _creating_options(connection: Connection) -> str:
    """MariaDB: the installation's character set. PostgreSQL 15 and later: the database copied file by file
    (with checkpoints), not block by block into the WAL; until the next checkpoint a database copied the
    other way creates each temporary table some four times slower (3 ms against 0.7, measured), and every
    job run creates forty."""
    if connection.dialect.name != "postgresql":
        return " CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci"
    version = connection.dialect.server_version_info or (0,)
    return " STRATEGY FILE_COPY" if version >= (15,) else ""


def _drop_database(admin: Engine, dialect: str, name: str, quoted: str) -> None:
    """Drop the database after ending every session still on it (a test's engine may still hold one)."""
    with admin.connect() as connection:
        if dialect == "postgresql":
            connection.execute(
                text("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = :name"),
                {"name": name},
            )
        else:
            sessions = connection.execute(
                text(
                    "SELECT id FROM information_schema.processlist WHERE db = :name AND id <> CONNECTION_ID()"
                ),
                {"name": name},
            ).scalars()
            for session in list(sessions):
                connection.exec_driver_sql(f"KILL {int(session)}")
        connection.exec_driver_sql(f"DROP DATABASE IF EXISTS {quoted}")


@pytest.fixture(scope="session", params=DIALECTS)
def dialect(request: pytest.FixtureRequest) -> str:
    """The dialect the test runs on."""
    return str(request.param)


@pytest.fixture
def make_empty_db(tmp_path: Path) -> Iterator[Callable[[str], str]]:
    """Make a brand-new empty database of a dialect, returned as a URL; each is dropped after the test."""
    with ExitStack() as stack:
        yield lambda dialect: stack.enter_context(fresh_database(dialect, tmp_path))


@pytest.fixture
def empty_db_url(dialect: str, make_empty_db: Callable[[str], str]) -> str:
    """A brand-new empty database of the test's dialect, dropped afterwards."""
    return make_empty_db(dialect)


@pytest.fixture(scope="session")
def _installation(dialect: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    with fresh_database(dialect, tmp_path_factory.mktemp(f"installation-{dialect}")) as url:
        engine = make_engine(url)
        init_db(engine, with_upstream=True)
        if dialect == "postgresql":
            _without_autovacuum(engine)
        yield engine
        engine.dispose()


def _without_autovacuum(engine: Engine) -> None:
    """No autovacuum on the installation's tables: it analyzes a table some time after a test filled it, and
    a later test would plan with those statistics or without them depending on the moment."""
    with engine.begin() as connection:
        preparer = connection.dialect.identifier_preparer
        for name in inspect(connection).get_table_names():
            connection.exec_driver_sql(f"ALTER TABLE {preparer.quote(name)} SET (autovacuum_enabled = false)")


def empty_installation(engine: Engine) -> Engine:
    """The installation's engine, every table but the migration version emptied, and without the statistics
    an earlier test's ANALYZE stored: a plan test plans as an installation without statistics does. SQLite
    keeps them in sqlite_stat1, which the table names leave out; PostgreSQL in pg_statistic, and the counted
    sizes of the tables and indexes in pg_class, set back here to those of a relation never analyzed."""
    with engine.begin() as connection:
        for name in inspect(connection).get_table_names():
            if name != VERSION_TABLE:
                connection.execute(delete(table(name)))
        if connection.dialect.name == "sqlite":
            connection.exec_driver_sql("DROP TABLE IF EXISTS sqlite_stat1")
        if connection.dialect.name == "postgresql":
            ours = "SELECT oid FROM pg_catalog.pg_class WHERE relnamespace = 'public'::regnamespace"
            connection.exec_driver_sql(f"DELETE FROM pg_catalog.pg_statistic WHERE starelid IN ({ours})")
            connection.exec_driver_sql(
                "UPDATE pg_catalog.pg_class SET reltuples = -1, relpages = 0, relallvisible = 0 "
                "WHERE relnamespace = 'public'::regnamespace AND relkind IN ('r', 'i')"
            )
    return engine


@pytest.fixture
def installation_engine(_installation: Engine) -> Engine:
    """An engine on a database with every upstream table and ours, all of them empty."""
    return empty_installation(_installation)


@dataclass
class ForcedPath:
    """A way of a batch forced for a test: the edge cases the differential runs on it, and the batches (or
    statements) that took it."""

    examples: int
    batches: int = 0


def _changes_counted(dialect: str, monkeypatch: pytest.MonkeyPatch) -> ForcedPath:
    """SQLite counts a batch's changed fields from the records' numbered modifies where its asked windows hold
    many changes (adapters.derive_scope._counts_changes); a test's windows hold a few, so the count is forced
    here. Counts the batches that counted them; the other engines never do, and skip."""
    if not plans.seeks_last_per_row(dialect):
        pytest.skip("only an engine that seeks the last row below a bound counts the changes")
    monkeypatch.setattr(derive_scope, "COUNTED_CHANGES", 0)
    counted = ForcedPath(examples=30)
    fill_modified = derive_scope._fill_modified

    def counting(connection: Connection, statistics: Callable[..., None]) -> None:
        fill_modified(connection, statistics)
        counted.batches += 1

    monkeypatch.setattr(derive_scope, "_fill_modified", counting)
    return counted


def _records_ranged(dialect: str, monkeypatch: pytest.MonkeyPatch) -> ForcedPath:
    """MariaDB seeks a window's rows as a range for each write of a record with many rows
    (adapters.derive_batch.WHOLE_RECORD_ROWS) and reads the others' rows by the record's key; a test's
    records have a few, so a record of two is made long here. Counts the batches with long records; the
    other engines have one way, and skip."""
    if not ranges_each_row(dialect):
        pytest.skip("only MariaDB seeks a window's rows as a range for each write")
    monkeypatch.setattr(derive_batch, "WHOLE_RECORD_ROWS", 1)
    # Fewer edge cases: nearly every story has a record of two rows, and MariaDB's take the longest.
    counted = ForcedPath(examples=12)
    fill_long = derive_batch._fill_long

    def counting(connection: Connection, rows: Table) -> int:
        long = fill_long(connection, rows)
        counted.batches += bool(long)
        return long

    monkeypatch.setattr(derive_batch, "_fill_long", counting)
    return counted


# The ways a batch takes only on an installation larger than a test's, forced.
_FORCED = {"changes-counted": _changes_counted, "records-ranged": _records_ranged}


@pytest.fixture(params=sorted(_FORCED))
def forced_path(request: pytest.FixtureRequest, dialect: str, monkeypatch: pytest.MonkeyPatch) -> ForcedPath:
    """A way a batch takes only on a larger installation, forced (the others skip): the batches or
    statements that took it, counted."""
    return _FORCED[request.param](dialect, monkeypatch)


@pytest.fixture
def installation_url(installation_engine: Engine) -> str:
    """The URL of installation_engine's database (for the command line), its tables emptied."""
    return installation_engine.url.render_as_string(hide_password=False)
