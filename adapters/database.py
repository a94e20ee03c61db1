"""Engines and the errors a database can give, turned into one clear line."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from inspect import Signature, signature
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event, inspect
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, NoSuchModuleError, SQLAlchemyError

from adapters.dialect.names import is_sqlite
from adapters.errors import RunrecordError
from adapters.schema import OUR_PREFIX

__all__ = ["RunrecordError"]  # raised here, and imported from here by the jobs and the pages


class DatabaseUnavailableError(RunrecordError):
    """The database cannot be reached, opened or used."""


SQLITE_BUSY_TIMEOUT_MS = 30_000  # the dashboard, the scheduler and a job may share one SQLite file


def parse_url(url: str) -> URL:
    """A SQLAlchemy URL, or a RunrecordError naming what is wrong with it."""
    try:
        parsed = make_url(url)
    except (ArgumentError, ValueError) as error:
        raise RunrecordError(f"not a database URL: {_masked(url)!r}") from error
    _refuse_sqlite_query(parsed)
    return parsed


def _masked(url: str) -> str:
    """A URL that could not be parsed, for a message: its password and its query's values as ***. Before
    the query, all between the scheme (or `scheme://user:`) and the last @ is taken for the password; without
    an @, what follows `://user:` unless it is a port."""
    head, question, query = url.partition("?")
    if "@" in head:
        userinfo, _, host = head.rpartition("@")
        kept = re.match(r"[^:/@]*://[^:/@]*:", userinfo) or re.match(r"[^:]*:", userinfo)
        head = f"{kept.group(0) if kept else ''}***@{host}"
    else:
        head = re.sub(r"(://[^:/]*:)(?![0-9]*(?:/|$))[^/]*", r"\1***", head, count=1)
    return head + question + re.sub(r"([^=&]*=)[^&]*", r"\1***", query)


def _refuse_sqlite_query(url: URL) -> None:
    """runrecord opens a SQLite file by its path, with its own busy timeout: pysqlite would ignore an unknown
    query argument (mode=ro, with a warning), and with uri=true open a new file named after the query."""
    if is_sqlite(url.get_backend_name()) and url.query:
        raise RunrecordError(
            f"cannot use the database URL {describe(url)}: runrecord takes a SQLite database as "
            f"sqlite:///PATH, with no query arguments (given: {', '.join(sorted(url.query))})"
        )


def describe(url: URL | str) -> str:
    """The URL for messages and logs: never its password, nor the value of a query argument (a driver takes
    secrets there too: PyMySQL's ssl_key_password, psycopg's password)."""
    parsed = parse_url(url) if isinstance(url, str) else url
    shown = parsed.set(query={}).render_as_string(hide_password=True)
    return shown + "".join(f"{'&' if index else '?'}{key}=***" for index, key in enumerate(parsed.query))


def sqlite_path(url: URL) -> Path | None:
    """The file of a file-backed SQLite URL, else None."""
    if not is_sqlite(url.get_backend_name()) or url.database in (None, "", ":memory:"):
        return None
    return Path(url.database)


def _set_sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute(f"PRAGMA busy_timeout = {SQLITE_BUSY_TIMEOUT_MS}")
    cursor.close()


def make_engine(url: str | URL) -> Engine:
    """An engine for the URL; nothing connects until it is used. A query argument the driver does not take
    is refused here, not ignored or left to fail when the engine first connects."""
    parsed = parse_url(url) if isinstance(url, str) else url
    _refuse_sqlite_query(parsed)
    try:
        engine = create_engine(parsed, pool_pre_ping=True)
    # ValueError: a query argument's value the dialect cannot read (connect_timeout=abc).
    except (NoSuchModuleError, ArgumentError, ImportError, ValueError) as error:
        raise RunrecordError(f"cannot use the database URL {describe(parsed)}: {error}") from error
    _refuse_unknown_connect_arguments(engine)
    event.listen(engine, "do_connect", partial(_connect_or_report, parsed))
    if is_sqlite(parsed.get_backend_name()):
        event.listen(engine, "connect", _set_sqlite_pragmas)
    return engine


@dataclass
class _JobEngine:
    engine: Engine
    running: int = 0  # the jobs using it now


# The engines of the jobs' runs, one per URL in this process (job_engine).
_JOB_ENGINES: dict[str, _JobEngine] = {}
_JOB_ENGINES_LOCK = threading.Lock()


@contextmanager
def job_engine(url: str) -> Iterator[Engine]:
    """The engine a job runs on: made once for the URL in this process. The scheduler runs every job night
    after night in one process, and SQLAlchemy keeps the statements it compiled per engine, so a night does
    not compile the job's statements again (with the dialect's first connection, 0.07–0.13 s of a night:
    docs/speed-log.md, "A night in the scheduler's process"). When the last job running on it ends, its
    connections are closed; the compiled statements stay."""
    parsed = _resolved(parse_url(url))
    key = parsed.render_as_string(hide_password=False)
    with _JOB_ENGINES_LOCK:
        entry = _JOB_ENGINES.get(key)
        if entry is None:
            entry = _JOB_ENGINES[key] = _JobEngine(make_engine(parsed))
        entry.running += 1
    try:
        yield entry.engine
    finally:
        with _JOB_ENGINES_LOCK:
            entry.running -= 1
            if entry.running == 0:
                entry.engine.dispose()


def _resolved(url: URL) -> URL:
    """The URL with a relative SQLite file made absolute: the file of the directory a job starts in, as its
    engine resolves it (one made in another directory opens another file)."""
    path = sqlite_path(url)
    return url if path is None or path.is_absolute() else url.set(database=str(path.absolute()))


def _connect_or_report(url: URL, dialect: Any, _record: Any, arguments: Any, keywords: Any) -> Any:
    """The driver's connection. A file the URL names that cannot be read (PyMySQL's ssl_ca, ssl_cert, …) or a
    value of a query argument the driver cannot read (`port=3306` as text) is an error in one line, not the
    driver's OSError or ValueError, which SQLAlchemy hands on as they are."""
    try:
        return dialect.connect(*arguments, **keywords)
    except (OSError, ValueError) as error:
        raise RunrecordError(f"cannot connect to {describe(url)}: {error}") from error


