"""The `runrecord` command line: one command per job, each a thin wrapper around a module of jobs/."""

from __future__ import annotations

import sys
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, TypeVar

import click
from sqlalchemy.exc import SQLAlchemyError

from jobs import settings
from jobs.database import RunrecordError, one_line

F = TypeVar("F", bound=Callable[..., Any])


class _Group(click.Group):
    """Turns every RunrecordError and database error into one line on stderr and exit code 1."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except RunrecordError as error:
            click.echo(f"runrecord: error: {error}", err=True)
            sys.exit(1)
        except SQLAlchemyError as error:
            click.echo(f"runrecord: error: database: {one_line(error)}", err=True)
            sys.exit(1)


def db_option(function: F) -> F:
    """The --db option every command takes."""
    return click.option(
        "--db",
        "db_url",
        default=lambda: settings.get("db"),
        show_default=f"${settings.SETTINGS[0].env}, else {settings.SETTINGS[0].default}",
        help="SQLAlchemy URL of the database.",
    )(function)


def parse_now(value: str | None) -> datetime:
    """--now as an aware datetime (UTC when no offset is given); the current time when absent."""
    if value is None:
        return datetime.now(UTC)
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError as error:
        raise RunrecordError(f"--now is not an ISO 8601 date or time: {value!r}") from error
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


@click.group(cls=_Group)
@click.version_option(package_name="runrecord")
def main() -> None:
    """What the AI chat of a TYPO3 backend actually did, and what became of it."""
