"""The `runrecord` command line: one command per job, each a thin wrapper around a module of jobs/."""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from adapters import clock, settings
from adapters.errors import RunrecordError
from core.formatting import plural
from core.table_names import MAX_RECORD_UID
from core.time import DAY_S
from core.window import MAX_WINDOW_DAYS
from jobs.cli_options import (
    CommandGroup,
    DeriveProgressBar,
    Terminated,
    creating_db_option,
    db_option,
    existing_database,
    output_failed,
    parse_now,
    port_option,
    progress_printer,
    stop_on_sigterm,
)
from jobs.cli_reports import alerts_group, compare_command, release_group, survival_command
from jobs.cli_values import now_option

DERIVE_JOB = "derive-outcomes"  # its name in tx_runrecord_job_run, as jobs.scheduler_config.JOBS names it


@click.group(cls=CommandGroup)
@click.version_option(package_name="runrecord")
def main() -> None:
    """What the AI chat of a TYPO3 backend actually did, and what became of it."""
    # A failed statement reaches the user as one line (adapters.database.reported); psycopg would also log
    # its own warning about the lost connection through Python's last-resort handler, a second line.
    logging.getLogger("psycopg").addHandler(logging.NullHandler())


def run() -> None:
    """The `runrecord` console script: the commands, with SIGTERM stopping one as Ctrl-C does, and an output
    that cannot be written (a full disk) said in one line."""
    stop_on_sigterm()
    try:
        main(prog_name="runrecord")
    except OSError as error:  # click itself ends quietly on a closed pipe (EPIPE) only
        output_failed(error)


for command in (release_group, compare_command, survival_command, alerts_group):
    main.add_command(command)


@main.command("init-db")
@creating_db_option
@click.option(
    "--with-upstream",
    is_flag=True,
    help="Also create the missing upstream tables (for a demo or a test database, never in production).",
)
@click.option(
    "--derive-again",
    is_flag=True,
    help="When a table of our outcomes was dropped by hand: create it again and derive every finished run "
    "again, from sys_history as it is now.",
)
def init_db(db_url: str, with_upstream: bool, derive_again: bool) -> None:
    """Create or upgrade our tables; refuse a database without the upstream tables unless --with-upstream."""
    # Imported here: only this command needs Alembic, and every other command starts faster without it.
    from adapters.database import describe, make_engine
    from jobs.schema_setup import init_db as run_init_db

    engine = make_engine(db_url)
    try:
        report = run_init_db(engine, with_upstream=with_upstream, derive_again=derive_again)
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
    repaired = report.repaired
    if repaired.recreated:
        click.echo(f"created again, empty (they were missing): {', '.join(repaired.recreated)}")
    if repaired.derived_again:
        click.echo(
            "  derive-outcomes derives every finished run again on its next run, from sys_history as it is "
            "now (a run whose rows are gone comes out unknown, history_trimmed); tx_nrllm_call_outcome keeps "
            "the rows it has"
        )
    elif repaired.events_read_again:
        click.echo("  derive-outcomes reads every tool_write event again on its next run; the outcomes stay")
    if repaired.survival_counted_again:
        click.echo("  the survival counts were counted again from the write outcomes")
    if repaired.measured_again:
        click.echo("  measure-rates counts every conversation and period again on its next run")


