"""Values given on the command line, checked as a command starts: before it imports the modules it runs on
(SQLAlchemy and the jobs), so that a malformed one is one line at once.

The `checked_…` callbacks are eager: click runs them before the other options' callbacks (--db's opens
SQLAlchemy to read the URL), wherever the option stands on the command line. Each returns the value as
given; the command reads it again with the parser named.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time
from typing import TypeVar

import click

from adapters import clock
from adapters.errors import RunrecordError
from core.groups import Group, GroupKind, parse_group
from core.metrics import RATES, parse_metric
from jobs.cli_options import parse_now

V = TypeVar("V")


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


def parse_rate_metric(text: str, command: str) -> None:
    """A metric `command` compares: one of the rates (core.metrics.RATES), not a count."""
    chosen = parse_metric(text)
    if chosen is None or chosen not in RATES:
        names = ", ".join(metric.value for metric in RATES)
        what = f"no metric {text!r}" if chosen is None else f"{text} is a count, not a rate"
        raise RunrecordError(f"{what}; {command} takes one of: {names}")


def parse_any_group(text: str, option: str) -> Group:
    """all, configuration:IDENTIFIER or skill:IDENTIFIER as a group; RunrecordError naming the option."""
    group = parse_group(text)
    if group is None:
        raise RunrecordError(f"{option} is all, configuration:IDENTIFIER or skill:IDENTIFIER, not {text!r}")
    return group


def _name(param: click.Parameter) -> str:
    """How an error names the parameter: an option by its flag (--at), an argument by its metavar (DATE)."""
    if isinstance(param, click.Option):
        return param.opts[0]
    return param.metavar or param.human_readable_name


def checked_now(_ctx: click.Context, _param: click.Parameter, value: V) -> V:
    """--now, an ISO 8601 time (jobs.cli_options.parse_now)."""
    if isinstance(value, str):
        parse_now(value)
    return value


def checked_day(_ctx: click.Context, param: click.Parameter, value: V) -> V:
    """A date, YYYY-MM-DD (parse_day)."""
    if isinstance(value, str):
        parse_day(value, _name(param))
    return value


def checked_rate_metric(ctx: click.Context, _param: click.Parameter, value: V) -> V:
    """A rate the command compares (parse_rate_metric)."""
    if isinstance(value, str):
        parse_rate_metric(value, ctx.info_name or "the command")
    return value


def checked_group(_ctx: click.Context, param: click.Parameter, value: V) -> V:
    """all, configuration:IDENTIFIER or skill:IDENTIFIER (parse_any_group)."""
    if isinstance(value, str):
        parse_any_group(value, _name(param))
    return value


def checked_configuration(_ctx: click.Context, param: click.Parameter, value: V) -> V:
    """configuration:IDENTIFIER (parse_configuration)."""
    if isinstance(value, str):
        parse_configuration(value, _name(param))
    return value
