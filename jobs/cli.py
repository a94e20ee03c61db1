"""The `runrecord` command line: one command per job, each a thin wrapper around a module of jobs/."""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

import click

from adapters import clock, settings
from adapters.errors import RunrecordError
from core.formatting import plural
from core.time import DAY_S

F = TypeVar("F", bound=Callable[..., Any])
DERIVE_JOB = "derive-outcomes"  # its name in tx_runrecord_job_run, as jobs.scheduler.JOBS names it


class _Group(click.Group):
    """Turns every RunrecordError and database error into one line on stderr and exit code 1, and a
    malformed option or argument into one line and exit code 2 (click's code for usage errors)."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except click.UsageError as error:
            command = error.ctx.command_path if error.ctx is not None else ctx.command_path
            message = " ".join(error.format_message().split())
            click.echo(f"runrecord: error: {command}: {message} (see {command} --help)", err=True)
            sys.exit(2)
        except RunrecordError as error:
            click.echo(f"runrecord: error: {error}", err=True)
            sys.exit(1)
        except Exception as error:
            if not _is_database_error(error):
                raise
            from adapters.database import one_line

            click.echo(f"runrecord: error: database: {one_line(error)}", err=True)
            sys.exit(1)


def _is_database_error(error: Exception) -> bool:
    """A SQLAlchemy error; asked without importing SQLAlchemy, which a command that raised one has loaded."""
    errors = sys.modules.get("sqlalchemy.exc")
    return errors is not None and isinstance(error, errors.SQLAlchemyError)


def _existing_database(_ctx: click.Context | None, _param: click.Parameter | None, value: str) -> str:
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
        callback=None if creates else _existing_database,
    )(function)


def _db_option_unchecked(function: F) -> F:
    return _db_option(function, creates=True)


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


@click.group(cls=_Group)
@click.version_option(package_name="runrecord")
def main() -> None:
    """What the AI chat of a TYPO3 backend actually did, and what became of it."""
    # A failed statement reaches the user as one line (adapters.database.reported); psycopg would also log
    # its own warning about the lost connection through Python's last-resort handler, a second line.
    logging.getLogger("psycopg").addHandler(logging.NullHandler())


@main.command("init-db")
@creating_db_option
@click.option(
    "--with-upstream",
    is_flag=True,
    help="Also create the missing upstream tables (for a demo or a test database, never in production).",
)
def init_db(db_url: str, with_upstream: bool) -> None:
    """Create or upgrade our tables; refuse a database without the upstream tables unless --with-upstream."""
    # Imported here: only this command needs Alembic, and every other command starts faster without it.
    from adapters.database import describe, make_engine
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
@creating_db_option
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
    from data.scenarios import ProcessingChoice
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
        progress=_progress_printer(),
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
        default=None,  # read when the command runs: a malformed setting is not a malformed option
        show_default="$RUNRECORD_DASHBOARD_PORT, else 8501",
        help="Port of the dashboard on 127.0.0.1.",
    )(function)


@main.command("dashboard")
@db_option
@_port_option
def dashboard_command(db_url: str, port: int | None) -> None:
    """Serve the dashboard on localhost until stopped (Ctrl-C)."""
    from jobs.demo import serve_dashboard

    port = settings.dashboard_port() if port is None else port
    settings.window_days()  # every page reads it: a malformed value stops here, not on each page
    settings.own_transcript_skills()  # the Conversation page reads it
    settings.admin_session_minutes()  # the administrator sign-in reads them
    settings.admin_session_secret()
    click.echo(f"dashboard on http://127.0.0.1:{port}/ (Ctrl-C stops it)")
    sys.exit(serve_dashboard(db_url, port=port))


@main.command("demo")
@creating_db_option
@_port_option
@click.option("--no-dashboard", is_flag=True, help="Build the database and run the jobs, then exit.")
def demo_command(db_url: str, port: int | None, no_dashboard: bool) -> None:
    """Build the demo installation when it is missing, run the jobs once, serve the dashboard and run the
    scheduler beside it."""
    from adapters.database import parse_url
    from jobs.demo import ensure_demo_database, prepare_demo, serve_demo
    from jobs.scheduler import SchedulerConfig

    # The settings first: a malformed one stops the demo before it builds or runs anything.
    settings.window_days()
    settings.alert_webhook()
    if not no_dashboard:
        port = settings.dashboard_port() if port is None else port
        settings.own_transcript_skills()
        settings.admin_session_minutes()
        settings.admin_session_secret()
        SchedulerConfig.from_settings()
    url = parse_url(db_url)
    report = ensure_demo_database(url, now=parse_now(None), progress=_progress_printer())
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
@click.argument("conversation", type=int)
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
@click.argument("conversation", type=int)
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
@click.option("--now", "now_text", default=None, help="ISO 8601 time to derive as of [default: now].")
@click.option(
    "--window-days",
    type=click.IntRange(min=1),
    default=None,  # read when the command runs: a malformed setting is not a malformed option
    show_default="$RUNRECORD_WINDOW_DAYS, else 7",
    help="Days after a write during which human changes count (003_…, 'A window').",
)
@click.option(
    "--batch-size",
    type=click.IntRange(min=1, max=5_000),
    default=5_000,  # jobs.derive.BATCH_SIZE: fewer commits, memory still flat (about 90 MB)
    show_default=True,
    help="Runs per batch; each batch is one transaction.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
def derive_outcomes_command(
    db_url: str, now_text: str | None, window_days: int | None, batch_size: int, as_json: bool
) -> None:
    """Derive the observed outcome of every run whose last write's window has closed (003_…)."""
    from adapters.database import describe, make_engine
    from jobs.derive import Summary, derive_outcomes, result_of, summary_lines
    from jobs.job_log import JobResult, Status, execute

    now = int(parse_now(now_text).timestamp())
    window_s = (settings.window_days() if window_days is None else window_days) * DAY_S
    engine = make_engine(db_url)
    bar = _DeriveProgressBar()
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
        raise RunrecordError(f"{DERIVE_JOB} on {describe(engine.url)} failed: {execution.result.message}")
    summary = summaries[-1]
    if as_json:
        click.echo(json.dumps(summary.to_json(), indent=2))
    else:
        click.echo("\n".join(summary_lines(summary)))


