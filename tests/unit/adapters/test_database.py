"""Engines from URLs: a query argument the driver takes reaches its connect(), a URL in a message hides its
secrets; nothing connects here."""

from __future__ import annotations

import inspect
import threading
from collections.abc import Callable

import pytest

from adapters import database
from adapters.database import RunrecordError, describe, make_engine, parse_url


@pytest.mark.parametrize(
    ("url", "passed"),
    [
        ("mysql+pymysql://root@127.0.0.1:1/test?charset=utf8mb4", {"charset": "utf8mb4"}),
        ("postgresql+psycopg://postgres@127.0.0.1:1/test?sslmode=disable", {"sslmode": "disable"}),
    ],
    ids=["mariadb", "postgresql"],
)
def test_a_query_argument_the_driver_takes_is_passed_on_to_it(url: str, passed: dict[str, str]) -> None:
    engine = make_engine(url)

    _arguments, keywords = engine.dialect.create_connect_args(engine.url)
    assert passed.items() <= keywords.items()
    engine.dispose()


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("postgresql+psycopg://editor:Secret1@db/typo3", "postgresql+psycopg://editor:***@db/typo3"),
        (
            "mysql+pymysql://root@db/typo3?ssl_key=/k.pem&ssl_key_password=Secret1",
            "mysql+pymysql://root@db/typo3?ssl_key=***&ssl_key_password=***",
        ),
        (
            "postgresql+psycopg://editor@db/typo3?password=Secret1",
            "postgresql+psycopg://editor@db/typo3?password=***",
        ),
        ("sqlite:///data/demo.sqlite", "sqlite:///data/demo.sqlite"),
    ],
    ids=["password", "query", "password in the query", "no secret"],
)
def test_a_url_in_a_message_shows_neither_its_password_nor_a_query_arguments_value(
    url: str, shown: str
) -> None:
    assert describe(url) == shown


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        (
            "postgresql+psycopg://editor:Se@cret1@db:notaport/typo3?sslpassword=Secret2",
            "postgresql+psycopg://editor:***@db:notaport/typo3?sslpassword=***",
        ),
        ("postgresql+psycopg:/admin:Secret1@db/x", "postgresql+psycopg:***@db/x"),
        ("mysql+pymysql//root:Secret1@db/x", "mysql+pymysql//root:***@db/x"),
        ("root:Sec:ret1@db/x", "root:***@db/x"),
        ("Secret1@db/x", "***@db/x"),
        ("postgresql:/admin:Secret1@db/x?next=http://a:b@c", "postgresql:***@db/x?next=***"),
        ("postgresql://user:Secret1", "postgresql://user:***"),
        ("postgresql://user:Secret1/typo3", "postgresql://user:***/typo3"),
        ("postgresql://user:a@b\nSecret1@db:x/y", "postgresql://user:***@db:x/y"),
    ],
    ids=[
        "a port that is no number",
        "one slash",
        "no colon after the scheme",
        "no scheme",
        "no colon",
        "a URL in the query",
        "no host",
        "no host but a database",
        "a line break in the password",
    ],
)
def test_a_url_that_cannot_be_read_is_shown_without_its_password_and_query_values(
    url: str, shown: str
) -> None:
    with pytest.raises(RunrecordError) as refused:
        parse_url(url)

    assert str(refused.value) == f"not a database URL: {shown!r}"
    assert "Secret" not in str(refused.value)


ENGINES = ["sqlite", "mariadb", "postgresql"]


def _missing_table_error(engine: str, table: str) -> BaseException:
    """The error the engine's driver raises for a missing table, as SQLAlchemy hands it on."""
    import sqlite3

    import psycopg
    import pymysql
    from sqlalchemy.exc import OperationalError, ProgrammingError

    if engine == "sqlite":
        return OperationalError("SELECT 1", {}, sqlite3.OperationalError(f"no such table: {table}"))
    if engine == "mariadb":
        driver = pymysql.err.ProgrammingError(1146, f"Table 'test.{table}' doesn't exist")
        return ProgrammingError("SELECT 1", {}, driver)
    return ProgrammingError(
        "SELECT 1", {}, psycopg.errors.UndefinedTable(f'relation "{table}" does not exist')
    )


@pytest.mark.parametrize("engine", ENGINES)
def test_a_missing_table_of_runrecord_s_own_says_to_run_init_db(engine: str) -> None:
    from adapters.database import missing_table_hint

    error = _missing_table_error(engine, "tx_runrecord_rate")

    assert missing_table_hint(error) == " (run `runrecord init-db` on the installation's database first)"


