"""A rate over time: the line, its Wilson 95% band, the denominator on hover, the release marker; one line per
group when the filter bar splits by configuration or skill.

Every chart of the page spans the filter bar's range (core.time_range), so a release line stands in the same
place on each; a period without data is a gap in the line and the band, never drawn across.

A point selected (clicked) puts a link under the chart to the Runs page with the runs its n counts
(queries.drill_down.counted_runs: that period, that group, the metric's denominator; components.drill_link),
when the chart is told its metric.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from datetime import date
from typing import Any

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from adapters.runs import RunFilter
from core.formatting import count, percent
from core.groups import Group, GroupKind
from core.periods import Grain, last_day, period_length
from core.time_range import TimeRange, periods_in
from dashboard.components import drill_link, markers
from dashboard.queries import drill_down
from dashboard.queries.rates import group_label

LINE = "#1f4e79"
BAND = "rgba(31, 78, 121, 0.18)"
# A line per group: the first is the page's own colour.
GROUP_COLOURS = ("#1f4e79", "#b85c00", "#2e7d32", "#6a1b9a", "#c62828", "#00838f", "#5d4037", "#9e9d24")
_FIGURES = ("numerator", "denominator", "low", "high", "excluded", "rate", "open")
# Where a line's point carries its period and its group's value (customdata), for the runs behind it.
_PERIOD, _GROUP_VALUE = 6, 7
SELECT_HINT = "Select a point for a link to the runs it counts."


def x_range(span: TimeRange, grain: str) -> list[str]:
    """The x-axis every chart shares: the range's first period to its last day, half a period of margin."""
    margin = period_length(Grain(grain)) / 2
    start = pd.Timestamp(span.start(Grain(grain))) - margin
    end = pd.Timestamp(span.last) + margin
    return [start.isoformat(), end.isoformat()]


def in_range(frame: pd.DataFrame, span: TimeRange, grain: str) -> pd.DataFrame:
    """The rows of the periods the range holds."""
    if frame.empty:
        return frame
    held = [span.holds(day, Grain(grain)) for day in frame["period_start"]]
    return frame[held]


def on_every_period(rows: pd.DataFrame, span: TimeRange, grain: str) -> pd.DataFrame:
    """One row per period of the range, oldest first; a period without a row has no figures (a gap)."""
    periods = pd.DataFrame({"period_start": list(periods_in(span, Grain(grain)))})
    kept = rows[[column for column in ("period_start", *_FIGURES) if column in rows.columns]]
    found = periods.merge(kept, on="period_start", how="left")
    for column in _FIGURES:  # a split by group carries no exclusions and no open periods
        if column not in found.columns:
            found[column] = None
    return found


def _runs(values: pd.Series) -> Iterator[list[int]]:
    """The positions of each run of consecutive periods with a figure."""
    current: list[int] = []
    for position, value in enumerate(values):
        if pd.isna(value):
            if current:
                yield current
            current = []
        else:
            current.append(position)
    if current:
        yield current


def _band(chart: go.Figure, rows: pd.DataFrame, x: list[str], fill: str, name: str) -> None:
    """The interval as one filled area per run of periods with data, so that no band crosses a gap."""
    for index, positions in enumerate(_runs(rows["high"])):
        xs = [x[p] for p in positions]
        chart.add_trace(
            go.Scatter(
                x=xs,
                y=rows["high"].iloc[positions],
                mode="lines",
                line={"width": 0},
                hoverinfo="skip",
                showlegend=False,
                legendgroup=name,
            )
        )
        chart.add_trace(
            go.Scatter(
                x=xs,
                y=rows["low"].iloc[positions],
                mode="lines",
                line={"width": 0},
                fill="tonexty",
                fillcolor=fill,
                name=name,
                hoverinfo="skip",
                showlegend=index == 0,
                legendgroup=name,
            )
        )


def _line(
    chart: go.Figure, rows: pd.DataFrame, x: list[str], colour: str, name: str, group_value: str
) -> None:
    opened = [bool(value) if not pd.isna(value) else False for value in rows["open"]]
    state = ["open: runs in it may still change" if is_open else "closed" for is_open in opened]
    custom = list(
        zip(
            rows["numerator"],
            rows["denominator"],
            rows["low"],
            rows["high"],
            rows["excluded"],
            state,
            x,
            [group_value] * len(x),
            strict=True,
        )
    )
    chart.add_trace(
        go.Scatter(
            x=x,
            y=rows["rate"],
            mode="lines+markers",
            connectgaps=False,
            line={"color": colour},
            marker={"symbol": ["circle-open" if is_open else "circle" for is_open in opened], "size": 8},
            name=name,
            customdata=custom,
            hovertemplate=(
                "%{x}: %{y:.1%}<br>%{customdata[0]} of %{customdata[1]}"
                "<br>95% interval %{customdata[2]:.1%} – %{customdata[3]:.1%}"
                "<br>excluded: %{customdata[4]}<br>period %{customdata[5]}<extra>%{fullData.name}</extra>"
            ),
        )
    )


def _fill(colour: str) -> str:
    red, green, blue = (int(colour[k : k + 2], 16) for k in (1, 3, 5))
    return f"rgba({red}, {green}, {blue}, 0.18)"