@main.command("generate")
@creating_db_option
@click.option(
    "--conversations",
    type=click.IntRange(min=2),
    default=100,
    show_default=True,
    help="Everyday conversations; an SEO campaign adds 1.1 tours (a conversation each) for every one of them "
    "(docs/demo.md).",
)
@click.option(
    "--seed", type=int, default=1, show_default=True, help="The same seed writes the same installation."
)
@now_option("ISO 8601 time the installation ends at [default: now].")
@click.option(
    "--window-days",
    type=click.IntRange(1, MAX_WINDOW_DAYS),
    default=7,
    show_default=True,
    help="The window the planted outcomes are laid out for (derive-outcomes' --window-days).",
)
@click.option(
    "--manifest",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Where to write what was planted [default: beside a SQLite file, none for a server].",
)
@click.option(
    "--processing",
    type=click.Choice(["exec", "worker", "mixed"]),
    default="mixed",
    show_default=True,
    help="How the chat runs turns, which decides how its sys_history rows are stamped: a process per request "
    "(exec), one long-running worker (worker), or either per conversation (mixed).",
)
def generate_command(
    db_url: str,
    conversations: int,
    seed: int,
    now_text: str | None,
    window_days: int,
    manifest: Path | None,
    processing: str,
) -> None:
    """Write a realistic installation (every table, ours included) into an empty database."""
    from adapters.database import parse_url
    from data.generate import default_manifest, generate
    from data.processes import ProcessingChoice
    from jobs.schema_setup import init_installation

    target = parse_url(db_url)
    report = generate(
        db_url,
        create_tables=init_installation,
        conversations=conversations,
        seed=seed,
        now=parse_now(now_text),
        window_days=window_days,
        manifest=manifest or default_manifest(target),
        progress=progress_printer(),
        processing=ProcessingChoice(processing),
    )
    summary = report.summary
    click.echo(
        f"wrote {summary.conversations:,} conversations, {summary.runs:,} runs, {summary.writes:,} writes "
        f"({report.rows:,} rows) to {report.target} in {report.seconds:.1f} s, "
        f"{report.rows_per_second:,.0f} rows/s"
    )
    if report.manifest is not None:
        click.echo(f"manifest: {report.manifest}")


@main.command("dashboard")
@db_option
@port_option
def dashboard_command(db_url: str, port: int | None) -> None:
    """Serve the dashboard on localhost until stopped (Ctrl-C)."""
    from jobs.demo import require_free_port, serve_dashboard

    port = settings.dashboard_port() if port is None else port
    settings.window_days()  # every page reads it: a malformed value stops here, not on each page
    settings.own_transcript_skills()  # the Conversation page reads it
    settings.admin_session_minutes()  # the administrator sign-in reads them
    settings.admin_session_secret()
    require_free_port(port)
    click.echo(f"dashboard on http://127.0.0.1:{port}/ (Ctrl-C stops it)")
    sys.exit(serve_dashboard(db_url, port=port))


@main.command("demo")
@creating_db_option
@port_option
@click.option("--no-dashboard", is_flag=True, help="Build the database and run the jobs, then exit.")
def demo_command(db_url: str, port: int | None, no_dashboard: bool) -> None:
    """Build the demo installation when it is missing, run the jobs once, serve the dashboard and run the
    scheduler beside it."""
    from adapters.database import parse_url
    from jobs.demo import ensure_demo_database, prepare_demo, require_free_port, serve_demo
    from jobs.scheduler_config import SchedulerConfig

    # The settings first: a malformed one stops the demo before it builds or runs anything.
    settings.window_days()
    settings.alert_webhook()
    if not no_dashboard:
        port = settings.dashboard_port() if port is None else port
        settings.own_transcript_skills()
        settings.admin_session_minutes()
        settings.admin_session_secret()
        SchedulerConfig.from_settings()
        require_free_port(port)
    url = parse_url(db_url)
    report = ensure_demo_database(url, now=parse_now(None), progress=progress_printer())
    if report is None:
        click.echo(f"using the demo installation in {url.database}")
    else:
        click.echo(
            f"built the demo installation in {url.database}: "
            f"{plural(report.summary.conversations, 'conversation')}, {plural(report.summary.runs, 'run')}, "
            f"{plural(report.rows, 'row')}"
        )
    prepare_demo(url, say=click.echo)
    if no_dashboard:
        return
    assert port is not None  # read above
    click.echo(f"dashboard on http://127.0.0.1:{port}/ with the scheduler beside it (Ctrl-C stops both)")
    sys.exit(serve_demo(db_url, port=port, say=click.echo))


@main.command("record")
@click.argument("conversation", type=click.IntRange(1, MAX_RECORD_UID))
@db_option
@click.option("--json", "as_json", is_flag=True, help="Print the stored and rebuilt record as JSON.")
def record_command(conversation: int, db_url: str, as_json: bool) -> None:
    """The run record of CONVERSATION rebuilt from events, beside the stored one, differences marked."""
    from core.record_rebuild import rebuild_record
    from core.record_text import record_json, record_text

    _show_conversation(
        conversation,
        db_url,
        lambda _engine, loaded: rebuild_record(loaded),
        record_json if as_json else None,
        record_text,
    )


