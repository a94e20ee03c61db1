"""What the `runrecord` commands share: their errors as one line, the --db, --now and --port options, and
progress on stderr."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import Callable
from datetime import datetime
from typing import Any, NoReturn, TypeVar

import click
from click.exceptions import NoArgsIsHelpError

from adapters import clock, settings
from adapters.errors import RunrecordError
from adapters.settings import is_utf8

F = TypeVar("F", bound=Callable[..., Any])

# What a command says when it is stopped from outside: the database keeps what was committed and nothing of
# the transaction in hand, and each job goes on from its last commit on its next run.
STOPPED = (
    "runrecord: stopped ({how}) before {command} finished; what it had committed stays, the rest was not kept"
)


class Terminated(BaseException):
    """SIGTERM, raised where the command is (as Ctrl-C raises KeyboardInterrupt), so that its open
    transaction is rolled back and the command says so in one line."""


def _terminated(_signal: int, _frame: object) -> None:
    raise Terminated


def output_failed(error: OSError) -> NoReturn:
    """One line for an error of the system outside the database (stdout on a full disk, most often), then
    exit 1; stdout is let go, so that Python's last flush of it at exit says nothing more."""
    said = error.strerror or str(error)
    if error.filename is not None:
        said = f"{said}: {error.filename}"
    with contextlib.suppress(AttributeError, OSError, ValueError):  # no stdout at all: nothing to let go
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    click.echo(f"runrecord: error: {said}", err=True)
    sys.exit(1)


def stop_on_sigterm() -> None:
    """Turn SIGTERM into Terminated for a command run from the shell; the scheduler and the demo set their
    own handler while they run."""
    signal.signal(signal.SIGTERM, _terminated)


class CommandGroup(click.Group):
    """Turns every RunrecordError and database error into one line on stderr and exit code 1, and a
    malformed option or argument into one line and exit code 2 (click's code for usage errors)."""

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        """The command and its arguments, every one of them UTF-8 text: one place for all commands."""
        name, command, rest = super().resolve_command(ctx, args)
        undecodable = next((index for index, arg in enumerate(rest) if not is_utf8(arg)), None)
        if undecodable is not None and command is not None and not ctx.resilient_parsing:
            where = click.Context(command, info_name=name, parent=ctx)
            words = rest
            if isinstance(command, click.Group):
                named = next(
                    (at for at, word in enumerate(rest[:undecodable]) if word in command.commands), None
                )
                if named is not None:
                    where = click.Context(command.commands[rest[named]], info_name=rest[named], parent=where)
                    words, undecodable = rest[named + 1 :], undecodable - named - 1
            raise click.UsageError(f"{_which(where.command, words, undecodable)} is not UTF-8 text", where)
        return name, command, rest

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        """The group's own options (`runrecord --db URL alerts` gives --db to runrecord): a malformed one is
        one line too; a group named without a command says which it has (`runrecord` alone shows its
        help)."""
        try:
            return super().parse_args(ctx, args)
        except NoArgsIsHelpError:
            if ctx.parent is None:
                raise
            _usage_failed(ctx.command_path, f"a command is missing: {' or '.join(self.list_commands(ctx))}")
        except click.NoSuchOption as error:
            taken = any(
                error.option_name in self._option_names(command) for command in self.commands.values()
            )
            after = f"; {error.option_name} is given after the command's name" if taken else ""
            _usage_failed(ctx.command_path, f"{error.format_message().rstrip('.')}{after}")
        except click.UsageError as error:
            _usage_failed(error.ctx.command_path if error.ctx is not None else ctx.command_path, error)

    @staticmethod
    def _option_names(command: click.Command) -> set[str]:
        names = {name for param in command.params for name in getattr(param, "opts", ())}
        if isinstance(command, click.Group):
            names |= {name for sub in command.commands.values() for name in CommandGroup._option_names(sub)}
        return names

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except click.UsageError as error:
            _usage_failed(error.ctx.command_path if error.ctx is not None else _command_path(ctx), error)
        except RunrecordError as error:
            click.echo(f"runrecord: error: {error}", err=True)
            sys.exit(1)
        except (KeyboardInterrupt, Terminated) as stop:
            ctrl_c = isinstance(stop, KeyboardInterrupt)
            command = _command_path(ctx)
            click.echo(STOPPED.format(how="Ctrl-C" if ctrl_c else "SIGTERM", command=command), err=True)
            sys.exit(128 + (signal.SIGINT if ctrl_c else signal.SIGTERM))
        except Exception as error:
            if not _is_database_error(error):
                raise
            from adapters.database import one_line

            click.echo(f"runrecord: error: database: {one_line(error)}", err=True)
            sys.exit(1)


