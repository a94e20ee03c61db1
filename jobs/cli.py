"""The `runrecord` command line: one command per job, each a thin wrapper around a module of jobs/."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

import click
from sqlalchemy.exc import SQLAlchemyError

from jobs import settings
from jobs.database import RunrecordError, one_line, parse_url

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


@main.command("init-db")
@db_option
@click.option(
    "--with-upstream",
    is_flag=True,
    help="Also create the missing upstream tables (for a demo or a test database, never in production).",
)
def init_db(db_url: str, with_upstream: bool) -> None:
    """Create or upgrade our tables; refuse a database without the upstream tables unless --with-upstream."""
    # Imported here: only this command needs Alembic, and every other command starts faster without it.
    from jobs.database import describe, make_engine
    from jobs.schema_setup import init_db as run_init_db

    engine = make_engine(db_url)
    try:
        report = run_init_db(engine, with_upstream=with_upstream)
    finally:
        engine.dispose()
    where = describe(engine.url)
    if with_upstream:
        created = ", ".join(report.created_upstream) or "none, all were there"
        click.echo(f"upstream tables created in {where}: {created}")
    if report.revision_before == report.revision_after:
        click.echo(f"our tables in {where} are up to date at revision {report.revision_after}")
    else:
        before = report.revision_before or "none"
        click.echo(f"our tables in {where} upgraded from revision {before} to {report.revision_after}")


@main.command("generate")
@db_option
@click.option("--conversations", type=click.IntRange(min=2), default=100, show_default=True)
@click.option(
    "--seed", type=int, default=1, show_default=True, help="The same seed writes the same installation."
)
@click.option(
    "--now", "now_text", default=None, help="ISO 8601 time the installation ends at [default: now]."
)
@click.option("--window-days", type=click.IntRange(min=1), default=7, show_default=True)
@click.option(
    "--manifest",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Where to write what was planted [default: beside a SQLite file, none for a server].",
)
def generate_command(
    db_url: str, conversations: int, seed: int, now_text: str | None, window_days: int, manifest: Path | None
) -> None:
    """Write a realistic installation (every table, ours included) into an empty database."""
    from jobs.installation.generate import default_manifest, generate

    target = parse_url(db_url)
    report = generate(
        db_url,
        conversations=conversations,
        seed=seed,
        now=parse_now(now_text),
        window_days=window_days,
        manifest=manifest or default_manifest(target),
        progress=_progress_printer(),
    )
    summary = report.summary
    click.echo(
        f"wrote {summary.conversations:,} conversations, {summary.runs:,} runs, {summary.writes:,} writes "
        f"({report.rows:,} rows) to {report.target} in {report.seconds:.1f} s, "
        f"{report.rows_per_second:,.0f} rows/s"
    )
    if report.manifest is not None:
        click.echo(f"manifest: {report.manifest}")


def _progress_printer() -> Callable[[Any], None]:
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


def _port_option(function: F) -> F:
    return click.option(
        "--port",
        type=click.IntRange(1, 65535),
        default=lambda: int(settings.get("dashboard_port")),
        show_default="$RUNRECORD_DASHBOARD_PORT, else 8501",
        help="Port of the dashboard on 127.0.0.1.",
    )(function)


@main.command("dashboard")
@db_option
@_port_option
def dashboard_command(db_url: str, port: int) -> None:
    """Serve the dashboard on localhost until stopped (Ctrl-C)."""
    from jobs.demo import serve_dashboard

    click.echo(f"dashboard on http://127.0.0.1:{port}/ (Ctrl-C stops it)")
    sys.exit(serve_dashboard(db_url, port=port))


@main.command("demo")
@db_option
@_port_option
@click.option("--no-dashboard", is_flag=True, help="Build the database and run the jobs, then exit.")
def demo_command(db_url: str, port: int, no_dashboard: bool) -> None:
    """Build the demo installation when it is missing, run the jobs once and serve the dashboard."""
    from jobs.demo import ensure_demo_database, serve_dashboard

    url = parse_url(db_url)
    report = ensure_demo_database(url, now=parse_now(None), progress=_progress_printer())
    if report is None:
        click.echo(f"using the demo installation in {url.database}")
    else:
        click.echo(
            f"built the demo installation in {url.database}: {report.summary.conversations} conversations, "
            f"{report.summary.runs} runs, {report.rows:,} rows"
        )
    if no_dashboard:
        return
    click.echo(f"dashboard on http://127.0.0.1:{port}/ (Ctrl-C stops it)")
    sys.exit(serve_dashboard(db_url, port=port))


if __name__ == "__main__":
    main()


@main.command("record")
@click.argument("conversation", type=int)
@db_option
@click.option("--json", "as_json", is_flag=True, help="Print the stored and rebuilt record as JSON.")
def record_command(conversation: int, db_url: str, as_json: bool) -> None:
    """The run record of CONVERSATION rebuilt from events, beside the stored one, differences marked."""
    from jobs.conversation_record import load_conversation, rebuild_record
    from jobs.database import make_engine
    from jobs.record_view import record_json, record_text

    engine = make_engine(db_url)
    try:
        report = rebuild_record(load_conversation(engine, conversation))
    finally:
        engine.dispose()
    click.echo(
        json.dumps(record_json(report), indent=2, ensure_ascii=False) if as_json else record_text(report)
    )
    for problem in report.conversation.problems:
        click.echo(f"runrecord: warning: conversation {conversation}: {problem}", err=True)


@main.command("notes")
@click.argument("conversation", type=int)
@db_option
@click.option("--json", "as_json", is_flag=True, help="Print the notes as JSON.")
def notes_command(conversation: int, db_url: str, as_json: bool) -> None:
    """The notes the next turn of CONVERSATION gets, placed in its transcript, within the budget."""
    from jobs.conversation_record import load_conversation, next_turn_notes
    from jobs.database import make_engine
    from jobs.record_view import notes_json, notes_text

    engine = make_engine(db_url)
    try:
        report = next_turn_notes(engine, load_conversation(engine, conversation))
    finally:
        engine.dispose()
    click.echo(
        json.dumps(notes_json(report), indent=2, ensure_ascii=False) if as_json else notes_text(report)
    )
    for problem in report.conversation.problems:
        click.echo(f"runrecord: warning: conversation {conversation}: {problem}", err=True)