@main.command("notes")
@click.argument("conversation", type=click.IntRange(1, MAX_RECORD_UID))
@db_option
@click.option("--json", "as_json", is_flag=True, help="Print the notes as JSON.")
def notes_command(conversation: int, db_url: str, as_json: bool) -> None:
    """The notes the next turn of CONVERSATION gets, placed in its transcript, within the budget."""
    from adapters.conversations import last_page_visible
    from core.record_rebuild import next_turn_notes
    from core.record_text import notes_json, notes_text

    skills = settings.own_transcript_skills()
    _show_conversation(
        conversation,
        db_url,
        lambda engine, loaded: next_turn_notes(
            loaded, own_transcript_skills=skills, last_page_visible=last_page_visible(engine, loaded)
        ),
        notes_json if as_json else None,
        notes_text,
    )


def _show_conversation(
    conversation: int,
    db_url: str,
    build: Callable[[Any, Any], Any],
    as_json: Callable[[Any], dict[str, Any]] | None,
    as_text: Callable[[Any], str],
) -> None:
    """Load one conversation, build a report of it, print it, and name every row that could not be read."""
    from adapters.conversations import load_conversation
    from adapters.database import make_engine

    engine = make_engine(db_url)
    try:
        report = build(engine, load_conversation(engine, conversation))
    finally:
        engine.dispose()
    click.echo(json.dumps(as_json(report), indent=2, ensure_ascii=False) if as_json else as_text(report))
    for problem in report.conversation.problems:
        click.echo(f"runrecord: warning: conversation {conversation}: {problem}", err=True)


