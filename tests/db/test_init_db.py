"""init-db: creates or upgrades our tables, creates upstream tables only when asked, fails in one line."""

from __future__ import annotations

import sqlite3
import tomllib
from collections.abc import Callable
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from click.testing import Result
from sqlalchemy import Column, Engine, Integer, MetaData, Table, UniqueConstraint, inspect, text

from adapters.database import DatabaseUnavailableError, make_engine
from adapters.revision import stored_revision
from adapters.schema import REQUIRED_UPSTREAM, VERSION_TABLE, ours, upstream
from jobs.migrations import HEAD, SCRIPT_LOCATION, compare_server_default, is_ours
from jobs.schema_setup import (
    alembic_config,
    current_revision,
    head_revision,
    init_db,
    known_revisions,
    upgrade_ours,
)

ALL_TABLES = set(upstream.tables) | set(ours.tables) | {VERSION_TABLE}
OUR_TABLES = set(ours.tables) | {VERSION_TABLE}
REPO_ROOT = Path(__file__).resolve().parents[2]


def tables_of(url: str) -> set[str]:
    engine = make_engine(url)
    try:
        return set(inspect(engine).get_table_names())
    finally:
        engine.dispose()


def shape_of(url: str) -> dict[str, list[str]]:
    """Every table with its column names in order."""
    engine = make_engine(url)
    try:
        inspector = inspect(engine)
        return {
            name: [c["name"] for c in inspector.get_columns(name)] for name in inspector.get_table_names()
        }
    finally:
        engine.dispose()


def assert_one_error_line(result: Result) -> None:
    assert isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code != 0
    assert "Traceback" not in result.output + result.stderr
    assert len(result.stderr.splitlines()) == 1, result.stderr
    assert result.stderr.startswith("runrecord: error:"), result.stderr


# --- creating and upgrading -------------------------------------------------------------------------------


def test_init_db_with_upstream_on_an_empty_database_creates_every_table(empty_db_url: str) -> None:
    engine = make_engine(empty_db_url)

    report = init_db(engine, with_upstream=True)

    engine.dispose()
    assert tables_of(empty_db_url) == ALL_TABLES
    assert set(report.created_upstream) == set(upstream.tables)
    assert (report.revision_before, report.revision_after) == (None, head_revision())


# nr-llm's own keys the derivation reads through (its ext_tables.sql, DOMAIN.md): created with the upstream
# tables for the demo and the tests, never added by runrecord to an installation's tables.
NR_LLM_KEYS = {
    ("tx_nrllm_agentrun", "status_lookup"): ["status", "crdate"],
    ("tx_nrllm_call_outcome", "correlation"): ["correlation_id"],
    ("tx_nrllm_call_outcome", "outcome_lookup"): ["outcome", "crdate"],
}


def test_init_db_with_upstream_creates_nr_llms_keys_the_derivation_reads_through(empty_db_url: str) -> None:
    engine = make_engine(empty_db_url)

    init_db(engine, with_upstream=True)

    inspector = inspect(engine)
    found = {
        (table, index["name"]): index["column_names"]
        for table in {table for table, _ in NR_LLM_KEYS}
        for index in inspector.get_indexes(table)
    }
    engine.dispose()
    assert {key: found.get(key) for key in NR_LLM_KEYS} == NR_LLM_KEYS


def test_init_db_a_second_time_changes_nothing(empty_db_url: str, run_cli: Callable[..., Result]) -> None:
    first = run_cli("init-db", "--db", empty_db_url, "--with-upstream")
    shape_after_first = shape_of(empty_db_url)

    second = run_cli("init-db", "--db", empty_db_url, "--with-upstream")

    assert first.exit_code == 0, first.stderr
    assert second.exit_code == 0, second.stderr
    assert shape_of(empty_db_url) == shape_after_first
    assert "none, all were there" in second.stdout
    assert f"up to date at revision {head_revision()}" in second.stdout