# Python 3.11 reads a builtin's signature by parsing its text with `ast`, whose recursion bookkeeping two
# threads parsing at once can upset ("SystemError: AST constructor recursion depth mismatch"): the scheduler
# starts jobs in threads, each making its engine. So each driver's signature is read once, one at a time.
_SIGNATURES: dict[Any, Signature | None] = {}
_SIGNATURES_LOCK = threading.Lock()


def _connect_signature(connect: Any) -> Signature | None:
    """The signature of a driver's connect(); None when it has none to read."""
    with _SIGNATURES_LOCK:
        if connect not in _SIGNATURES:
            try:
                _SIGNATURES[connect] = signature(connect)
            except (TypeError, ValueError):
                _SIGNATURES[connect] = None
        return _SIGNATURES[connect]


def _refuse_unknown_connect_arguments(engine: Engine) -> None:
    """Every argument the URL hands the driver's connect() is one it takes. PyMySQL's names each one and
    would raise a TypeError for any other, a traceback, once the engine connects; psycopg's takes any and
    refuses an unknown one in a line of its own when connecting; sqlite3's has no signature to read."""
    accepted = _connect_signature(engine.dialect.loaded_dbapi.connect)
    if accepted is None:
        return
    arguments, keywords = engine.dialect.create_connect_args(engine.url)
    try:
        accepted.bind(*arguments, **keywords)
    except TypeError as error:
        driver = engine.dialect.driver
        raise RunrecordError(
            f"cannot use the database URL {describe(engine.url)}: the {driver} driver does not take one of "
            f"its query arguments ({error})"
        ) from error


def _driver_error(error: BaseException) -> BaseException:
    """The driver's own error inside SQLAlchemy's wrapper, else the error itself."""
    return error.orig if isinstance(error, DBAPIError) and error.orig is not None else error


# The messages that quote a value a statement read or wrote, each with the value's place: MariaDB's duplicate
# key (1062), a value a column, a function or a variable refused (1366, 1292, 1411, 1231, 1367), the text near
# a syntax error (1064: PyMySQL puts the bound values into the statement); PostgreSQL's value out of a type's
# range and the value its primary message ends with (`invalid input syntax for type integer: "…"`, `date/time
# field value out of range: "…"`, `malformed array literal: "…"`). Each value is taken to its message's last
# delimiter, so that a quote inside it does not end it early.
_QUOTED_VALUES = tuple(
    re.compile(pattern, re.DOTALL)
    for pattern in (
        r"(Duplicate entry ').*(' for key)",
        r"(value: ').*('(?: for | at row |\W*$))",
        r"(value of ').*('\W*$)",
        r"(Illegal \w+ ').*(' value)",
        r"(near ').*(' at line \d+)",
        r"(value \").*(\" is out of range)",
        r"(: \").*(\"\W*$)",
    )
)