class _DeriveProgressBar:
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


@main.command("watch-conversations")
@db_option
@click.option("--now", "now_text", default=None, help="ISO 8601 time to check at [default: now].")
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
        raise RunrecordError(f"{watch.JOB} on {describe(engine.url)} failed: {execution.result.message}")
    reading = readings[-1]
    if as_json:
        click.echo(json.dumps(watch.as_json(reading), indent=2))
        return
    checked_at = watch.as_json(reading)["checked_at"]
    click.echo(f"health of {describe(engine.url)} at {checked_at}: {reading.status}")
    for line in lines(reading):
        click.echo(f"  {line}")


@main.command("scheduler")
@_db_option_unchecked
@click.option("--dry-run", is_flag=True, help="List the jobs and their next run times, then exit.")
def scheduler_command(db_url: str, dry_run: bool) -> None:
    """Run the jobs on schedule in the foreground until SIGTERM or Ctrl-C; one scheduler per database."""
    if not dry_run:  # a dry run lists the schedule and opens no database
        _existing_database(None, None, db_url)
        settings.alert_webhook()  # measure-rates POSTs its alerts there
    from adapters.database import describe, parse_url
    from jobs import scheduler

    where = describe(parse_url(db_url))
    config = scheduler.SchedulerConfig.from_settings()
    if dry_run:
        click.echo(
            f"scheduler for {where}: time zone {config.timezone.key}, misfire grace "
            f"{config.misfire_grace_s} s, lease {config.lease_s:g} s"
        )
        for planned in scheduler.plan(config, clock.now().astimezone(config.timezone)):
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
@click.option("--now", "now_text", default=None, help="ISO 8601 time to measure as of [default: now].")
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
    from jobs import alerts, measure, releases
    from jobs.job_log import JobResult, Status, execute

    now = int(parse_now(now_text).timestamp())
    window_s = settings.window_seconds()
    webhook = settings.alert_webhook()
    chosen = Grain(grain)
    engine = make_engine(db_url)
    summaries: list[measure.Summary] = []
    checks: list[alerts.AlertCheck] = []

    def work() -> JobResult:
        summaries.append(measure.measure_rates(engine, now=now, window_s=window_s, grains=(chosen,)))
        if not summaries[-1].stopped:
            checks.append(alerts.check_alerts(engine, now=now, grains=(chosen,), webhook_url=webhook))
        return alerts.with_alerts(measure.result_of(summaries[-1]), checks[-1] if checks else None)

    try:
        execution = execute(engine, measure.JOB, work)
        if execution.status is not Status.OK:
            raise RunrecordError(
                f"{measure.JOB} on {describe(engine.url)} failed: {execution.result.message}"
            )
        compared = releases.release_comparisons(engine, grain=chosen, now=now)
    finally:
        engine.dispose()
    summary = summaries[-1]
    if as_json:
        document = measure.summary_json(summary)
        document["releases"] = [
            {
                "released_on": release.released_on.isoformat(),
                "label": release.label,
                "comparisons": [comparison_json(report) for report in reports],
            }
            for release, reports in compared
        ]
        document["alerts"] = alerts.check_json(checks[-1]) if checks else None
        click.echo(json.dumps(document, indent=2, ensure_ascii=False))
        return
    click.echo("\n".join(measure.summary_lines(summary)))
    for release, reports in compared:
        click.echo(
            f"  release {release.released_on.isoformat()} {release.label!r}, all runs, "
            f"{DEFAULT_WEEKS} weeks each side (runrecord compare METRIC --at DATE for details):"
        )
        for report in reports:
            click.echo(f"    {comparison_line(report)}")
    if checks:
        click.echo("\n".join(alerts.check_lines(checks[-1])))