def _usage_failed(command: str, error: click.UsageError | str) -> NoReturn:
    """A malformed option or argument of `command`: one line, exit code 2 (click's code for usage errors)."""
    message = " ".join((error if isinstance(error, str) else error.format_message()).split())
    click.echo(f"runrecord: error: {command}: {message} (see {command} --help)", err=True)
    sys.exit(2)


def _command_path(ctx: click.Context) -> str:
    """The command a usage error without a context of its own belongs to: click raises an option's missing
    values (`--between A` as the last word) before the command's context exists."""
    if ctx.invoked_subcommand is None:
        return ctx.command_path
    return f"{ctx.command_path} {ctx.invoked_subcommand}"


def _which(command: click.Command, words: list[str], index: int) -> str:
    """The word at `index` for a message, by the option it gives a value to or the argument it is, never by
    its text: a database URL holds its password."""
    word = words[index]
    if word.startswith("--") and "=" in word:
        name = word.split("=", 1)[0]
        return f"the value of {name}" if is_utf8(name) else "an option"
    arguments = [param for param in command.params if isinstance(param, click.Argument)]
    position = at = 0
    while at < index:
        option = _option_taking_values(command, words[at])
        if option is not None:
            if index <= at + option.nargs:
                return f"the value of {words[at]}"
            at += 1 + option.nargs
            continue
        position += not words[at].startswith("-")
        at += 1
    if word.startswith("-"):
        return "an option"
    return (
        f"the argument {arguments[position].human_readable_name}"
        if position < len(arguments)
        else "an argument"
    )


def _option_taking_values(command: click.Command, word: str) -> click.Option | None:
    options = (param for param in command.params if isinstance(param, click.Option))
    return next((option for option in options if not option.is_flag and word in option.opts), None)


def _is_database_error(error: Exception) -> bool:
    """A SQLAlchemy error; asked without importing SQLAlchemy, which a command that raised one has loaded."""
    errors = sys.modules.get("sqlalchemy.exc")
    return errors is not None and isinstance(error, errors.SQLAlchemyError)


def existing_database(_ctx: click.Context | None, _param: click.Parameter | None, value: str) -> str:
    """A command that reads a SQLite file must not create it as an empty one by opening it."""
    from adapters.database import parse_url, sqlite_path

    path = sqlite_path(parse_url(value))
    if path is not None and not path.exists():
        raise RunrecordError(
            f"no database file at {path}: `runrecord demo` builds the demo there, "
            "`runrecord init-db --db …` prepares an installation's database"
        )
    return value


def _db_option(function: F, *, creates: bool) -> F:
    return click.option(
        "--db",
        "db_url",
        default=lambda: settings.get("db"),
        show_default=f"${settings.SETTINGS[0].env}, else {settings.SETTINGS[0].default}",
        help="SQLAlchemy URL of the database.",
        callback=None if creates else existing_database,
    )(function)


def db_option(function: F) -> F:
    """The --db option of a command that reads an existing database."""
    return _db_option(function, creates=False)


def creating_db_option(function: F) -> F:
    """The --db option of a command that may create the database as a new SQLite file."""
    return _db_option(function, creates=True)


def parse_now(value: str | None) -> datetime:
    """--now as an aware datetime (UTC when no offset is given); adapters.clock's time when absent."""
    if value is None:
        return clock.now()
    return clock.parse_instant(value, what="--now")


def port_option(function: F) -> F:
    return click.option(
        "--port",
        type=click.IntRange(1, 65535),
        default=None,  # read when the command runs: a malformed setting is not a malformed option
        show_default="$RUNRECORD_DASHBOARD_PORT, else 8501",
        help="Port of the dashboard on 127.0.0.1.",
    )(function)


def progress_printer() -> Callable[[Any], None]:
    """Progress lines on stderr, at most one every two seconds and the last one always."""
    last = [0.0]

    def show(progress: Any) -> None:
        if progress.seconds - last[0] < 2.0 and progress.conversations < progress.total:
            return
        last[0] = progress.seconds
        click.echo(
            f"  {progress.conversations:,}/{progress.total:,} conversations, {progress.rows:,} rows, "
            f"{progress.rows_per_second:,.0f} rows/s",
            err=True,
        )

    return show


class DeriveProgressBar:
    """click's progress bar on stderr, shown only on a terminal (the caller passes update only then)."""

    def __init__(self) -> None:
        self._bar: Any = None
        self._shown = 0

    def update(self, done: int, total: int) -> None:
        if self._bar is None:
            self._bar = click.progressbar(length=max(total, 1), label="deriving runs", file=sys.stderr)
            self._bar.__enter__()
        self._bar.update(done - self._shown)
        self._shown = done

    def close(self) -> None:
        if self._bar is not None:
            self._bar.__exit__(None, None, None)
            self._bar = None
