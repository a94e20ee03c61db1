"""Values given on the command line, checked as a command starts: before it imports the modules it runs on
(SQLAlchemy and the jobs), so that a malformed one is one line at once.

The `checked_…` callbacks are given with `is_eager`: click runs them before the other options' callbacks
(--db's opens SQLAlchemy to read the URL), wherever the option stands on the command line. Each returns the
value as given; the command reads it again with its parser.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, date, datetime, time
from typing import Any

import click

from adapters import clock
from adapters.errors import RunrecordError
from core.groups import Group, GroupKind, parse_group
from core.metrics import RATES, Metric, parse_metric
from jobs.cli_options import F, parse_now


def parse_day(text: str, what: str) -> date:
    """An ISO 8601 date (YYYY-MM-DD) from 1970 up to the year 9000, as the clock's instants
    (adapters.clock.parse_instant): the weeks compared on either side of it stay in the calendar;
    RunrecordError naming `what` otherwise."""
    try:
        day = date.fromisoformat(text)
    except ValueError as error:
        raise RunrecordError(f"{what} is not a date (YYYY-MM-DD): {text!r}") from error
    clock.require_in_calendar(datetime.combine(day, time(), UTC), text, what=what)
    return day


def parse_configuration(text: str, option: str) -> Group:
    """configuration:IDENTIFIER as a group; RunrecordError naming the option otherwise."""
    group = parse_group(text)
    if group is None or group.kind is not GroupKind.CONFIGURATION or not group.value:
        raise RunrecordError(f"{option} takes configuration:IDENTIFIER, not {text!r}")
    return group


def parse_sides(texts: tuple[str, str]) -> tuple[Group, Group]:
    """The two sides of --between: two different configurations."""
    first, second = (parse_configuration(text, "--between") for text in texts)
    if first == second:
        raise RunrecordError(f"--between needs two different configurations, got {first.label} twice")
    return first, second


def parse_rate_metric(text: str, command: str) -> Metric:
    """A metric `command` compares: one of the rates (core.metrics.RATES), not a count."""
    chosen = parse_metric(text)
    if chosen is None or chosen not in RATES:
        names = ", ".join(metric.value for metric in RATES)
        what = f"no metric {text!r}" if chosen is None else f"{text} is a count, not a rate"
        raise RunrecordError(f"{what}; {command} takes one of: {names}")
    return chosen


def parse_any_group(text: str, option: str) -> Group:
    """all, configuration:IDENTIFIER or skill:IDENTIFIER as a group; RunrecordError naming the option."""
    group = parse_group(text)
    if group is None:
        raise RunrecordError(f"{option} is all, configuration:IDENTIFIER or skill:IDENTIFIER, not {text!r}")
    return group


def _name(_ctx: click.Context, param: click.Parameter) -> str:
    """How an error names the parameter: an option by its flag (--at), an argument by its metavar (DATE)."""
    if isinstance(param, click.Option):
        return param.opts[0]
    return param.metavar or param.human_readable_name


def _command(ctx: click.Context, _param: click.Parameter) -> str:
    """How an error names the command the parameter is given to (compare)."""
    return ctx.info_name or "the command"


def checked(
    parse: Callable[[str, str], object], name: Callable[[click.Context, click.Parameter], str] = _name
) -> Callable[[click.Context, click.Parameter, Any], Any]:
    """The eager callback that reads a given text with `parse(text, what an error names)` and returns it as
    given; a parameter left out (None) is not read."""

    def callback(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
        if isinstance(value, str):
            parse(value, name(ctx, param))
        return value

    return callback


checked_now = checked(lambda text, _what: parse_now(text))  # --now, an ISO 8601 time
checked_day = checked(parse_day)  # YYYY-MM-DD
checked_rate_metric = checked(parse_rate_metric, _command)  # a rate the command compares
checked_group = checked(parse_any_group)  # all, configuration:IDENTIFIER or skill:IDENTIFIER
checked_configuration = checked(parse_configuration)  # configuration:IDENTIFIER


def now_option(help_text: str) -> Callable[[F], F]:
    """A command's --now, checked as the command starts."""
    return click.option(
        "--now", "now_text", default=None, help=help_text, callback=checked_now, is_eager=True
    )