def test_mariadb_and_postgresql_get_the_same_tables_and_columns_as_sqlite(
    make_empty_db: Callable[[str], str],
) -> None:
    urls = {dialect: make_empty_db(dialect) for dialect in ("sqlite", "mariadb", "postgresql")}
    for url in urls.values():
        engine = make_engine(url)
        init_db(engine, with_upstream=True)
        engine.dispose()

    shapes = {dialect: shape_of(url) for dialect, url in urls.items()}

    assert set(shapes["sqlite"]) == ALL_TABLES
    assert shapes["mariadb"] == shapes["sqlite"]
    assert shapes["postgresql"] == shapes["sqlite"]


def test_the_migrations_build_exactly_the_tables_of_core_schema(installation_engine: Engine) -> None:
    with installation_engine.connect() as connection:
        context = MigrationContext.configure(
            connection,
            opts={
                "version_table": VERSION_TABLE,
                "include_name": is_ours,
                "compare_type": True,
                # The comparison the migrations' env.py uses: Alembic's own, except that it takes an empty
                # string default ('' on MariaDB, ('') on SQLite) for a change on every run; that is
                # rendering noise, not a difference. Types, nullability, indexes and unique constraints are
                # compared as Alembic does.
                "compare_server_default": compare_server_default,
            },
        )

        differences = compare_metadata(context, ours)

    assert differences == []


def test_current_revision_is_none_before_init_db_and_head_after(empty_db_url: str) -> None:
    engine = make_engine(empty_db_url)
    before = current_revision(engine)

    init_db(engine, with_upstream=True)

    assert (before, current_revision(engine)) == (None, head_revision())
    assert upgrade_ours(engine) == head_revision()
    engine.dispose()


def test_the_revision_read_without_alembic_is_the_one_alembic_reads(installation_engine: Engine) -> None:
    with installation_engine.connect() as connection:
        alembics = MigrationContext.configure(connection, opts={"version_table": VERSION_TABLE})

        assert stored_revision(connection) == alembics.get_current_revision() == head_revision()


def test_the_revision_every_job_requires_is_the_newest_migration_script() -> None:
    scripts = ScriptDirectory.from_config(alembic_config())

    assert scripts.get_current_head() == HEAD


def test_the_revisions_known_without_alembic_are_alembics() -> None:
    scripts = ScriptDirectory.from_config(alembic_config())

    assert known_revisions() == {script.revision for script in scripts.walk_revisions()}


def test_tables_of_a_newer_runrecord_are_named_so_by_the_jobs_and_by_init_db(
    installation_engine: Engine, installation_url: str, run_cli: Callable[..., Result]
) -> None:
    with installation_engine.begin() as connection:
        connection.execute(text(f"UPDATE {VERSION_TABLE} SET version_num = '9999'"))
    try:
        derive = run_cli("derive-outcomes", "--db", installation_url, "--now", "2026-12-01T00:00:00Z")
        init = run_cli("init-db", "--db", installation_url)
    finally:
        with installation_engine.begin() as connection:
            connection.execute(text(f"UPDATE {VERSION_TABLE} SET version_num = '{head_revision()}'"))

    for result in (derive, init):
        assert result.exit_code == 1, result.output
        assert len(result.stderr.splitlines()) == 1, result.stderr
        assert "revision 9999, which this runrecord does not know" in result.stderr
        assert "a newer runrecord wrote them" in result.stderr


@pytest.mark.parametrize("lost", ["dropped", "emptied"])
def test_our_tables_without_their_revision_are_refused_by_init_db_in_one_line_and_nothing_changes(
    empty_db_url: str, run_cli: Callable[..., Result], lost: str
) -> None:
    engine = make_engine(empty_db_url)
    init_db(engine, with_upstream=True)
    with engine.begin() as connection:
        connection.execute(text(f"{'DROP TABLE' if lost == 'dropped' else 'DELETE FROM'} {VERSION_TABLE}"))
    before = tables_of(empty_db_url)

    derive = run_cli("derive-outcomes", "--db", empty_db_url, "--now", "2026-12-01T00:00:00Z")
    init = run_cli("init-db", "--db", empty_db_url)

    engine.dispose()
    assert "run `runrecord init-db` first" in derive.stderr
    assert init.exit_code == 1 and len(init.stderr.splitlines()) == 1, init.stderr
    assert f"our tables are there but not the revision they are at ({VERSION_TABLE} is missing or empty)" in (
        init.stderr
    )
    assert f"restore {VERSION_TABLE} from a backup (this runrecord's revision is {HEAD})" in init.stderr
    assert tables_of(empty_db_url) == before