def group_colours(groups: Iterable[str]) -> dict[str, str]:
    """A colour for each group, the same on every chart that draws it: by the groups' names in order."""
    ordered = sorted(set(groups))
    return {group: GROUP_COLOURS[index % len(GROUP_COLOURS)] for index, group in enumerate(ordered)}


def figure(
    frame: pd.DataFrame,
    releases: pd.DataFrame,
    title: str,
    span: TimeRange,
    grain: str,
    colours: Mapping[str, str] | None = None,
) -> go.Figure:
    """The chart of one metric's rows (period_start, numerator, denominator, excluded, rate, low, high, open;
    and group, for one line per group) over the range; `colours`: each group's (group_colours), by default
    those of this chart's groups alone."""
    chart = go.Figure()
    names = sorted({str(group) for group in frame["group"]}) if "group" in frame.columns else []
    groups: list[str | None] = list(names) if names else [None]
    colours = group_colours(names) if colours is None else colours
    for group in groups:
        rows = frame if group is None else frame[frame["group"] == group]
        grouped = group is not None and "group_value" in rows.columns
        value = str(rows["group_value"].iloc[0]) if grouped else ""
        rows = on_every_period(rows, span, grain)
        x = [day.isoformat() for day in rows["period_start"]]
        colour = LINE if group is None else colours.get(str(group), GROUP_COLOURS[0])
        fill = BAND if group is None else _fill(colour)
        band = "Wilson 95% interval" if group is None else f"{group}: 95% interval"
        _band(chart, rows, x, fill, band)
        _line(chart, rows, x, colour, title if group is None else str(group), value)
    markers.add(chart, releases)
    chart.update_layout(
        title={"text": title},
        yaxis={"tickformat": ".0%", "rangemode": "tozero", "title": {"text": "rate"}},
        xaxis={"title": {"text": "period start"}, "type": "date", "range": x_range(span, grain)},
        hovermode="closest",
        margin={"t": 70, "b": 40},
        legend={"orientation": "h", "y": -0.2},
    )
    return chart


def point_runs(point: Mapping[str, Any], metric: str, grain: str, group_kind: str) -> RunFilter | None:
    """The runs behind a selected point (its period, its group, the metric's denominator); None for anything
    that is not a point of a line with a figure (a band, a release line)."""
    data = point.get("customdata")
    if not isinstance(data, list | tuple) or len(data) <= _GROUP_VALUE:
        return None
    denominator = data[1]
    if denominator is None or pd.isna(denominator):
        return None
    first = date.fromisoformat(str(data[_PERIOD])[:10])
    last = last_day(first, Grain(grain))
    kind = GroupKind(group_kind)
    group = Group(kind) if kind is GroupKind.ALL else Group(kind, str(data[_GROUP_VALUE]))
    return drill_down.counted_runs(metric, group, first, last)


def show(
    frame: pd.DataFrame,
    releases: pd.DataFrame,
    title: str,
    span: TimeRange,
    grain: str,
    *,
    key: str,
    metric: str | None = None,
    group_kind: str = GroupKind.ALL.value,
    colours: Mapping[str, str] | None = None,
) -> None:
    """The chart over the range, or a line saying the metric has no rows in it; with its `metric`, a point
    selected opens the runs it counts (`group_kind`: the kind of the frame's groups)."""
    shown = in_range(frame, span, grain)
    # That nothing has been measured at all the page says once, above every chart.
    if shown.empty or shown["rate"].isna().all():
        too_few = "shown" in shown.columns and not shown.empty and not shown["shown"].astype(bool).any()
        why = (
            "too few runs of the group, or of the runs beside it, in each period"
            if too_few
            else "no period with a figure"
        )
        st.info(f"{title}: nothing to show in this range ({why}).")
        return
    chart = figure(shown, releases, title, span, grain, colours)
    if metric is None:
        st.plotly_chart(chart, key=key, width="stretch")
    else:
        event = st.plotly_chart(chart, key=key, width="stretch", on_select="rerun", selection_mode="points")
        _runs_link(event, metric, title, grain, group_kind)
    if "group" in shown.columns:
        return
    latest = shown.sort_values("period_start").iloc[-1]
    rate = "no data" if pd.isna(latest["rate"]) else percent(float(latest["rate"]))
    st.caption(
        f"Latest period ({_day(latest['period_start'])}): {rate}, "
        f"{count(int(latest['numerator']))} of {count(int(latest['denominator']))}"
        + (f", {count(int(latest['excluded']))} excluded" if int(latest["excluded"]) else "")
        + (". Open circles: periods whose runs may still change." if bool(shown["open"].any()) else ".")
        + (f" {SELECT_HINT}" if metric is not None else "")
    )


def _runs_link(event: Any, metric: str, title: str, grain: str, group_kind: str) -> None:
    # The event is a dict (attribute access too in a served app; a test's session state holds a plain one).
    points = (event or {}).get("selection", {}).get("points", [])
    for point in points:
        chosen = point_runs(point, metric, grain, group_kind)
        if chosen is not None:
            data = point["customdata"]
            what = f"{title}, {grain} of {str(data[_PERIOD])[:10]}"
            if group_kind != GroupKind.ALL.value:
                what += f", {group_kind} {group_label(group_kind, str(data[_GROUP_VALUE]))}"
            drill_link.show(chosen, int(data[1]), what)
            return


def _day(value: date) -> str:
    return value.isoformat()
