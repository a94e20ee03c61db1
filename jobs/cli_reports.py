"""The `runrecord` commands that read what the jobs stored: release markers, comparisons, survival, alerts."""

from __future__ import annotations

import json

import click

from adapters import settings
from adapters.errors import RunrecordError
from core.table_names import MAX_RECORD_UID
from jobs.cli_options import CommandGroup, creating_db_option, db_option, existing_database, parse_now
from jobs.cli_values import (
    checked_configuration,
    checked_day,
    checked_group,
    checked_rate_metric,
    now_option,
    parse_any_group,
    parse_configuration,
    parse_day,
    parse_rate_metric,
    parse_sides,
)


@click.group("release", cls=CommandGroup)  # its commands' errors name them
def release_group() -> None:
    """Dated markers (a release, a prompt change) that rates are compared across."""


@release_group.command("add")
@click.argument("date_text", metavar="DATE", callback=checked_day, is_eager=True)
@click.argument("label")
@db_option
def release_add_command(date_text: str, label: str, db_url: str) -> None:
    """Record a marker: DATE (YYYY-MM-DD) and LABEL."""
    from adapters.database import make_engine
    from jobs.releases import add_release
    from jobs.schema_setup import require_head

    day = parse_day(date_text, "DATE")
    engine = make_engine(db_url)
    try:
        require_head(engine, "release add")
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
    from jobs.schema_setup import require_head

    engine = make_engine(db_url)
    try:
        require_head(engine, "release list")
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


def _two_sides(
    _ctx: click.Context, _param: click.Parameter, value: tuple[str, str] | None
) -> tuple[str, str] | None:
    """No side of --between looks like an option. --between takes the next two words, whatever they are:
    given one side, the option after it became the second, and the mistake surfaced elsewhere."""
    for side in value or ():
        if side.startswith("-"):
            option = side.split("=", 1)[0]  # never its value: --db=URL holds a password
            raise click.BadParameter(
                f"it takes two sides, configuration:A configuration:B, and {option!r} is an option, "
                "not a side"
            )
    if value is not None:
        parse_sides(value)
    return value


@click.command("compare")
@click.argument("metric", callback=checked_rate_metric, is_eager=True)
@click.option(
    "--at",
    "at_text",
    default=None,
    help="The date (YYYY-MM-DD) the two sides meet at.",
    callback=checked_day,
    is_eager=True,
)
@click.option(
    "--between",
    "between_texts",
    nargs=2,
    default=None,
    metavar="configuration:A configuration:B",
    help="Compare configuration B against A over every closed period both have (instead of --at).",
    callback=_two_sides,
    is_eager=True,
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
    callback=checked_group,
    is_eager=True,
)
@click.option(
    "--from",
    "from_text",
    default=None,
    help="With --between: the first day (YYYY-MM-DD) of the span.",
    callback=checked_day,
    is_eager=True,
)
@click.option(
    "--to",
    "to_text",
    default=None,
    help="With --between: the last day (YYYY-MM-DD) of the span.",
    callback=checked_day,
    is_eager=True,
)
@click.option("--grain", type=click.Choice(["week", "day"]), default="week", show_default=True)
@now_option("ISO 8601 time that says which periods are still open.")
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
    from core.comparison import DEFAULT_WEEKS
    from core.comparison_text import comparison_json, comparison_text
    from core.periods import Grain
    from jobs import between, releases
    from jobs.schema_setup import require_head

    chosen = parse_rate_metric(metric, "compare")
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
        sides = parse_sides(between_texts)
        start = None if from_text is None else parse_day(from_text, "--from")
        end = None if to_text is None else parse_day(to_text, "--to")
        engine = make_engine(db_url)
        try:
            require_head(engine, "compare")
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
    group = parse_any_group("all" if group_text is None else group_text, "--group")
    assert at_text is not None  # one of the two was given
    at = parse_day(at_text, "--at")
    engine = make_engine(db_url)
    try:
        require_head(engine, "compare")
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


@click.command("survival")
@click.option(
    "--group",
    "group_text",
    default=None,
    help="configuration:IDENTIFIER: its writes only.",
    callback=checked_configuration,
    is_eager=True,
)
@click.option(
    "--between",
    "between_texts",
    nargs=2,
    default=None,
    metavar="configuration:A configuration:B",
    help="Both configurations' curves and the log-rank test between them.",
    callback=_two_sides,
    is_eager=True,
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
    from jobs.schema_setup import require_head
    from jobs.survival import survival_of

    if group_text is not None and between_texts is not None:
        raise RunrecordError("survival takes --group or --between, not both")
    groups = (
        parse_sides(between_texts)
        if between_texts is not None
        else (ALL_RUNS,)
        if group_text is None
        else (parse_configuration(group_text, "--group"),)
    )
    window_s = settings.window_seconds()
    engine = make_engine(db_url)
    try:
        require_head(engine, "survival")
        report = survival_of(engine, groups, window_s=window_s)
    finally:
        engine.dispose()
    if as_json:
        click.echo(json.dumps(survival_json(report), indent=2, ensure_ascii=False))
    else:
        click.echo("\n".join(survival_text(report)))


@click.group("alerts", cls=CommandGroup, invoke_without_command=True)
@creating_db_option  # checked below: `alerts ack ID --db URL` may name another database
@click.option("--all", "closed_too", is_flag=True, help="List the closed alerts too.")
@click.option("--json", "as_json", is_flag=True, help="Print the alerts as JSON.")
@click.pass_context
def alerts_group(ctx: click.Context, db_url: str, closed_too: bool, as_json: bool) -> None:
    """The open alerts, newest first: each rate that moved significantly after a measurement."""
    ctx.obj = db_url
    if ctx.invoked_subcommand is not None:
        return
    existing_database(None, None, db_url)
    from adapters.alerts import unreadable_line
    from adapters.database import make_engine
    from core.alert_text import alert_json, alert_line
    from jobs.alerts import list_alerts
    from jobs.schema_setup import require_head

    engine = make_engine(db_url)
    try:
        require_head(engine, "alerts")
        listed = list_alerts(engine, closed_too=closed_too)
    finally:
        engine.dispose()
    found = listed.alerts
    if as_json:
        click.echo(json.dumps([alert_json(stored) for stored in found], indent=2, ensure_ascii=False))
    elif not found and not listed.unreadable:
        click.echo(f"no {'' if closed_too else 'open '}alert (measure-rates writes one when a rate moves)")
    else:
        for stored in found:
            click.echo(alert_line(stored))
    if listed.unreadable:
        raise RunrecordError(unreadable_line(listed.unreadable))


@alerts_group.command("ack")
@click.argument("uid", metavar="ID", type=click.IntRange(1, MAX_RECORD_UID))
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
    from jobs.schema_setup import require_head

    engine = make_engine(existing_database(None, None, db_url or group_db_url))
    try:
        require_head(engine, "alerts ack")
        stored, closed = close_alert(engine, uid, now=int(parse_now(None).timestamp()))
    finally:
        engine.dispose()
    click.echo(f"{'closed' if closed else 'closed already'}: {alert_line(stored)}")