def test_a_failed_init_db_leaves_the_database_as_it_was(empty_db_url: str) -> None:
    # A table of ours made by hand: the migration reaches it after creating the upstream tables and four of
    # ours, then fails. MariaDB has committed each CREATE by then; init_db must drop them again.
    engine = make_engine(empty_db_url)
    squatter = Table("tx_runrecord_release", MetaData(), Column("x", Integer))
    squatter.create(engine)

    with pytest.raises(DatabaseUnavailableError, match="tx_runrecord_release"):
        init_db(engine, with_upstream=True)

    engine.dispose()
    assert tables_of(empty_db_url) == {"tx_runrecord_release"}


# --- refusing a database that is not an installation's ---------------------------------------------------


def test_init_db_refuses_a_database_without_the_upstream_tables(
    empty_db_url: str, run_cli: Callable[..., Result]
) -> None:
    present, missing = REQUIRED_UPSTREAM[:3], REQUIRED_UPSTREAM[3:]
    engine = make_engine(empty_db_url)
    upstream.create_all(engine, tables=[upstream.tables[name] for name in present])
    engine.dispose()

    result = run_cli("init-db", "--db", empty_db_url)

    assert_one_error_line(result)
    assert all(name in result.stderr for name in missing)
    assert not any(name in result.stderr for name in present)
    assert "--with-upstream" in result.stderr
    assert tables_of(empty_db_url) == set(present)


def test_init_db_creates_only_our_tables_on_an_installations_own_tables(
    tmp_path: Path, installation_sql: Path, run_cli: Callable[..., Result]
) -> None:
    path = tmp_path / "installation.sqlite"
    with sqlite3.connect(path) as connection:
        connection.executescript(installation_sql.read_text(encoding="utf-8"))
    connection.close()
    url = f"sqlite:///{path}"
    before = tables_of(url)

    result = run_cli("init-db", "--db", url)

    assert result.exit_code == 0, result.stderr
    assert set(REQUIRED_UPSTREAM) <= before
    assert tables_of(url) - before == OUR_TABLES


def test_the_upstream_tables_have_the_columns_of_an_installations_own_in_their_order(
    installation_sql: Path,
) -> None:
    with sqlite3.connect(":memory:") as connection:
        connection.executescript(installation_sql.read_text(encoding="utf-8"))
        theirs = {
            name: [column[1] for column in connection.execute(f"PRAGMA table_info({name})")]
            for (name,) in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        }
    connection.close()

    ours_upstream = {name: [c.name for c in table.columns] for name, table in upstream.tables.items()}

    assert {name: theirs.get(name) for name in ours_upstream} == ours_upstream
    assert "be_users" in ours_upstream and "be_users" not in REQUIRED_UPSTREAM


def test_the_upstream_tables_have_the_keys_of_an_installations_own(installation_sql: Path) -> None:
    """Every statement is planned beside the indexes an installation has, in the tests and the benchmarks
    too; the chat's KEY current_request_id (its ext_tables.sql) is one the schema beside us leaves out."""
    with sqlite3.connect(":memory:") as connection:
        connection.executescript(installation_sql.read_text(encoding="utf-8"))
        theirs = {
            (table, tuple(column[2] for column in connection.execute(f"PRAGMA index_info('{index}')")))
            for table, index in connection.execute(
                "SELECT tbl_name, name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL"
            )
        }
    connection.close()
    ours = {
        (name, tuple(column.name for column in index.columns))
        for name, table in upstream.tables.items()
        for index in table.indexes
    } | {
        (name, tuple(column.name for column in constraint.columns))
        for name, table in upstream.tables.items()
        for constraint in table.constraints
        if isinstance(constraint, UniqueConstraint)
    }

    assert ours - theirs == {("tx_nrmcpagent_conversation", ("current_request_id", "status"))}
    assert theirs - ours == set()


