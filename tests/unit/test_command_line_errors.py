"""Bad input on the command line: one line on stderr, a non-zero exit, nothing created."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from jobs.migrations import HEAD


@pytest.mark.parametrize(
    "command",
    [("record", "1"), ("notes", "1"), ("watch-conversations",), ("measure-rates",), ("release", "list")],
    ids=lambda args: " ".join(args),
)
def test_a_command_that_reads_a_sqlite_file_refuses_a_missing_one_and_does_not_create_it(
    command: tuple[str, ...], tmp_path: Path, run_cli: Callable[..., Result]
) -> None:
    missing = tmp_path / "missing.sqlite"

    result = run_cli(*command, "--db", f"sqlite:///{missing}")

    assert result.exit_code == 1
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("runrecord: error: no database file")
    assert not missing.exists()


@pytest.mark.parametrize(
    "command",
    [
        ("record", "abc"),
        ("record", "99999999999999999999"),
        ("notes", "0"),
        ("alerts", "ack", "9223372036854775808"),
        ("measure-rates", "--grain", "month"),
        ("release", "add"),
        ("no-such-command",),
        ("--bogus",),
        ("--db", "sqlite:///x.sqlite", "alerts"),
        ("release",),
        ("release", "--db", "sqlite:///x.sqlite", "list"),
        ("alerts", "--bogus"),
    ],
    ids=lambda args: " ".join(args),
)
def test_a_malformed_option_or_argument_is_one_line_and_exit_code_2(
    command: tuple[str, ...], run_cli: Callable[..., Result]
) -> None:
    result = run_cli(*command)

    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("runrecord: error: runrecord")


def test_a_commands_option_given_before_it_or_a_group_without_its_command_says_so_in_one_line(
    run_cli: Callable[..., Result],
) -> None:
    misplaced = run_cli("--db", "sqlite:///x.sqlite", "alerts")
    bare = run_cli("release")

    assert misplaced.stderr == (
        "runrecord: error: runrecord: No such option '--db'; --db is given after the command's name "
        "(see runrecord --help)\n"
    )
    assert bare.stderr == (
        "runrecord: error: runrecord release: a command is missing: add or list "
        "(see runrecord release --help)\n"
    )


@pytest.mark.parametrize(
    ("url", "said"),
    [
        (
            "sqlite:///{path}?mode=ro",
            "a SQLite database as sqlite:///PATH, with no query arguments (given: mode)",
        ),
        ("sqlite:///{path}?mode=ro&uri=true", "with no query arguments (given: mode, uri)"),
        (
            "mysql+pymysql://root@127.0.0.1:1/test?mode=ro",
            "the pymysql driver does not take one of its query",
        ),
    ],
    ids=["sqlite", "sqlite-uri", "mariadb"],
)
@pytest.mark.parametrize("command", [("release", "list"), ("init-db", "--with-upstream")], ids=" ".join)
def test_a_db_url_with_a_query_argument_the_driver_does_not_take_is_refused_in_one_line(
    url: str, said: str, command: tuple[str, ...], tmp_path: Path, run_cli: Callable[..., Result]
) -> None:
    database = tmp_path / "existing.sqlite"
    sqlite3.connect(database).execute("CREATE TABLE unrelated (a INTEGER)").connection.close()
    before = {path.name: path.read_bytes() for path in tmp_path.iterdir()}

    result = run_cli(*command, "--db", url.format(path=database))

    assert result.exit_code == 1, result.output
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("runrecord: error: cannot use the")
    assert said in result.stderr
    assert {path.name: path.read_bytes() for path in tmp_path.iterdir()} == before


@pytest.mark.parametrize("command", [("alerts",), ("derive-outcomes",)], ids=" ".join)
def test_a_file_the_db_url_names_that_cannot_be_read_is_one_error_line(
    command: tuple[str, ...], tmp_path: Path, run_cli: Callable[..., Result]
) -> None:
    # PyMySQL reads its certificate before it connects: an OSError, which SQLAlchemy does not wrap. The
    # line shows no value of the URL's query (a key's password is one).
    url = f"mysql+pymysql://root@127.0.0.1:1/test?ssl_ca={tmp_path}/missing.pem&ssl_key_password=Secret1"

    result = run_cli(*command, "--db", url)

    assert result.exit_code == 1, result.output
    assert result.stderr == (
        "runrecord: error: cannot connect to "
        "mysql+pymysql://root@127.0.0.1:1/test?ssl_ca=***&ssl_key_password=***: "
        "[Errno 2] No such file or directory\n"
    )


@pytest.mark.parametrize(
    ("query", "said"),
    [
        ("connect_timeout=abc", "cannot use the database URL"),
        ("ssl_check_hostname=maybe", "cannot use the database URL"),
        ("port=3306", "cannot connect to"),
    ],
    ids=["connect_timeout", "ssl_check_hostname", "port"],
)
def test_a_query_argument_the_driver_takes_with_a_value_it_cannot_read_is_one_error_line(
    query: str, said: str, run_cli: Callable[..., Result]
) -> None:
    result = run_cli("alerts", "--db", f"mysql+pymysql://root@127.0.0.1:1/test?{query}")

    name = query.split("=")[0]
    assert result.exit_code == 1, result.output
    assert result.stderr.count("\n") == 1
    assert result.stderr.startswith(
        f"runrecord: error: {said} mysql+pymysql://root@127.0.0.1:1/test?{name}=***: "
    )


def test_an_option_missing_its_values_at_the_end_is_one_line_naming_its_command(
    run_cli: Callable[..., Result],
) -> None:
    result = run_cli("compare", "edited_rate", "--between", "configuration:a")

    assert result.exit_code == 2
    assert result.stderr == (
        "runrecord: error: runrecord compare: Option '--between' requires 2 arguments. "
        "(see runrecord compare --help)\n"
    )


NOT_UTF8 = b"\xff".decode("utf-8", "surrogateescape")  # a raw byte argument, as Python hands it on


@pytest.mark.parametrize(
    "command",
    [
        ("init-db", "--db", "sqlite:///{tmp}/" + NOT_UTF8 + ".sqlite"),
        ("generate", "--db", "sqlite:///{tmp}/demo.sqlite", "--manifest", "{tmp}/" + NOT_UTF8 + ".json"),
        ("compare", "edited_rate", "--at", "2026-11-02", "--group", "skill:" + NOT_UTF8, "--db", "{db}"),
        ("compare", "edited_rate", "--between", "configuration:a", "configuration:" + NOT_UTF8),
        ("survival", "--group", "configuration:" + NOT_UTF8, "--db", "{db}"),
        ("derive-outcomes", "--now", "2026-11-25T14:00" + NOT_UTF8, "--db", "{db}"),
        ("alerts", "--db", "sqlite:///{tmp}/" + NOT_UTF8 + ".sqlite"),
    ],
    ids=lambda args: " ".join(args[:2]),
)
def test_an_argument_that_is_not_utf8_is_refused_in_one_line_by_every_command(
    command: tuple[str, ...], tmp_path: Path, run_cli: Callable[..., Result]
) -> None:
    database = tmp_path / "existing.sqlite"
    sqlite3.connect(database).close()
    before = sorted(tmp_path.iterdir())

    result = run_cli(*(part.format(tmp=tmp_path, db=f"sqlite:///{database}") for part in command))

    assert result.exit_code == 2, result.output
    assert result.stderr.count("\n") == 1
    assert result.stderr.startswith(f"runrecord: error: runrecord {command[0]}: ")
    assert " is not UTF-8 text (see runrecord " in result.stderr
    assert sorted(tmp_path.iterdir()) == before


@pytest.mark.parametrize(
    ("command", "named"),
    [
        (("compare", "edited" + NOT_UTF8 + "_rate", "--at", "2026-11-02"), "the argument METRIC"),
        (("compare", "--at", "2026-11-02", "edited" + NOT_UTF8 + "_rate"), "the argument METRIC"),
        (
            ("compare", "edited_rate", "--between", "configuration:a", "configuration:" + NOT_UTF8),
            "the value of --between",
        ),
        (("compare", "edited_rate", "--at", "2026-11-02", "extra" + NOT_UTF8), "an argument"),
        (("compare", "edited_rate", "--f" + NOT_UTF8), "an option"),
    ],
    ids=["first", "after an option", "second side", "one too many", "option"],
)
def test_a_word_that_is_not_utf8_is_named_by_the_argument_or_option_it_is(
    command: tuple[str, ...], named: str, run_cli: Callable[..., Result]
) -> None:
    result = run_cli(*command)

    assert result.exit_code == 2
    assert result.stderr == (
        f"runrecord: error: runrecord compare: {named} is not UTF-8 text (see runrecord compare --help)\n"
    )


@pytest.mark.parametrize("given", ["--db", "--db="], ids=["--db URL", "--db=URL"])
def test_a_db_url_that_is_not_utf8_is_named_by_its_option_and_never_shown(
    given: str, run_cli: Callable[..., Result]
) -> None:
    url = "postgresql+psycopg://editor:Secret1@127.0.0.1:1/r" + NOT_UTF8 + "view"
    words = [given, url] if given == "--db" else [given + url]

    result = run_cli("alerts", *words)

    assert result.exit_code == 2
    assert result.stderr == (
        "runrecord: error: runrecord alerts: the value of --db is not UTF-8 text "
        "(see runrecord alerts --help)\n"
    )


def test_a_setting_that_is_not_utf8_is_one_line_that_does_not_show_it(
    run_cli: Callable[..., Result], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RUNRECORD_DB", "postgresql+psycopg://editor:Secret1@127.0.0.1:1/r" + NOT_UTF8)

    result = run_cli("alerts")

    assert result.exit_code == 1
    assert result.stderr == "runrecord: error: RUNRECORD_DB is not UTF-8 text\n"


INSTALLATION_HINT = "(a table of the installation itself: is this the installation's database?)"
# A command that reads runrecord's own tables asks for their revision before anything else; without them and
# without the installation's, it asks what init-db would ask.
UPSTREAM_HINT = (
    "is it the installation's database? (`runrecord init-db --with-upstream` creates empty ones for a demo "
    "or a test database)"
)


@pytest.mark.parametrize(
    ("command", "hint"),
    [
        (("watch-conversations",), INSTALLATION_HINT),
        (("record", "1"), INSTALLATION_HINT),
        (("notes", "1"), INSTALLATION_HINT),
        (("release", "list"), UPSTREAM_HINT),
    ],
    ids=lambda value: " ".join(value) if isinstance(value, tuple) else "",
)
def test_a_database_without_the_tables_says_in_one_line_whose_table_is_missing_and_what_to_do(
    command: tuple[str, ...], hint: str, tmp_path: Path, run_cli: Callable[..., Result]
) -> None:
    # The installation's tables come with TYPO3 and its extensions; init-db makes runrecord's own.
    database = tmp_path / "other.sqlite"
    sqlite3.connect(database).execute("CREATE TABLE unrelated (a INTEGER)").connection.close()

    result = run_cli(*command, "--db", f"sqlite:///{database}")

    assert result.exit_code == 1
    assert result.stderr.count("\n") == 1 and result.stderr.endswith(f"{hint}\n")


@pytest.mark.parametrize("command", [("release", "list"), ("derive-outcomes",), ("survival",)], ids=" ".join)
def test_an_installations_database_without_runrecords_tables_says_to_run_init_db(
    command: tuple[str, ...], installation_sql: Path, tmp_path: Path, run_cli: Callable[..., Result]
) -> None:
    database = tmp_path / "installation.sqlite"
    with sqlite3.connect(database) as connection:
        connection.executescript(installation_sql.read_text())
    connection.close()

    result = run_cli(*command, "--db", f"sqlite:///{database}")

    assert result.exit_code == 1 and result.stderr.count("\n") == 1
    assert result.stderr.endswith(
        f"our tables are at revision none, {' '.join(command)} needs {HEAD}: run `runrecord init-db` first\n"
    )


def test_a_database_error_no_command_reported_is_one_line_and_exit_code_1() -> None:
    from click.testing import CliRunner
    from sqlalchemy.exc import OperationalError

    from jobs.cli_options import CommandGroup

    group = CommandGroup("runrecord")

    @group.command("broken")
    def broken() -> None:
        raise OperationalError("SELECT 1", {}, Exception("disk I/O error\nat page 7"))

    result = CliRunner().invoke(group, ["broken"], prog_name="runrecord")

    assert result.exit_code == 1
    assert result.stderr == "runrecord: error: database: disk I/O error at page 7\n"


@pytest.mark.parametrize(
    ("command", "dropped"),
    [
        (("derive-outcomes",), "tx_nrllm_agentrun_event.kind"),
        (("measure-rates",), "tx_nrllm_agentrun.tstamp"),
        (("watch-conversations",), "tx_nrllm_agentrun_event.kind"),
    ],
    ids=lambda value: value[0] if isinstance(value, tuple) else value,
)
def test_a_job_that_fails_on_a_database_error_names_the_database_once(
    command: tuple[str, ...], dropped: str, tmp_path: Path, run_cli: Callable[..., Result]
) -> None:
    database = _installation(tmp_path)
    table, column = dropped.split(".")
    with sqlite3.connect(database) as connection:
        connection.execute(f"ALTER TABLE {table} DROP COLUMN {column}")

    result = run_cli(*command, "--now", "2026-11-29T00:00:00", "--db", f"sqlite:///{database}")

    assert result.exit_code == 1
    assert result.stderr.count("\n") == 1
    assert result.stderr.startswith(f"runrecord: error: {command[0]}")
    assert result.stderr.count(str(database)) == 1, result.stderr
    assert f"no such column: {dropped}" in result.stderr


def test_a_missing_table_of_the_installation_is_one_line_that_does_not_send_the_user_to_init_db(
    tmp_path: Path, run_cli: Callable[..., Result]
) -> None:
    database = _installation(tmp_path)
    with sqlite3.connect(database) as connection:
        connection.execute("ALTER TABLE tx_nrllm_agentrun_event RENAME TO tx_nrllm_agentrun_event_renamed")

    result = run_cli("watch-conversations", "--now", "2026-11-29T00:00:00", "--db", f"sqlite:///{database}")

    assert result.exit_code == 1
    assert result.stderr.count("\n") == 1 and result.stderr.count(str(database)) == 1
    assert "no such table: tx_nrllm_agentrun_event (a table of the installation itself:" in result.stderr
    assert "init-db" not in result.stderr


@pytest.mark.parametrize(
    "table", ["sys_history", "tx_nrllm_agentrun", "tx_nrllm_agentrun_event", "tx_nrllm_call_outcome"]
)
def test_derive_outcomes_without_a_table_it_reads_stops_in_one_line_before_it_writes_anything(
    table: str, tmp_path: Path, run_cli: Callable[..., Result]
) -> None:
    database = _installation(tmp_path)
    with sqlite3.connect(database) as connection:
        connection.execute(
            "INSERT INTO tx_nrllm_agentrun_event (pid, run, sequence, kind, payload, crdate) "
            'VALUES (0, 1, 0, \'tool_write\', \'{"writeTargetTable": "pages", "writeTargetUid": 1}\', 1)'
        )
        connection.execute(f"ALTER TABLE {table} RENAME TO renamed")
        ours = _our_rows(connection)

    result = run_cli("derive-outcomes", "--now", "2026-11-29T00:00:00", "--db", f"sqlite:///{database}")

    assert result.exit_code == 1
    assert result.stderr.count("\n") == 1
    assert f"the database lacks the installation's table {table}: is it the installation's database?" in (
        result.stderr
    )
    with sqlite3.connect(database) as connection:
        assert _our_rows(connection) == ours


def _installation(tmp_path: Path) -> Path:
    """A SQLite file with the installation's tables and runrecord's, all empty."""
    from adapters.database import make_engine
    from jobs.schema_setup import init_db

    database = tmp_path / "installation.sqlite"
    engine = make_engine(f"sqlite:///{database}")
    init_db(engine, with_upstream=True)
    engine.dispose()
    return database


def _our_rows(connection: sqlite3.Connection) -> dict[str, int]:
    """The rows of runrecord's tables but the job log, which records a failed run too."""
    names = [
        row[0]
        for row in connection.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'tx_runrecord_%'"
        )
    ]
    return {
        name: connection.execute(f'SELECT count(*) FROM "{name}"').fetchone()[0]
        for name in names
        if name != "tx_runrecord_job_run"
    }


def test_a_malformed_clock_setting_stops_the_schedulers_dry_run_before_it_prints_a_line(
    run_cli: Callable[..., Result], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RUNRECORD_NOW", "garbage")

    result = run_cli("scheduler", "--dry-run")

    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr == "runrecord: error: RUNRECORD_NOW is not an ISO 8601 date or time: 'garbage'\n"


def test_generate_refuses_a_now_whose_installation_would_begin_before_1970_and_creates_nothing(
    tmp_path: Path, run_cli: Callable[..., Result]
) -> None:
    target = tmp_path / "early.sqlite"

    result = run_cli("generate", "--db", f"sqlite:///{target}", "--now", "1970-07-05")

    assert result.exit_code == 1
    assert result.stderr == (
        "runrecord: error: --now 1970-07-05 is too early: the installation's rows span the 180 days "
        "before the week of --now, which would begin before 1970; give --now 1970-07-06 or later\n"
    )
    assert not target.exists()