@main.command("derive-outcomes")
@db_option
@now_option("ISO 8601 time to derive as of [default: now].")
@click.option(
    "--window-days",
    type=click.IntRange(1, MAX_WINDOW_DAYS),
    default=None,  # read when the command runs: a malformed setting is not a malformed option
    show_default="$RUNRECORD_WINDOW_DAYS, else 7",
    help="Days after a write during which human changes count (ADR-185, 'A window').",
)
@click.option(
    "--batch-size",
    type=click.IntRange(min=1, max=50_000),  # jobs.derive.MAX_BATCH_SIZE
    default=None,  # adapters.dialect.session.batch_runs
    show_default="50000 on SQLite, else 25000",
    help="Runs per batch; each batch is one transaction.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
def derive_outcomes_command(
    db_url: str, now_text: str | None, window_days: int | None, batch_size: int | None, as_json: bool
) -> None:
    """Derive the observed outcome of every run whose last write's window has closed (ADR-185)."""
    from adapters.database import describe, make_engine
    from jobs.derive import Summary, derive_outcomes, result_of, summary_lines
    from jobs.job_log import JobResult, Status, execute

    now = int(parse_now(now_text).timestamp())
    window_s = (settings.window_days() if window_days is None else window_days) * DAY_S
    engine = make_engine(db_url)
    bar = DeriveProgressBar()
    summaries: list[Summary] = []

    def derive() -> JobResult:
        summaries.append(
            derive_outcomes(
                engine,
                now=now,
                window_s=window_s,
                batch_size=batch_size,
                progress=bar.update if sys.stderr.isatty() else None,
            )
        )
        return result_of(summaries[-1])

    try:
        execution = execute(engine, DERIVE_JOB, derive)
    finally:
        bar.close()
        engine.dispose()
    if execution.status is not Status.OK:
        raise _failed(DERIVE_JOB, describe(engine.url), execution.result.message)
    summary = summaries[-1]
    if as_json:
        click.echo(json.dumps(summary.to_json(), indent=2))
    else:
        click.echo("\n".join(summary_lines(summary)))


@main.command("watch-conversations")
@db_option
@now_option("ISO 8601 time to check at [default: now].")
@click.option("--json", "as_json", is_flag=True, help="Print the reading as JSON.")
def watch_conversations_command(db_url: str, now_text: str | None, as_json: bool) -> None:
    """Stuck conversations, the sys_history horizon and pending derivations; stores one health row."""
    from adapters.database import describe, make_engine
    from core.health import lines
    from jobs import watch
    from jobs.job_log import JobResult, Status, execute

    now = parse_now(now_text)
    window_s = settings.window_seconds()
    engine = make_engine(db_url)
    readings = []

    def check() -> JobResult:
        readings.append(watch.watch(engine, now=now, window_s=window_s))
        return watch.result_of(readings[-1])

    try:
        execution = execute(engine, watch.JOB, check)
    finally:
        engine.dispose()
    if execution.status is not Status.OK:
        raise _failed(watch.JOB, describe(engine.url), execution.result.message)
    reading = readings[-1]
    if as_json:
        click.echo(json.dumps(watch.as_json(reading), indent=2))
        return
    checked_at = watch.as_json(reading)["checked_at"]
    click.echo(f"health of {describe(engine.url)} at {checked_at}: {reading.status}")
    for line in lines(reading):
        click.echo(f"  {line}")


@main.command("scheduler")
@creating_db_option
@click.option("--dry-run", is_flag=True, help="List the jobs and their next run times, then exit.")
def scheduler_command(db_url: str, dry_run: bool) -> None:
    """Run the jobs on schedule in the foreground until SIGTERM or Ctrl-C; one scheduler per database."""
    if not dry_run:  # a dry run lists the schedule and opens no database
        existing_database(None, None, db_url)
        settings.alert_webhook()  # measure-rates POSTs its alerts there
    from adapters.database import describe, parse_url
    from jobs import scheduler
    from jobs.scheduler_config import SchedulerConfig, plan

    where = describe(parse_url(db_url))
    config = SchedulerConfig.from_settings()
    if dry_run:
        # The clock (RUNRECORD_NOW) is read before the first line is printed.
        planned_jobs = plan(config, clock.now().astimezone(config.timezone))
        click.echo(
            f"scheduler for {where}: time zone {config.timezone.key}, misfire grace "
            f"{config.misfire_grace_s} s, lease {config.lease_s:g} s"
        )
        for planned in planned_jobs:
            when = "never" if planned.next_run is None else f"{planned.next_run:%Y-%m-%d %H:%M %Z}"
            if planned.spec.after is not None:
                when = f"after {when}"
            problem = "" if planned.problem is None else f"  ({planned.problem})"
            click.echo(
                f"  {planned.spec.name:<20} {planned.spec.schedule:<22} next {when:<28} "
                f"{planned.spec.target}{problem}"
            )
        return
    # Our own lines say what ran; the libraries speak up only when something is wrong.
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(message)s")
    logging.getLogger("jobs").setLevel(logging.INFO)
    scheduler.run_in_foreground(db_url, config)


@main.command("measure-rates")
@db_option
@now_option(
    "ISO 8601 time the windows and periods are judged at [default: now]; rows stamped later count too."
)
@click.option(
    "--grain",
    type=click.Choice(["week", "day"]),
    default="week",
    show_default=True,
    help="Periods of the rates: ISO weeks (Monday to Sunday, UTC) or UTC days. The scheduler writes both.",
)
@click.option(
    "--json", "as_json", is_flag=True, help="Print the summary and the release comparisons as JSON."
)
def measure_rates_command(db_url: str, now_text: str | None, grain: str, as_json: bool) -> None:
    """Measure the rates into tx_runrecord_rate: open periods and new ones; closed periods stay as stored."""
    from adapters.database import describe, make_engine
    from core.comparison import DEFAULT_WEEKS
    from core.comparison_text import comparison_json, comparison_line
    from core.periods import Grain
    from jobs import alerts, measure, measure_summary, releases
    from jobs.job_log import JobResult, Status, execute

    now = int(parse_now(now_text).timestamp())
    window_s = settings.window_seconds()
    webhook = settings.alert_webhook()
    chosen = Grain(grain)
    engine = make_engine(db_url)
    measured: list[measure.Measurement] = []

    def work() -> JobResult:
        measured.append(
            measure.measure_and_alert(
                engine, now=now, window_s=window_s, grains=(chosen,), webhook_url=webhook
            )
        )
        return measured[-1].result()

    not_compared: str | None = None
    try:
        execution = execute(engine, measure.JOB, work)
        if execution.status is not Status.OK:
            raise _failed(measure.JOB, describe(engine.url), execution.result.message)
        try:
            compared = releases.release_comparisons(engine, grain=chosen, now=now)
        except RunrecordError as error:  # the rates are stored: they are reported, then the failure
            compared, not_compared = [], str(error)
    finally:
        engine.dispose()
    summary, check = measured[-1].summary, measured[-1].check
    if as_json:
        document = measure_summary.summary_json(summary)
        document["releases"] = (
            None
            if not_compared is not None
            else [
                {
                    "released_on": release.released_on.isoformat(),
                    "label": release.label,
                    "comparisons": [comparison_json(report) for report in reports],
                }
                for release, reports in compared
            ]
        )
        document["alerts"] = None if check is None else alerts.check_json(check)
        click.echo(json.dumps(document, indent=2, ensure_ascii=False))
    else:
        click.echo("\n".join(measure_summary.summary_lines(summary)))
        for release, reports in compared:
            click.echo(
                f"  release {release.released_on.isoformat()} {release.label!r}, all runs, "
                f"{DEFAULT_WEEKS} weeks each side (runrecord compare METRIC --at DATE for details):"
            )
            for report in reports:
                click.echo(f"    {comparison_line(report)}")
        if check is not None:
            click.echo("\n".join(alerts.check_lines(check)))
    if not_compared is not None:
        raise RunrecordError(
            f"the rates are stored; comparing them around the releases failed: {not_compared}"
        )


@main.command("hash-password")
@click.option(
    "--password-stdin",
    is_flag=True,
    help="Read the password from the first line of stdin instead of asking for it twice.",
)
def hash_password_command(password_stdin: bool) -> None:
    """Print the hash of an administrator password for RUNRECORD_ADMIN_PASSWORD_HASH (never the password)."""
    from adapters.passwords import hash_password

    stored = hash_password(_password(from_stdin=password_stdin))
    click.echo(stored)
    click.echo(f"export RUNRECORD_ADMIN_PASSWORD_HASH='{stored}'", err=True)


def _failed(job: str, where: str, message: str) -> RunrecordError:
    """A job's failure, naming the database once: a database error's message ("deriving outcomes on URL
    failed: …") is said by the job's name."""
    said = f" on {where} failed: "
    return RunrecordError(f"{job}{said}{message.split(said, 1)[-1]}")


def _password(*, from_stdin: bool) -> str:
    """The password from the first line of stdin, or typed twice on the terminal: UTF-8 text, not empty."""
    try:
        password = _first_line_of_stdin() if from_stdin else _typed_password()
    except UnicodeDecodeError as error:  # bytes that are not UTF-8, decoded here or by a strict stream
        raise RunrecordError("the password is not UTF-8 text") from error
    if not settings.is_utf8(password):  # the same bytes, handed on as surrogates by a lenient stream
        raise RunrecordError("the password is not UTF-8 text")
    if not password.strip():
        said = "an empty password" if not password else "a password of white space alone"
        raise RunrecordError(f"{said} cannot be an administrator password")
    return password


def _first_line_of_stdin() -> str:
    line = None if sys.stdin is None else sys.stdin.buffer.readline()  # None: stdin is closed
    if not line:
        state = "closed" if line is None else "empty"
        raise RunrecordError(
            f"no password given: stdin is {state} (--password-stdin reads the password from its first line)"
        )
    # A file saved by some editors begins with a byte order mark: a mark of the file, not of the password.
    return line.decode("utf-8-sig").rstrip("\r\n")


def _typed_password() -> str:
    import getpass
    import warnings

    with warnings.catch_warnings():
        # Without a terminal, getpass warns and reads the password from stdin, shown as it is typed.
        warnings.simplefilter("error", getpass.GetPassWarning)
        try:
            return str(click.prompt("Administrator password", hide_input=True, confirmation_prompt=True))
        except (UnicodeDecodeError, Terminated):
            # getpass ends the prompt's line only once it has read a line: the error would follow the prompt.
            if sys.stderr.isatty():
                click.echo(err=True)
            raise
        except getpass.GetPassWarning as error:
            raise RunrecordError(
                "no terminal to ask for the password on: give it on the first line of stdin with "
                "--password-stdin"
            ) from error
        except click.Abort as error:  # the input ended, or Ctrl-C, before the password was typed twice
            raise RunrecordError(
                "no password given (hash-password asks for it twice; --password-stdin reads it from the "
                "first line of stdin)"
            ) from error


if __name__ == "__main__":  # the last statement: a command defined below it would be missing
    run()