def test_init_db_creates_a_missing_sqlite_file(tmp_path: Path, run_cli: Callable[..., Result]) -> None:
    path = tmp_path / "new.sqlite"

    result = run_cli("init-db", "--db", f"sqlite:///{path}", "--with-upstream")

    assert result.exit_code == 0, result.stderr
    assert tables_of(f"sqlite:///{path}") == ALL_TABLES


def test_init_db_without_upstream_creates_no_sqlite_file(
    tmp_path: Path, run_cli: Callable[..., Result]
) -> None:
    path = tmp_path / "new.sqlite"

    result = run_cli("init-db", "--db", f"sqlite:///{path}")

    assert_one_error_line(result)
    assert "--with-upstream" in result.stderr
    assert list(tmp_path.iterdir()) == []


# --- bad input: one line, no traceback, nothing created ---------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "mysql+pymysql://root@127.0.0.1:1/test",
        "postgresql+psycopg://postgres@127.0.0.1:1/test",
    ],
)
def test_init_db_on_an_unreachable_server_fails_in_one_line(url: str, run_cli: Callable[..., Result]) -> None:
    result = run_cli("init-db", "--db", url, "--with-upstream")

    assert_one_error_line(result)
    assert "127.0.0.1" in result.stderr


def test_init_db_on_a_file_that_is_not_a_database_fails_in_one_line(
    tmp_path: Path, run_cli: Callable[..., Result]
) -> None:
    text_file = tmp_path / "notes.txt"
    text_file.write_text("not a database\n" * 100, encoding="utf-8")

    result = run_cli("init-db", "--db", f"sqlite:///{text_file}", "--with-upstream")

    assert_one_error_line(result)
    assert "not a database" in result.stderr
    assert text_file.read_text(encoding="utf-8") == "not a database\n" * 100
    assert list(tmp_path.iterdir()) == [text_file]


def test_init_db_where_no_file_can_be_created_fails_in_one_line(
    tmp_path: Path, run_cli: Callable[..., Result]
) -> None:
    # The parent is a regular file: no one can create a file under it, not even root (for whom a
    # chmod 0o500 directory would still be writable).
    blocker = tmp_path / "blocker"
    blocker.write_text("", encoding="utf-8")

    result = run_cli("init-db", "--db", f"sqlite:///{blocker / 'runrecord.sqlite'}", "--with-upstream")

    assert_one_error_line(result)
    assert "is not a directory" in result.stderr
    assert list(tmp_path.iterdir()) == [blocker]
    assert blocker.read_text(encoding="utf-8") == ""


def test_init_db_in_a_missing_directory_fails_in_one_line(
    tmp_path: Path, run_cli: Callable[..., Result]
) -> None:
    result = run_cli(
        "init-db", "--db", f"sqlite:///{tmp_path / 'absent' / 'runrecord.sqlite'}", "--with-upstream"
    )

    assert_one_error_line(result)
    assert "does not exist" in result.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "url",
    [
        "not a url",
        "nosuchdialect://127.0.0.1/test",
        "postgresql+psycopg://postgres@127.0.0.1:notaport/test",
    ],
)
def test_init_db_with_a_malformed_url_fails_in_one_line(url: str, run_cli: Callable[..., Result]) -> None:
    result = run_cli("init-db", "--db", url, "--with-upstream")

    assert_one_error_line(result)


# --- shipping ---------------------------------------------------------------------------------------------


def test_the_migrations_ship_with_the_package() -> None:
    find_packages = pytest.importorskip("setuptools").find_packages
    pyproject = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    setuptools = pyproject["tool"]["setuptools"]

    packages = find_packages(str(REPO_ROOT), include=setuptools["packages"]["find"]["include"])

    assert {"jobs.migrations", "jobs.migrations.versions"} <= set(packages)
    assert "migrations/script.py.mako" in setuptools["package-data"]["jobs"]
    assert (SCRIPT_LOCATION / "script.py.mako").is_file()