@main.group("release")
def release_group() -> None:
    """Dated markers (a release, a prompt change) that rates are compared across."""


@release_group.command("add")
@click.argument("date_text", metavar="DATE")
@click.argument("label")
@db_option
def release_add_command(date_text: str, label: str, db_url: str) -> None:
    """Record a marker: DATE (YYYY-MM-DD) and LABEL."""
    from adapters.database import make_engine
    from jobs.releases import add_release, parse_day

    day = parse_day(date_text, "DATE")
    engine = make_engine(db_url)
    try:
        added = add_release(engine, day, label, now=int(parse_now(None).timestamp()))
    finally:
        engine.dispose()
    click.echo(f"{'recorded' if added else 'already recorded'}: {day.isoformat()} {' '.join(label.split())}")


@release_group.command("list")
@db_option
@click.option("--json", "as_json", is_flag=True, help="Print the markers as JSON.")
def release_list_command(db_url: str, as_json: bool) -> None:
    """Every marker, oldest first."""
    from adapters.database import make_engine
    from jobs.releases import list_releases

    engine = make_engine(db_url)
    try:
        found = list_releases(engine)
    finally:
        engine.dispose()
    if as_json:
        rows = [{"released_on": r.released_on.isoformat(), "label": r.label} for r in found]
        click.echo(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    if not found:
        click.echo("no release recorded (runrecord release add DATE LABEL)")
    for release in found:
        click.echo(f"{release.released_on.isoformat()}  {release.label}")


@main.command("compare")
@click.argument("metric")
@click.option("--at", "at_text", default=None, help="The date (YYYY-MM-DD) the two sides meet at.")
@click.option(
    "--between",
    "between_texts",
    nargs=2,
    default=None,
    metavar="configuration:A configuration:B",
    help="Compare configuration B against A over every closed period both have (instead of --at).",
)
@click.option(
    "--weeks", type=click.IntRange(1, 52), default=None, help="Weeks on each side of --at.  [default: 4]"
)
@click.option(
    "--group",
    "group_text",
    default=None,
    help="With --at: all, configuration:IDENTIFIER or skill:IDENTIFIER (skill:none: conversations without "
    "a skill).  [default: all]",
)
@click.option(
    "--from", "from_text", default=None, help="With --between: the first day (YYYY-MM-DD) of the span."
)
@click.option("--to", "to_text", default=None, help="With --between: the last day (YYYY-MM-DD) of the span.")
@click.option("--grain", type=click.Choice(["week", "day"]), default="week", show_default=True)
@click.option("--now", "now_text", default=None, help="ISO 8601 time that says which periods are still open.")
@click.option("--json", "as_json", is_flag=True, help="Print the comparison as JSON.")
@db_option
def compare_command(
    metric: str,
    at_text: str | None,
    between_texts: tuple[str, str] | None,
    weeks: int | None,
    group_text: str | None,
    from_text: str | None,
    to_text: str | None,
    grain: str,
    now_text: str | None,
    as_json: bool,
    db_url: str,
) -> None:
    """METRIC before and after a date (--at), or of one configuration against another (--between): both
    sides with Wilson intervals, the difference, the test."""
    from adapters.database import make_engine
    from core.between_text import between_json, between_text
    from core.comparison import DEFAULT_WEEKS, RATE_METRICS
    from core.comparison_text import comparison_json, comparison_text
    from core.groups import parse_group
    from core.metrics import parse_metric
    from core.periods import Grain
    from jobs import between, releases

    chosen = parse_metric(metric)
    if chosen is None or chosen not in RATE_METRICS:
        names = ", ".join(m.value for m in RATE_METRICS)
        what = f"no metric {metric!r}" if chosen is None else f"{metric} is a count, not a rate"
        raise RunrecordError(f"{what}; compare takes one of: {names}")
    if (at_text is None) == (between_texts is None):
        raise RunrecordError(
            "compare takes either --at DATE or --between configuration:A configuration:B, "
            + ("not both" if at_text is not None else "and got neither")
        )
    now = int(parse_now(now_text).timestamp())
    if between_texts is not None:
        if weeks is not None or group_text is not None:
            raise RunrecordError(
                "--weeks and --group go with --at; --between sums every closed period both configurations "
                "have (bound it with --from and --to)"
            )
        sides = between.parse_sides(between_texts)
        start = None if from_text is None else releases.parse_day(from_text, "--from")
        end = None if to_text is None else releases.parse_day(to_text, "--to")
        engine = make_engine(db_url)
        try:
            found = between.compare_between(
                engine, chosen, sides, grain=Grain(grain), start=start, end=end, now=now
            )
        finally:
            engine.dispose()
        text = json.dumps(between_json(found), indent=2, ensure_ascii=False) if as_json else None
        click.echo(text or "\n".join(between_text(found)))
        return
    if from_text is not None or to_text is not None:
        raise RunrecordError("--from and --to go with --between; --at takes --weeks on each side")
    group = parse_group("all" if group_text is None else group_text)
    if group is None:
        raise RunrecordError(
            f"--group is all, configuration:IDENTIFIER or skill:IDENTIFIER, not {group_text!r}"
        )
    assert at_text is not None  # one of the two was given
    at = releases.parse_day(at_text, "--at")
    engine = make_engine(db_url)
    try:
        report = releases.compare_at(
            engine,
            chosen,
            at,
            weeks=DEFAULT_WEEKS if weeks is None else weeks,
            group=group,
            grain=Grain(grain),
            now=now,
        )
    finally:
        engine.dispose()
    if as_json:
        click.echo(json.dumps(comparison_json(report), indent=2, ensure_ascii=False))
    else:
        click.echo("\n".join(comparison_text(report)))


@main.command("survival")
@click.option("--group", "group_text", default=None, help="configuration:IDENTIFIER: its writes only.")
@click.option(
    "--between",
    "between_texts",
    nargs=2,
    default=None,
    metavar="configuration:A configuration:B",
    help="Both configurations' curves and the log-rank test between them.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the curves' marks and the test as JSON.")
@db_option
def survival_command(
    group_text: str | None, between_texts: tuple[str, str] | None, as_json: bool, db_url: str
) -> None:
    """How long AI text stays untouched: the share of derived writes no human changed yet, t after the write
    (Kaplan–Meier with its 95% band, the median, the log-rank test with --between)."""
    from adapters.database import make_engine
    from core.groups import ALL_RUNS
    from core.survival_text import survival_json, survival_text
    from jobs import between
    from jobs.survival import survival_of

    if group_text is not None and between_texts is not None:
        raise RunrecordError("survival takes --group or --between, not both")
    groups = (
        between.parse_sides(between_texts)
        if between_texts is not None
        else (ALL_RUNS,)
        if group_text is None
        else (between.parse_configuration(group_text, "--group"),)
    )
    window_s = settings.window_seconds()
    engine = make_engine(db_url)
    try:
        report = survival_of(engine, groups, window_s=window_s)
    finally:
        engine.dispose()
    if as_json:
        click.echo(json.dumps(survival_json(report), indent=2, ensure_ascii=False))
    else:
        click.echo("\n".join(survival_text(report)))


@main.group("alerts", invoke_without_command=True)
@_db_option_unchecked  # checked below: `alerts ack ID --db URL` may name another database
@click.option("--all", "closed_too", is_flag=True, help="List the closed alerts too.")
@click.option("--json", "as_json", is_flag=True, help="Print the alerts as JSON.")
@click.pass_context
def alerts_group(ctx: click.Context, db_url: str, closed_too: bool, as_json: bool) -> None:
    """The open alerts, newest first: each rate that moved significantly after a measurement."""
    ctx.obj = db_url
    if ctx.invoked_subcommand is not None:
        return
    _existing_database(None, None, db_url)
    from adapters.database import make_engine
    from core.alert_text import alert_json, alert_line
    from jobs.alerts import list_alerts

    engine = make_engine(db_url)
    try:
        found = list_alerts(engine, closed_too=closed_too)
    finally:
        engine.dispose()
    if as_json:
        click.echo(json.dumps([alert_json(stored) for stored in found], indent=2, ensure_ascii=False))
        return
    if not found:
        click.echo(f"no {'' if closed_too else 'open '}alert (measure-rates writes one when a rate moves)")
    for stored in found:
        click.echo(alert_line(stored))


@alerts_group.command("ack")
@click.argument("uid", metavar="ID", type=click.IntRange(min=1))
@click.option(
    "--db",
    "db_url",
    default=None,
    help="SQLAlchemy URL of the database [default: the one `runrecord alerts` reads].",
)
@click.pass_obj
def alerts_ack_command(group_db_url: str, uid: int, db_url: str | None) -> None:
    """Close the open alert ID (acknowledge it): it leaves `runrecord alerts` and the pages."""
    from adapters.database import make_engine
    from core.alert_text import alert_line
    from jobs.alerts import close_alert

    engine = make_engine(_existing_database(None, None, db_url or group_db_url))
    try:
        stored, closed = close_alert(engine, uid, now=int(parse_now(None).timestamp()))
    finally:
        engine.dispose()
    click.echo(f"{'closed' if closed else 'closed already'}: {alert_line(stored)}")


@main.command("hash-password")
@click.option(
    "--password-stdin",
    is_flag=True,
    help="Read the password from the first line of stdin instead of asking for it twice.",
)
def hash_password_command(password_stdin: bool) -> None:
    """Print the hash of an administrator password for RUNRECORD_ADMIN_PASSWORD_HASH (never the password)."""
    from adapters.passwords import hash_password

    if password_stdin:
        password = sys.stdin.readline().rstrip("\r\n")
    else:
        password = click.prompt("Administrator password", hide_input=True, confirmation_prompt=True)
    if not password:
        raise RunrecordError("an empty password cannot be an administrator password")
    stored = hash_password(password)
    click.echo(stored)
    click.echo(f"export RUNRECORD_ADMIN_PASSWORD_HASH='{stored}'", err=True)


if __name__ == "__main__":  # the last statement: a command defined below it would be missing
    main()