@pytest.mark.parametrize("engine", ENGINES)
def test_a_missing_table_of_the_installation_asks_whether_it_is_the_installation_s_database(
    engine: str,
) -> None:
    from adapters.database import missing_table_hint

    error = _missing_table_error(engine, "sys_history")

    assert (
        missing_table_hint(error)
        == " (a table of the installation itself: is this the installation's database?)"
    )


def test_an_error_that_is_no_missing_table_gets_no_hint() -> None:
    import sqlite3

    from sqlalchemy.exc import OperationalError

    from adapters.database import missing_table_hint

    assert (
        missing_table_hint(OperationalError("SELECT 1", {}, sqlite3.OperationalError("disk I/O error"))) == ""
    )


def test_engines_made_in_many_threads_at_once_read_each_drivers_connect_signature_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The scheduler starts its jobs in threads, each making an engine; Python 3.11 reads a builtin's signature
    # by parsing its text, which two threads at once can break (SystemError).
    read: list[object] = []

    def counted(connect: Callable[..., object]) -> inspect.Signature:
        read.append(connect)
        return inspect.signature(connect)

    monkeypatch.setattr(database, "signature", counted)
    monkeypatch.setattr(database, "_SIGNATURES", {})
    urls = ["sqlite:////tmp/one.sqlite", "mysql+pymysql://root@127.0.0.1:1/x"] * 8
    start = threading.Barrier(len(urls))
    failures: list[BaseException] = []

    def make(url: str) -> None:
        start.wait()
        try:
            database.make_engine(url).dispose()
        except BaseException as error:  # any failure of a thread fails the test below
            failures.append(error)

    threads = [threading.Thread(target=make, args=(url,)) for url in urls]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert failures == []
    assert len(read) == len(set(read)) == 2


@pytest.mark.parametrize(
    ("message", "line"),
    [
        (
            "(1062, \"Duplicate entry 'it's' for key 'PRIMARY'\")",
            "(1062, \"Duplicate entry '…' for key 'PRIMARY'\")",
        ),
        (
            "(1062, \"Duplicate entry 'a' for key 'b' for key 'uid'\")",
            "(1062, \"Duplicate entry '…' for key 'uid'\")",
        ),
        (
            "(1366, \"Incorrect integer value: 'x' for column 'y' for column `db`.`t`.`n` at row 1\")",
            "(1366, \"Incorrect integer value: '…' for column `db`.`t`.`n` at row 1\")",
        ),
        (
            "(1292, \"Truncated incorrect DOUBLE value: 'it's'\")",
            "(1292, \"Truncated incorrect DOUBLE value: '…'\")",
        ),
        (
            "(1231, \"Variable 'sql_mode' can't be set to the value of 'a'b'\")",
            "(1231, \"Variable 'sql_mode' can't be set to the value of '…'\")",
        ),
        (
            "(1064, \"You have an error in your SQL syntax; near 'SELEC 'it's'' at line 1\")",
            "(1064, \"You have an error in your SQL syntax; near '…' at line 1\")",
        ),
        ('invalid input syntax for type integer: "a "b" c"', 'invalid input syntax for type integer: "…"'),
        ('invalid input value for enum mood: "x"', 'invalid input value for enum mood: "…"'),
        (
            "(1406, \"Data too long for column 'a' at row 1\")",
            "(1406, \"Data too long for column 'a' at row 1\")",
        ),
        ('column "recuid" does not exist', 'column "recuid" does not exist'),
        (
            "(1411, \"Incorrect datetime value: 'x' for function str_to_date\")",
            "(1411, \"Incorrect datetime value: '…' for function str_to_date\")",
        ),
        (
            "(1367, \"Illegal double '1e999' value found during parsing\")",
            "(1367, \"Illegal double '…' value found during parsing\")",
        ),
        (
            'value "99999999999" is out of range for type integer',
            'value "…" is out of range for type integer',
        ),
        ('date/time field value out of range: "2026-02-30"', 'date/time field value out of range: "…"'),
        ('malformed array literal: "{a"', 'malformed array literal: "…"'),
        ('relation "tx_nrllm_agentrun" does not exist', 'relation "tx_nrllm_agentrun" does not exist'),
    ],
)
def test_a_database_error_line_keeps_the_message_and_cuts_each_value_it_quotes_whole(
    message: str, line: str
) -> None:
    assert database.one_line(RuntimeError(message)) == line