def one_line(error: BaseException) -> str:
    """The driver's message of a database error, on one line, without the values it quotes (DESIGN.md
    "Privacy": a value of the installation's rows can be an editor's). PostgreSQL's is its primary message
    alone: the DETAIL, CONTEXT and LINE parts quote the statement and the values it read."""
    original = _driver_error(error)
    primary = getattr(getattr(original, "diag", None), "message_primary", None)
    message = primary if isinstance(primary, str) and primary.strip() else str(original)
    for quoted in _QUOTED_VALUES:
        message = quoted.sub(r"\1…\2", message)
    text = " ".join(message.split())
    return text or type(original).__name__


@contextmanager
def reported(engine: Engine, action: str) -> Iterator[None]:
    """Turn a database error raised inside the block into a DatabaseUnavailableError naming the database, and
    a date of ours SQLite holds and SQLAlchemy cannot read into a RunrecordError naming its row."""
    try:
        yield
    except SQLAlchemyError as error:
        message = f"{action} on {describe(engine.url)} failed: {one_line(error)}"
        raise DatabaseUnavailableError(message + missing_table_hint(error)) from error
    except (ValueError, TypeError) as error:
        from adapters import stored_dates

        if not stored_dates.failed_reading_a_value(error):
            raise
        try:
            found = stored_dates.unreadable(engine)
        except Exception:
            raise error from None
        if not found:
            raise
        said = f"{action} on {describe(engine.url)} failed: {'; '.join(found)}"
        raise RunrecordError(f"{said}: mend or delete {'it' if len(found) == 1 else 'them'}") from error


# How each driver says that a table is missing: SQLite's message, MariaDB's error 1146, PostgreSQL's SQLSTATE.
_MISSING_TABLE_TEXT = "no such table"
_MARIADB_NO_SUCH_TABLE = 1146
_MARIADB_TABLE_ACCESS_DENIED = 1142  # ER_TABLEACCESS_DENIED_ERROR
_POSTGRESQL_UNDEFINED_TABLE = "42P01"


def missing_table(error: BaseException) -> bool:
    """Whether a database error says that a table the statement names does not exist."""
    original = _driver_error(error)
    if getattr(original, "sqlstate", None) == _POSTGRESQL_UNDEFINED_TABLE:
        return True
    arguments = getattr(original, "args", ())
    if arguments and arguments[0] == _MARIADB_NO_SUCH_TABLE:
        return True
    return _MISSING_TABLE_TEXT in str(original)


def refused_table(error: BaseException) -> bool:
    """Whether a MariaDB error says the account may not use the table (not whether one is there)."""
    arguments: tuple[object, ...] = getattr(_driver_error(error), "args", ())
    return bool(arguments) and arguments[0] == _MARIADB_TABLE_ACCESS_DENIED


# The missing table's name in each driver's message: SQLite's, MariaDB's (database.table) and PostgreSQL's.
_MISSING_TABLE_NAME = re.compile(
    r"no such table: (?:\w+\.)?(\w+)"
    r"|Table '(?:[^'.]+\.)?(\w+)' doesn't exist"
    r"|relation \"(?:\w+\.)?(\w+)\" does not"
)


def missing_table_hint(error: BaseException) -> str:
    """What to do about a missing table, for the end of an error line ("" unless a table is missing): create
    runrecord's own tables, or point at the installation's database when one of the installation's is missing
    (init-db creates none of those on an installation)."""
    if not missing_table(error):
        return ""
    found = _MISSING_TABLE_NAME.search(str(_driver_error(error)))
    name = next((group for group in found.groups() if group), "") if found is not None else ""
    if not name or name.lower().startswith(OUR_PREFIX):
        return " (run `runrecord init-db` on the installation's database first)"
    return " (a table of the installation itself: is this the installation's database?)"


def check_reachable(engine: Engine) -> None:
    """Connect once and read the table list, so that a file that is not a database fails here."""
    path = sqlite_path(engine.url)
    if path is not None and not path.exists():
        raise DatabaseUnavailableError(f"no database file at {path}")
    with reported(engine, "connecting"), engine.connect() as connection:
        inspect(connection).get_table_names()


def table_names(engine: Engine) -> set[str]:
    """The tables the database has, as it lists them."""
    with reported(engine, "listing tables"), engine.connect() as connection:
        return set(inspect(connection).get_table_names())
