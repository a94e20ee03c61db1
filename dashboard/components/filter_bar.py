"""The one filter bar of the Rates page, for every chart: the time range (core.time_range), the grain, the
group (all runs, split by configuration or skill, or one of them) and the release marker; each kept in the
URL (?range=, ?from=, ?to=, ?grain=, ?group=, ?marker=), and a value the URL holds that is none of those
offered falls back to the default without a word."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date

import pandas as pd
import streamlit as st

from core.formatting import group_text
from core.groups import Group, GroupKind, parse_group
from core.time_range import CUSTOM, DEFAULT_RANGE, RANGE_NAMES, RANGES, TimeRange, time_range
from dashboard import url_state
from dashboard.components import url_bound

ALL = GroupKind.ALL.value
KINDS = (ALL, GroupKind.CONFIGURATION.value, GroupKind.SKILL.value)
KIND_LABELS = {ALL: "all runs", "configuration": "by configuration", "skill": "by skill"}
NO_MARKER = "none"
_RANGE_LABELS = {choice.name: choice.label for choice in RANGES}


@dataclass(frozen=True)
class Filters:
    span: TimeRange
    grain: str
    group: str  # ALL, a kind (one line per configuration or skill), or one group ("configuration:X")
    marker: tuple[date, str] | None  # the release drawn on every chart and compared across

    @property
    def group_kind(self) -> str:
        """The group kind the charts read: all, configuration or skill."""
        return self.group.partition(":")[0]

    @property
    def one_group(self) -> Group | None:
        """The single configuration or skill chosen, if one is."""
        if ":" not in self.group:
            return None
        return parse_group(self.group)


def group_options(configurations: Sequence[str], skills: Sequence[str]) -> list[str]:
    """All runs, each split, then every configuration and skill by itself."""
    ones = [Group(GroupKind.CONFIGURATION, name).label for name in configurations]
    ones += [Group(GroupKind.SKILL, name).label for name in skills]
    return [*KINDS, *ones]


def group_label(option: str) -> str:
    """How the bar names a group option: "all runs", "by skill", "configuration content-assistant"."""
    if option in KIND_LABELS:
        return KIND_LABELS[option]
    group = parse_group(option)
    if group is None:
        return option
    return group_text(group)


def _marker_options(releases: pd.DataFrame) -> tuple[list[str], dict[str, tuple[date, str]]]:
    markers = {
        day.isoformat(): (day, str(label))
        for day, label in zip(releases["released_on"], releases["label"], strict=True)
    }
    return [*markers, NO_MARKER], markers


def show(
    grains: Sequence[str],
    releases: pd.DataFrame,
    groups: Sequence[str],
    *,
    today: date,
    earliest: date | None,
    key: str,
) -> Filters:
    """The bar in one row; the filters chosen (from the URL, or the defaults: the last 26 weeks, the first
    grain measured, all runs, the newest release)."""
    range_column, grain_column, group_column, marker_column = st.columns([6, 2, 3, 3])

    range_key = f"{key}_range"
    name = url_state.choice(url_state.RANGE, RANGE_NAMES, DEFAULT_RANGE)
    url_bound.bind(range_key, name)
    write = url_bound.text_param(url_state.RANGE, DEFAULT_RANGE)
    chosen = range_column.segmented_control(
        "Time range (the last …, all, or custom days)",
        RANGE_NAMES,
        format_func=_RANGE_LABELS.__getitem__,
        key=range_key,
        on_change=url_bound.changed,
        args=(range_key, write),
    )
    name = str(chosen or DEFAULT_RANGE)
    fallback = time_range(DEFAULT_RANGE, today=today, earliest=earliest)
    span = time_range(
        name,
        today=today,
        earliest=earliest,
        chosen_from=url_state.day(url_state.FROM) or fallback.first,
        chosen_to=url_state.day(url_state.TO) or fallback.last,
    )
    if name == CUSTOM:
        span = _custom(range_column, span, key=key)

    grain_key = f"{key}_grain"
    url_bound.bind(grain_key, url_state.choice(url_state.GRAIN, grains, grains[0]))
    write = url_bound.text_param(url_state.GRAIN, grains[0])
    grain = grain_column.segmented_control(
        "Grain", list(grains), key=grain_key, on_change=url_bound.changed, args=(grain_key, write)
    )

    group_key = f"{key}_group"
    url_bound.bind(group_key, url_state.choice(url_state.GROUP, groups, ALL))
    write = url_bound.text_param(url_state.GROUP, ALL)
    group = group_column.selectbox(
        "Group",
        list(groups),
        format_func=group_label,
        key=group_key,
        on_change=url_bound.changed,
        args=(group_key, write),
    )

    marker = None
    if not releases.empty:
        options, markers = _marker_options(releases)
        newest = options[-2]
        marker_key = f"{key}_marker"
        url_bound.bind(marker_key, url_state.choice(url_state.MARKER, options, newest))
        write = url_bound.text_param(url_state.MARKER, newest)
        picked = marker_column.selectbox(
            "Release marker",
            options,
            format_func=lambda day: "none" if day == NO_MARKER else f"{day} — {markers[day][1]}",
            key=marker_key,
            on_change=url_bound.changed,
            args=(marker_key, write),
        )
        marker = markers.get(str(picked or newest))
    return Filters(span, str(grain or grains[0]), str(group or ALL), marker)


def _custom(column: st.delta_generator.DeltaGenerator, span: TimeRange, *, key: str) -> TimeRange:
    """The chosen days, each kept in the URL; a pair out of order is the range already shown."""
    first, last = column.columns(2)
    chosen = []
    for widget_column, label, param, value in (
        (first, "From", url_state.FROM, span.first),
        (last, "To", url_state.TO, span.last),
    ):
        day_key = f"{key}_{param}"
        url_bound.bind(day_key, value)
        picked = widget_column.date_input(
            label,
            key=day_key,
            format="YYYY-MM-DD",
            on_change=url_bound.changed,
            args=(day_key, _day_param(param)),
        )
        chosen.append(picked if isinstance(picked, date) else value)
    return TimeRange(chosen[0], chosen[1]) if chosen[0] <= chosen[1] else span


def _day_param(param: str) -> url_bound.Write:
    def write(value: object) -> None:
        url_state.keep(param, value.isoformat() if isinstance(value, date) else None)

    return write
